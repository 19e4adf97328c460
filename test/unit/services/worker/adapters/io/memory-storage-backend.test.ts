// The fake backend's own contract, so the scope tests above rest on a faithful port implementation.
import { describe, expect, it } from 'vitest';
import { collect, harness, rejection } from './fixture.js';

describe('MemoryStorageBackend', () => {
  it('scans in primary key order, page by page, honouring where (IN), blockRange, columns and limit', async () => {
    const { backend } = harness({ batchSize: 2 });
    const pages = await collect(backend.scan('blocks', { where: { chain_id: [1, 3] }, columns: ['hash'] }));
    expect(pages).toEqual([[{ hash: '0xa' }, { hash: '0xb' }], [{ hash: '0xc' }]]);
    const ranged = await collect(
      backend.scan('blocks', { blockRange: { from: 10, to: 10 }, limit: 2, batchSize: 5 }),
    );
    expect(ranged.flat().map((r) => r.hash)).toEqual(['0xa', '0xb']);
  });

  it('rejects unknown tables, columns and bad keys with the port codes', async () => {
    const { backend } = harness();
    expect(await rejection(backend.get('nope', {}))).toMatchObject({ code: 'UNKNOWN_TABLE' });
    expect(await rejection(collect(backend.scan('blocks', { where: { x: 1 } })))).toMatchObject({
      code: 'UNKNOWN_COLUMN',
    });
    expect(await rejection(backend.get('balances', { id: 1 }))).toMatchObject({ code: 'BAD_VALUE' });
  });

  it('applies a transaction on commit only', async () => {
    const { backend } = harness();
    const err = await rejection(
      backend.transaction(async (tx) => {
        await tx.deleteWhere('balances', {});
        expect(backend.rows('balances')).toHaveLength(1);
        throw new Error('abort');
      }),
    );
    expect(err.message).toBe('abort');
    expect(backend.rows('balances')).toHaveLength(1);
  });
});
