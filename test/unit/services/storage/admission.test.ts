// Backend admission on fake timers: FIFO hand-over, OVERLOADED after exactly waitMs, CANCELLED on
// abort (leaving the queue), CLOSED after close, idempotent releases.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Admission } from '../../../../src/services/storage/admission.js';
import { StorageError } from '../../../../src/services/storage/errors.js';

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof StorageError ? e.code : String(e)),
  );

describe('Admission', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('admits up to capacity at once, then queues; a release hands the permit to the oldest waiter', async () => {
    const a = new Admission(2, 100, 'db');
    const r1 = await a.acquire();
    await a.acquire();
    const order: string[] = [];
    const w1 = a.acquire().then((r) => (order.push('w1'), r));
    const w2 = a.acquire().then((r) => (order.push('w2'), r));
    expect(a.snapshot).toEqual({ inUse: 2, waiting: 2, capacity: 2 });
    r1();
    r1(); // idempotent: the second call frees nothing
    await w1;
    expect(order).toEqual(['w1']);
    expect(a.snapshot).toEqual({ inUse: 2, waiting: 1, capacity: 2 });
    (await w1)();
    await w2;
    expect(order).toEqual(['w1', 'w2']);
  });

  it('a waiter fails OVERLOADED (retryable) after exactly waitMs and leaves the queue', async () => {
    const a = new Admission(1, 50, 'sqlite:x.db');
    await a.acquire();
    const waiting = a.acquire().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(49);
    expect(a.snapshot.waiting).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const err = (await waiting) as StorageError;
    expect([err.code, err.retryable, err.details.backend]).toEqual(['OVERLOADED', true, 'sqlite:x.db']);
    expect(a.snapshot.waiting).toBe(0);
  });

  it('a per-call waitMs overrides the default', async () => {
    const a = new Admission(1, 1_000, 'db');
    await a.acquire();
    const waiting = codeOf(a.acquire({ waitMs: 5 }));
    await vi.advanceTimersByTimeAsync(5);
    expect(await waiting).toBe('OVERLOADED');
  });

  it('aborting while waiting fails CANCELLED at once; an aborted signal never queues', async () => {
    const a = new Admission(1, 1_000, 'db');
    const release = await a.acquire();
    const c = new AbortController();
    const waiting = codeOf(a.acquire({ signal: c.signal }));
    const behind = a.acquire();
    c.abort();
    expect(await waiting).toBe('CANCELLED');
    expect(a.snapshot.waiting).toBe(1);
    expect(await codeOf(a.acquire({ signal: AbortSignal.abort() }))).toBe('CANCELLED');
    release();
    await behind; // the permit skipped the cancelled waiter
    expect(a.snapshot).toEqual({ inUse: 1, waiting: 0, capacity: 1 });
  });

  it('a new caller never jumps the queue', async () => {
    const a = new Admission(1, 1_000, 'db');
    const release = await a.acquire();
    const first = a.acquire();
    release();
    const late = a.acquire();
    expect(a.snapshot.waiting).toBe(1);
    (await first)();
    (await late)();
    expect(a.snapshot.inUse).toBe(0);
  });

  it('close fails waiters and new callers with CLOSED; whenIdle resolves once held permits return', async () => {
    const a = new Admission(1, 1_000, 'db');
    const release = await a.acquire();
    const waiting = codeOf(a.acquire());
    let idle = false;
    void a.whenIdle().then(() => (idle = true));
    a.close();
    expect(await waiting).toBe('CLOSED');
    expect(await codeOf(a.acquire())).toBe('CLOSED');
    await Promise.resolve();
    expect(idle).toBe(false);
    release();
    await Promise.resolve();
    expect(idle).toBe(true);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new Admission(0, 1, 'db')).toThrow(RangeError);
    expect(() => new Admission(1.5, 1, 'db')).toThrow(RangeError);
  });
});
