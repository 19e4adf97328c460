// Retry scopes on virtual time: retryable storage errors are retried with backoff within the phase's
// budget, everything else leaves at once, and errors leaving the scope are classified.
import { describe, expect, it } from 'vitest';
import type { TaskIo } from '../../../../../../src/kernel/plugin-types.js';
import { StorageError } from '../../../../../../src/services/storage/errors.js';
import type { IoPhase } from '../../../../../../src/services/worker/adapters/orchestration/ports.js';
import type { MemoryOp } from '../../../../../support/memory-storage-backend.js';
import { collect, harness, rejection } from './fixture.js';

const KEY_A = { chain_id: 1, number: 10, hash: '0xa' };

/** One IO operation per backend op a failure can be injected into. */
const OPS: { name: string; failOp: MemoryOp; run: (io: TaskIo) => Promise<unknown>; phase: IoPhase }[] = [
  { name: 'get', failOp: 'get', phase: 'builder', run: (io) => io.get('blocks', KEY_A) },
  { name: 'getMany', failOp: 'getMany', phase: 'calls', run: (io) => io.getMany('blocks', [KEY_A]) },
  { name: 'scan', failOp: 'scan', phase: 'builder', run: (io) => collect(io.scan('blocks', { block: 10 })) },
  {
    name: 'transaction',
    failOp: 'transaction',
    phase: 'result',
    run: (io) =>
      io.transaction(async (tx) => {
        await tx.upsert('balances', { address: 'bob' }, { amount: '1' });
        return 'committed';
      }),
  },
];

describe('retry scopes', () => {
  it.each(OPS)(
    '$name: OVERLOADED twice then success → success with 2 retries',
    async ({ failOp, run, phase }) => {
      const { factory, backend, delays } = harness();
      const scope = await factory.open('t1');
      backend.failNext(failOp, new StorageError('OVERLOADED', 'no admission slot'), 2);
      await expect(run(scope.io(phase))).resolves.toBeDefined();
      expect(backend.calls[failOp]).toBe(3);
      expect(scope.stats().retries).toEqual({ builder: 0, calls: 0, result: 0, [phase]: 2 });
      // random 0: half of 20, then half of 40
      expect(delays).toEqual([10, 20]);
      expect(factory.stats().retries).toBe(2);
    },
  );

  it.each(OPS)(
    '$name: retries exhausted → rejects retryable, saying how many attempts',
    async ({ failOp, run, phase }) => {
      const { factory, backend } = harness();
      const scope = await factory.open('t1');
      const cause = new StorageError('CONNECTION', 'connection reset');
      backend.failNext(failOp, cause, 5);
      const err = await rejection(run(scope.io(phase)));
      expect(err).toMatchObject({ code: 'CONNECTION', retryable: true, attempts: 3, phase, cause });
      expect(err.message).toBe(`connection reset (gave up after 3 attempts in the ${phase} retry scope)`);
      expect(backend.calls[failOp]).toBe(3);
    },
  );

  it.each(OPS)(
    '$name: non-retryable BAD_VALUE → no retry, the error unchanged',
    async ({ failOp, run, phase }) => {
      const { factory, backend, delays } = harness();
      const scope = await factory.open('t1');
      const bad = new StorageError('BAD_VALUE', 'not a key');
      backend.failNext(failOp, bad);
      expect(await rejection(run(scope.io(phase)))).toBe(bad);
      expect(backend.calls[failOp]).toBe(1);
      expect(delays).toEqual([]);
    },
  );

  it('an unknown backend error is not retried and leaves as IO_FAILED with its message', async () => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    const boom = new TypeError('driver exploded');
    backend.failNext('get', boom);
    const err = await rejection(scope.io('calls').get('blocks', KEY_A));
    expect(err).toMatchObject({
      code: 'IO_FAILED',
      retryable: false,
      message: 'driver exploded',
      cause: boom,
    });
    expect(backend.calls.get).toBe(1);
  });

  it('each phase has its own budget (storage.retry.<phase>)', async () => {
    const retry = { maxAttempts: 3, initialBackoffMs: 20, maxBackoffMs: 500 };
    const { factory, backend } = harness({
      storage: {
        retry: { builder: { ...retry, maxAttempts: 1 }, calls: retry, result: { ...retry, maxAttempts: 5 } },
      },
    });
    const scope = await factory.open('t1');
    backend.failNext('get', new StorageError('OVERLOADED', 'busy'), 4);
    expect(await rejection(scope.io('builder').get('blocks', KEY_A))).toMatchObject({
      attempts: 1,
      retryable: true,
    });
    // 3 failures left: the result scope (5 attempts) gets through
    expect(await scope.io('result').get('blocks', KEY_A)).toBeDefined();
    expect(scope.stats().retries).toEqual({ builder: 0, calls: 0, result: 3 });
  });

  it('backoff grows and is capped (jitter at its top)', async () => {
    const retry = { maxAttempts: 6, initialBackoffMs: 100, maxBackoffMs: 300 };
    const { factory, backend, delays } = harness({
      storage: { retry: { builder: retry, calls: retry, result: retry } },
      random: () => 0.999999,
    });
    const scope = await factory.open('t1');
    backend.failNext('get', new StorageError('CONFLICT', 'busy'), 5);
    await scope.io('calls').get('blocks', KEY_A);
    expect(delays).toEqual([100, 200, 300, 300, 300]);
  });

  it('the result transaction is re-run entirely after a failed commit, and commits once', async () => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    backend.failNext('commit', new StorageError('CONFLICT', 'serialization failure'));
    let runs = 0;
    const result = await scope.io('result').transaction(async (tx) => {
      runs++;
      await tx.insertRows('balances', [{ address: 'carol', amount: '3' }]);
      return 'done';
    });
    expect(result).toBe('done');
    expect(runs).toBe(2);
    expect(backend.rows('balances').map((r) => r.address)).toEqual(['alice', 'carol']);
    expect(scope.stats().retries.result).toBe(1);
  });

  it('a retryable error from a write inside the transaction re-runs the transaction', async () => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    backend.failNext('insertRows', new StorageError('CONNECTION', 'reset'));
    let runs = 0;
    await scope.io('result').transaction(async (tx) => {
      runs++;
      await tx.insertRows('balances', [{ address: 'dan', amount: '1' }]);
    });
    expect(runs).toBe(2);
    expect(backend.rows('balances')).toHaveLength(2);
  });

  it("a writer's own error inside the transaction passes through unchanged, without a retry", async () => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    const own = Object.assign(new Error('writer says no'), { retryable: true });
    let runs = 0;
    const err = await rejection(
      scope.io('result').transaction(async (tx) => {
        runs++;
        await tx.insertRows('balances', [{ address: 'erin', amount: '1' }]);
        throw own;
      }),
    );
    expect(err).toBe(own);
    expect(runs).toBe(1);
    expect(backend.rows('balances')).toHaveLength(1);
  });

  it('a scan failing part-way resumes without yielding a row twice', async () => {
    const { factory, backend } = harness({ batchSize: 1 });
    const scope = await factory.open('t1');
    // page 1 ok, page 2 fails: the scan is re-run and skips the row already yielded
    backend.failNext('scanPage', new StorageError('CONNECTION', 'lost mid-scan'), 1, 1);
    const rows = await collect(scope.io('builder').scan('transactions', { block: 10 }));
    expect(rows.map((r) => `${r.block_hash}/${r.idx}`)).toEqual(['0xa/0', '0xa/1', '0xb/0']);
    expect(scope.stats().retries.builder).toBe(1);
    expect(backend.calls.scan).toBe(2);
  });
});
