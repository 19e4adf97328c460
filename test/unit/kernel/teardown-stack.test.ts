// TeardownStack: LIFO, every step runs whatever the others do, failures collected, idempotent.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockxError, KernelErrorCode, TeardownError } from '../../../src/kernel/errors.js';
import { TeardownStack } from '../../../src/kernel/teardown-stack.js';

describe('TeardownStack', () => {
  it.each([
    ['no step', [], []],
    ['one step', ['a'], ['a']],
    ['three steps, last registered first', ['a', 'b', 'c'], ['c', 'b', 'a']],
  ])('%s', async (_name, names: string[], expected: string[]) => {
    const ran: string[] = [];
    const stack = new TeardownStack();
    for (const n of names) stack.defer(n, () => void ran.push(n));
    expect(stack.size).toBe(names.length);
    await stack.disposeAsync();
    expect(ran).toEqual(expected);
    expect(stack.size).toBe(0);
  });

  it('waits for each async step before the next', async () => {
    const ran: string[] = [];
    const stack = new TeardownStack();
    stack.defer('first', () => void ran.push('first'));
    stack.defer('slow', async () => {
      await new Promise((r) => setImmediate(r));
      ran.push('slow');
    });
    await stack.disposeAsync();
    expect(ran).toEqual(['slow', 'first']);
  });

  it('runs every step when some throw or reject, then rejects with all failures in run order', async () => {
    const ran: string[] = [];
    const stack = new TeardownStack();
    const boom = new Error('boom');
    stack.defer('a', () => void ran.push('a'));
    stack.defer('throws', () => {
      ran.push('throws');
      throw boom;
    });
    stack.defer('rejects', () => {
      ran.push('rejects');
      return Promise.reject(new Error('nope'));
    });
    const err = await stack.disposeAsync().catch((e: unknown) => e);
    expect(ran).toEqual(['rejects', 'throws', 'a']);
    expect(err).toBeInstanceOf(TeardownError);
    const te = err as TeardownError;
    expect(te.code).toBe(KernelErrorCode.TEARDOWN_FAILED);
    expect(te.failures.map((f) => f.step)).toEqual(['rejects', 'throws']);
    expect(te.failures[1]?.error).toBe(boom);
    expect(te.message).toBe('teardown failed in 2 step(s): rejects, throws');
  });

  it('is idempotent: a second dispose returns the same promise and runs nothing again', async () => {
    let runs = 0;
    const stack = new TeardownStack();
    stack.defer('once', () => void runs++);
    const first = stack.disposeAsync();
    const second = stack.disposeAsync();
    expect(second).toBe(first);
    await first;
    await stack.disposeAsync();
    expect(runs).toBe(1);
    expect(stack.disposed).toBe(true);
  });

  it('refuses a step registered once disposing began', () => {
    const stack = new TeardownStack();
    void stack.disposeAsync();
    expect(() => stack.defer('late', () => undefined)).toThrow(/already disposed/);
  });

  it('adopt registers close() and hands the resource back', async () => {
    const closed: string[] = [];
    const stack = new TeardownStack();
    const r = stack.adopt('server', { close: () => void closed.push('server') });
    expect(typeof r.close).toBe('function');
    await stack.disposeAsync();
    expect(closed).toEqual(['server']);
  });

  it('property: steps run once each, in reverse order; exactly the failing ones are reported', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom('ok', 'throw', 'reject'), { maxLength: 12 }),
        async (kinds) => {
          const ran: number[] = [];
          const stack = new TeardownStack();
          kinds.forEach((kind, i) =>
            stack.defer(String(i), () => {
              ran.push(i);
              if (kind === 'throw') throw new Error(String(i));
              if (kind === 'reject') return Promise.reject(new Error(String(i)));
              return undefined;
            }),
          );
          const err = await stack.disposeAsync().then(
            () => undefined,
            (e: unknown) => e as TeardownError,
          );
          const reversed = kinds.map((_, i) => i).reverse();
          expect(ran).toEqual(reversed);
          const failing = reversed.filter((i) => kinds[i] !== 'ok').map(String);
          expect(err?.failures.map((f) => f.step) ?? []).toEqual(failing);
        },
      ),
    );
  });
});

describe('TeardownError', () => {
  it('is a BlockxError; one failure becomes its cause', () => {
    const cause = new Error('x');
    const err = new TeardownError([{ step: 'storage', error: cause }]);
    expect(err).toBeInstanceOf(BlockxError);
    expect(err.cause).toBe(cause);
    expect(err.name).toBe('TeardownError');
    expect(err.code).toBe(KernelErrorCode.TEARDOWN_FAILED);
  });
});
