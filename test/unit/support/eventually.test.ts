// test/support/eventually.ts on fake timers: virtual time only, so nothing here sleeps.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventuallyTimeoutError, eventually, present } from '../../support/eventually.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Settles `p` (recording the outcome) while advancing virtual time by `ms`. */
async function settle<T>(p: Promise<T>, ms: number): Promise<{ value?: T; error?: unknown }> {
  const out: { value?: T; error?: unknown; done?: boolean } = {};
  p.then(
    (value) => Object.assign(out, { value, done: true }),
    (error: unknown) => Object.assign(out, { error, done: true }),
  );
  await vi.advanceTimersByTimeAsync(ms);
  if (out.done !== true) throw new Error(`still pending after ${ms} virtual ms`);
  return 'error' in out ? { error: out.error } : { value: out.value };
}

describe('eventually', () => {
  it('returns at once when the first attempt passes, without waiting', async () => {
    const fn = vi.fn(() => 42);
    expect(await settle(eventually(fn), 0)).toEqual({ value: 42 });
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['a predicate that turns true', (n: number) => n >= 3],
    [
      'an assertion that stops throwing',
      (n: number) => {
        expect(n).toBeGreaterThanOrEqual(3);
      },
    ],
    [
      'an async assertion that stops rejecting',
      async (n: number) => {
        await Promise.resolve();
        if (n < 3) throw new Error('not yet');
        return 'ok';
      },
    ],
  ])('retries %s every intervalMs', async (_name, check) => {
    let n = 0;
    const fn = vi.fn(() => check(++n));
    const out = await settle(eventually(fn, { intervalMs: 100, timeoutMs: 1_000 }), 200);
    expect(out.error).toBeUndefined();
    expect(fn).toHaveBeenCalledTimes(3); // at 0, 100 and 200 virtual ms
  });

  it('on timeout throws the message and the last failure, with the failure as cause', async () => {
    let n = 0;
    const fn = (): void => {
      throw new Error(`attempt ${++n} failed`);
    };
    const { error } = await settle(eventually(fn, { timeoutMs: 50, intervalMs: 10, message: 'the key' }), 50);
    expect(error).toBeInstanceOf(EventuallyTimeoutError);
    const e = error as EventuallyTimeoutError;
    expect(e.message).toBe(`the key: still failing after 50 ms (${n} attempts): attempt ${n} failed`);
    expect((e.cause as Error).message).toBe(`attempt ${n} failed`);
    expect(n).toBe(6); // at 0, 10, ..., 50
  });

  it('a predicate that stays false times out naming it', async () => {
    const { error } = await settle(
      eventually(() => false, { timeoutMs: 30 }),
      30,
    );
    expect((error as Error).message).toMatch(/^eventually\(\): still failing after 30 ms .*returned false$/);
  });

  it('never hangs: an attempt that never settles fails at the deadline', async () => {
    const fn = vi.fn(() => new Promise<never>(() => undefined));
    const { error } = await settle(eventually(fn, { timeoutMs: 1_000, message: 'stuck' }), 1_000);
    expect((error as Error).message).toBe(
      'stuck: still failing after 1000 ms (1 attempts): the attempt did not settle before the deadline',
    );
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('does not sleep past the deadline', async () => {
    const fn = vi.fn(() => false);
    const { error } = await settle(eventually(fn, { timeoutMs: 25, intervalMs: 1_000 }), 25);
    expect(error).toBeInstanceOf(EventuallyTimeoutError);
    expect(fn).toHaveBeenCalledTimes(2); // at 0 and at the deadline, not at 1000
  });

  it('treats undefined as a pass (an assertion block) and present() as the way to wait for a value', async () => {
    expect(
      await settle(
        eventually(() => undefined),
        0,
      ),
    ).toEqual({ value: undefined });
    let v: string | undefined;
    setTimeout(() => (v = 'there'), 30);
    const out = await settle(
      eventually(() => present(v, 'value'), { intervalMs: 10 }),
      30,
    );
    expect(out.value).toBe('there');
    expect(() => present(null, 'row')).toThrow('no row yet');
  });
});
