// The task-scoped read cache as the IO scope uses it: one backend read per key per task, shared across
// phases, calls and concurrent readers; misses cached; failures not; bounded; dropped by writes.
import { describe, expect, it, vi } from 'vitest';
import { StorageError } from '../../../../../../src/services/storage/errors.js';
import {
  SCAN_SEED_ROWS,
  type StorageTaskIoScope,
} from '../../../../../../src/services/worker/adapters/io/index.js';
import { collect, harness, rejection } from './fixture.js';

const KEY_A = { chain_id: 1, number: 10, hash: '0xa' };

async function open(h = harness()): Promise<{ scope: StorageTaskIoScope } & ReturnType<typeof harness>> {
  return { ...h, scope: await h.factory.open('t1') };
}

describe('task read cache', () => {
  it('reads the same key once per task, whatever the column order', async () => {
    const { scope, backend } = await open();
    const io = scope.io('builder');
    const first = await io.get('blocks', KEY_A);
    const second = await io.get('blocks', { hash: '0xa', number: 10, chain_id: 1 });
    expect(first).toEqual({ ...KEY_A, tx_count: 0 });
    expect(second).toBe(first);
    expect(backend.calls.get).toBe(1);
    expect(scope.stats()).toMatchObject({ cacheHits: 1, cacheMisses: 1 });
  });

  it('shares one in-flight read between concurrent identical gets', async () => {
    const { scope, backend } = await open();
    const release = backend.hold('get');
    const reads = [scope.io('calls').get('blocks', KEY_A), scope.io('builder').get('blocks', KEY_A)];
    release();
    const [a, b] = await Promise.all(reads);
    expect(a).toEqual(b);
    expect(backend.calls.get).toBe(1);
  });

  it('caches misses', async () => {
    const { scope, backend } = await open();
    const io = scope.io('calls');
    expect(await io.get('blocks', { ...KEY_A, hash: '0xnone' })).toBeNull();
    expect(await io.get('blocks', { ...KEY_A, hash: '0xnone' })).toBeNull();
    expect(backend.calls.get).toBe(1);
  });

  it('getMany serves cached keys from the cache and fetches only the rest, in one call', async () => {
    const { scope, backend } = await open();
    const io = scope.io('calls');
    await io.get('blocks', KEY_A);
    const spy = vi.spyOn(backend, 'getMany');
    const keyB = { ...KEY_A, hash: '0xb' };
    const missing = { ...KEY_A, hash: '0xz' };
    const rows = await io.getMany('blocks', [keyB, KEY_A, missing, keyB]);
    expect(rows.map((r) => r?.hash)).toEqual(['0xb', '0xa', undefined, '0xb']);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(spy.mock.calls[0]?.[1]).toEqual([keyB, missing]);
    // and now all of them are cached, the miss included
    await io.getMany('blocks', [keyB, missing]);
    await io.get('blocks', keyB);
    expect(backend.calls.getMany).toBe(1);
    expect(backend.calls.get).toBe(1);
  });

  it('getMany with everything cached does not call storage', async () => {
    const { scope, backend } = await open();
    const io = scope.io('calls');
    await io.get('blocks', KEY_A);
    expect(await io.getMany('blocks', [KEY_A])).toEqual([{ ...KEY_A, tx_count: 0 }]);
    expect(backend.calls.getMany).toBe(0);
  });

  it('is shared by every phase and by the executor call path', async () => {
    const { scope, backend, factory } = await open();
    await scope.io('builder').get('blocks', KEY_A);
    await scope.io('result').get('blocks', KEY_A);
    const viaCall = await factory.callIoHandler('t1', { kind: 'io', op: 'get', table: 'blocks', key: KEY_A });
    expect(viaCall).toEqual({ ...KEY_A, tx_count: 0 });
    expect(backend.calls.get).toBe(1);
    expect(factory.stats()).toMatchObject({ cacheHits: 2, cacheMisses: 1, openScopes: 1 });
  });

  it('is per task: another task reads storage again', async () => {
    const { factory, backend } = await open();
    await factory.scopeOf('t1')!.io('calls').get('blocks', KEY_A);
    await (await factory.open('t2')).io('calls').get('blocks', KEY_A);
    expect(backend.calls.get).toBe(2);
  });

  it('does not cache failures', async () => {
    const { scope, backend } = await open();
    backend.failNext('get', new StorageError('BAD_VALUE', 'injected'));
    const err = await rejection(scope.io('calls').get('blocks', KEY_A));
    expect(err.code).toBe('BAD_VALUE');
    expect(await scope.io('calls').get('blocks', KEY_A)).toBeDefined();
    expect(backend.calls.get).toBe(2);
  });

  it('is bounded by readCacheMaxEntries (least recently used evicted)', async () => {
    const { scope, backend } = await open(harness({ storage: { readCacheMaxEntries: 2 } }));
    const io = scope.io('calls');
    for (const hash of ['0xa', '0xb', '0xa', '0xc', '0xa']) await io.get('blocks', { ...KEY_A, hash });
    // a, b, (a hit), c evicts b, (a hit)
    expect(backend.calls.get).toBe(3);
    await io.get('blocks', { ...KEY_A, hash: '0xb' });
    expect(backend.calls.get).toBe(4);
    expect(scope.stats().cacheEntries).toBe(2);
  });

  it('readCacheMaxEntries 0 disables caching and sharing', async () => {
    const { scope, backend } = await open(harness({ storage: { readCacheMaxEntries: 0 } }));
    const io = scope.io('calls');
    await Promise.all([io.get('blocks', KEY_A), io.get('blocks', KEY_A)]);
    await io.getMany('blocks', [KEY_A]);
    expect(backend.calls.get).toBe(2);
    expect(backend.calls.getMany).toBe(1);
  });

  it('takes the hits of the executor read copies per task, and offers copies only while caching', async () => {
    const { factory } = await open();
    await factory.open('t2');
    expect(factory.callIoHandler.countCopyHits).toBeDefined();
    factory.callIoHandler.countCopyHits!('t1', 41);
    factory.callIoHandler.countCopyHits!('gone', 5); // a task without a scope: nothing to count
    expect(factory.scopeOf('t1')!.stats().cacheHits).toBe(41);
    expect(factory.scopeOf('t2')!.stats().cacheHits).toBe(0);
    await factory.scopeOf('t1')!.close();
    expect(factory.stats().cacheHits).toBe(41); // kept after the scope closed
    const off = harness({ storage: { readCacheMaxEntries: 0 } });
    expect(off.factory.callIoHandler.countCopyHits).toBeUndefined();
  });

  it('a committed transaction drops the cached rows of the tables it wrote, only those', async () => {
    const { scope, backend } = await open();
    const io = scope.io('result');
    expect(await io.get('balances', { address: 'alice' })).toEqual({ address: 'alice', amount: '5' });
    await io.get('blocks', KEY_A);
    await io.transaction(async (tx) => tx.upsert('balances', { address: 'alice' }, { amount: '7' }));
    expect(await io.get('balances', { address: 'alice' })).toEqual({ address: 'alice', amount: '7' });
    await io.get('blocks', KEY_A);
    expect(backend.calls.get).toBe(3);
  });

  it('full rows a scan yields seed the get cache; projected rows do not', async () => {
    const { scope, backend } = await open();
    const io = scope.io('builder');
    expect(
      await collect(io.scan('blocks', { block: 10, columns: ['hash', 'chain_id', 'number'] })),
    ).toHaveLength(3);
    await io.get('blocks', KEY_A);
    expect(backend.calls.get).toBe(1);
    expect(await collect(io.scan('blocks', { block: 11 }))).toHaveLength(1);
    expect(await io.get('blocks', { chain_id: 1, number: 11, hash: '0xc' })).toMatchObject({ hash: '0xc' });
    expect(backend.calls.get).toBe(1);
  });

  it('seeding waits for a read of the table: rows frozen at once, keyed only when a get or getMany asks', async () => {
    const { scope, backend } = await open();
    backend.seed(
      'heights',
      [1, 2, 3].map((number) => ({ number, note: `n${number}` })),
    );
    const io = scope.io('builder');
    const scanned = await collect(io.scan('heights', {}));
    expect(scanned).toHaveLength(3);
    // Frozen as they are yielded (the executor link sends a frozen row's JSON once), not yet keyed.
    expect(scanned.every((row) => Object.isFrozen(row))).toBe(true);
    expect(scope.stats().cacheEntries).toBe(0);
    const keys = scanned.map((row) => ({ number: row['number'] }));
    expect(await io.getMany('heights', keys)).toEqual(scanned);
    expect(backend.calls.getMany).toBe(0);
    expect(scope.stats().cacheEntries).toBe(scanned.length);
  });

  it('a transaction that writes a scanned table drops its rows waiting to seed; other tables keep theirs', async () => {
    const { scope, backend } = await open();
    const io = scope.io('result');
    await collect(io.scan('balances', {}));
    await collect(io.scan('blocks', { block: 10 }));
    await io.transaction(async (tx) => tx.upsert('balances', { address: 'alice' }, { amount: '7' }));
    expect(await io.get('balances', { address: 'alice' })).toEqual({ address: 'alice', amount: '7' });
    expect(backend.calls.get).toBe(1);
    await io.get('blocks', KEY_A);
    expect(backend.calls.get).toBe(1);
  });

  it(`only the first ${SCAN_SEED_ROWS} rows of a scan seed the cache (a large scan feeds calls, not gets)`, async () => {
    const { scope, backend } = await open();
    const rows = Array.from({ length: SCAN_SEED_ROWS + 20 }, (_, i) => ({ number: i, note: `n${i}` }));
    backend.seed('heights', rows);
    const io = scope.io('builder');
    expect(await collect(io.scan('heights', {}))).toHaveLength(rows.length);
    expect(await io.get('heights', { number: SCAN_SEED_ROWS - 1 })).toEqual(rows[SCAN_SEED_ROWS - 1]);
    expect(backend.calls.get).toBe(0);
    expect(await io.get('heights', { number: SCAN_SEED_ROWS })).toEqual(rows[SCAN_SEED_ROWS]);
    expect(backend.calls.get).toBe(1);
  });
});
