// Closing a scope cancels what is pending (backoff, admission wait, scan, transaction) with CANCELLED at
// once, and refuses everything after it; closing the factory closes every scope and refuses new ones.
import { describe, expect, it } from 'vitest';
import type { TaskIo } from '../../../../../../src/kernel/plugin-types.js';
import { StorageError } from '../../../../../../src/services/storage/errors.js';
import { StorageIoScopeFactory } from '../../../../../../src/services/worker/adapters/io/index.js';
import { MemoryStorageBackend } from '../../../../../support/memory-storage-backend.js';
import { TABLES, collect, harness, rejection, storageConfig } from './fixture.js';

const KEY_A = { chain_id: 1, number: 10, hash: '0xa' };

/** A factory whose backoff sleep never ends by itself (only the scope's abort ends it). */
function stuckInBackoff(): {
  factory: StorageIoScopeFactory;
  backend: MemoryStorageBackend;
  slept: Promise<number>;
} {
  const backend = new MemoryStorageBackend(TABLES);
  let sleeping!: (ms: number) => void;
  const slept = new Promise<number>((resolve) => (sleeping = resolve));
  const factory = new StorageIoScopeFactory({
    backend,
    storage: storageConfig(),
    sleep: (ms) => {
      sleeping(ms);
      return new Promise<void>(() => undefined); // ignores its signal on purpose: the scope must not rely on it
    },
    random: () => 0,
  });
  return { factory, backend, slept };
}

describe('closing a task IO scope', () => {
  it('cancels an operation waiting in retry backoff, promptly, with CANCELLED (not retryable)', async () => {
    const { factory, backend, slept } = stuckInBackoff();
    const scope = await factory.open('t1');
    backend.failNext('get', new StorageError('OVERLOADED', 'busy'));
    const pending = scope.io('builder').get('blocks', KEY_A);
    expect(await slept).toBe(10);
    await scope.close();
    const err = await rejection(pending);
    expect(err).toMatchObject({
      code: 'CANCELLED',
      retryable: false,
      taskId: 't1',
      phase: 'builder',
      operation: 'get',
    });
    expect(backend.calls.get).toBe(1);
  });

  const pendingCases: {
    name: string;
    hold: 'get' | 'getMany' | 'scanPage' | 'transaction';
    run: (io: TaskIo) => Promise<unknown>;
  }[] = [
    { name: 'a get waiting for admission', hold: 'get', run: (io) => io.get('blocks', KEY_A) },
    { name: 'a getMany waiting for admission', hold: 'getMany', run: (io) => io.getMany('blocks', [KEY_A]) },
    { name: 'a scan waiting for its next page', hold: 'scanPage', run: (io) => collect(io.scan('blocks')) },
    {
      name: 'a transaction waiting for admission',
      hold: 'transaction',
      run: (io) => io.transaction(async (tx) => tx.insertRows('balances', [{ address: 'x', amount: '1' }])),
    },
  ];
  it.each(pendingCases)('cancels $name', async ({ hold, run }) => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    const release = backend.hold(hold);
    const pending = run(scope.io('calls'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(backend.admission.waiting).toBe(1);
    await scope.close();
    expect(await rejection(pending)).toMatchObject({ code: 'CANCELLED', retryable: false });
    release();
    expect(backend.rows('balances')).toHaveLength(1);
  });

  it('a write issued by a writer after the scope closed is refused and nothing commits', async () => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    const pending = scope.io('result').transaction(async (tx) => {
      await scope.close();
      await tx.insertRows('balances', [{ address: 'late', amount: '1' }]);
    });
    expect(await rejection(pending)).toMatchObject({ code: 'CANCELLED' });
    expect(backend.rows('balances').map((r) => r.address)).toEqual(['alice']);
  });

  const afterClose: { op: string; run: (io: TaskIo) => Promise<unknown> }[] = [
    { op: 'get', run: (io) => io.get('blocks', KEY_A) },
    { op: 'getMany', run: (io) => io.getMany('blocks', [KEY_A]) },
    { op: 'scan', run: (io) => collect(io.scan('blocks')) },
    { op: 'transaction', run: (io) => io.transaction(async () => 1) },
  ];
  it.each(afterClose)('$op after close rejects IO_SCOPE_CLOSED without touching storage', async ({ run }) => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    const io = scope.io('builder');
    await io.get('blocks', KEY_A); // cached: a closed scope must not answer from its cache either
    const callsBefore = { ...backend.calls };
    await scope.close();
    expect(await rejection(run(io))).toMatchObject({ code: 'IO_SCOPE_CLOSED', retryable: false });
    expect(backend.calls).toEqual(callsBefore);
  });

  it('close is idempotent and forgets the scope', async () => {
    const { factory } = harness();
    const scope = await factory.open('t1');
    expect(factory.stats().openScopes).toBe(1);
    await scope.close();
    await scope.close();
    expect(scope.closed).toBe(true);
    expect(factory.stats().openScopes).toBe(0);
    expect(factory.scopeOf('t1')).toBeUndefined();
  });

  it('reopening a task id closes the stale scope; closing the stale one later leaves the new one', async () => {
    const { factory } = harness();
    const stale = await factory.open('t1');
    const fresh = await factory.open('t1');
    expect(stale.closed).toBe(true);
    await stale.close();
    expect(factory.scopeOf('t1')).toBe(fresh);
    expect(fresh.closed).toBe(false);
  });
});

describe('stopping a scan early', () => {
  it('a consumer that breaks off releases the cursor: no further page is read', async () => {
    const { factory, backend } = harness({ batchSize: 1 });
    const scope = await factory.open('t1');
    for await (const row of scope.io('builder').scan('blocks')) {
      expect(row.hash).toBe('0xa');
      break;
    }
    expect(backend.calls.scanPage).toBe(1);
    expect(backend.openScans).toBe(0);
  });
});

describe('closing the factory', () => {
  it('closes every open scope and refuses new ones (the task fails IO_SCOPE_FAILED, retryably)', async () => {
    const { factory } = harness();
    const a = await factory.open('a');
    const b = await factory.open('b');
    await factory.close();
    expect([a.closed, b.closed]).toEqual([true, true]);
    expect(factory.stats().openScopes).toBe(0);
    expect(await rejection(factory.open('c'))).toMatchObject({ code: 'IO_SCOPE_CLOSED', retryable: true });
    await factory.close();
  });
});
