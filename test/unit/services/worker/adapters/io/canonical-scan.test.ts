// A block number in a scan reads the canonical block of that height (docs/storage.md § Canonical
// blocks): the IO scope over a real SQLite backend, with a height that holds a canonical block and a
// non-canonical sibling, each with its own transactions.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../../../src/kernel/config-types.js';
import type { Row } from '../../../../../../src/kernel/plugin-types.js';
import { openStorage } from '../../../../../../src/services/storage/open-storage.js';
import type { StorageBackend } from '../../../../../../src/services/storage/types.js';
import { canonicalScanPlan } from '../../../../../../src/services/worker/adapters/io/canonical-block.js';
import { StorageIoScopeFactory } from '../../../../../../src/services/worker/adapters/io/index.js';
import { collect, storageConfig } from './fixture.js';

const int = { type: 'integer', nullable: false } as const;
const big = { type: 'bigint', nullable: false } as const;
const text = { type: 'text', nullable: false } as const;
const bool = { type: 'boolean', nullable: false } as const;

const TABLES: Record<string, TableConfig> = {
  blocks: {
    columns: { chain_id: int, number: big, hash: text, canonical: bool },
    primaryKey: ['chain_id', 'number', 'hash'],
    blockColumn: 'number',
    blockHashColumn: 'hash',
    chainColumn: 'chain_id',
  },
  transactions: {
    columns: { chain_id: int, block_number: big, block_hash: text, idx: int },
    primaryKey: ['chain_id', 'block_number', 'block_hash', 'idx'],
    blockColumn: 'block_number',
    blockHashColumn: 'block_hash',
    chainColumn: 'chain_id',
  },
  /** One block per height, no hash column: a scan by number is a scan by number. */
  heights: { columns: { number: big, note: text }, primaryKey: ['number'], blockColumn: 'number' },
};

const txs = (chain: number, n: number, hash: string, count: number): Row[] =>
  Array.from({ length: count }, (_, idx) => ({ chain_id: chain, block_number: n, block_hash: hash, idx }));

describe('scan {block: n} reads the canonical block', () => {
  let backend: StorageBackend;
  let factory: StorageIoScopeFactory;

  beforeEach(async () => {
    backend = await openStorage(storageConfig({ url: 'sqlite::memory:' }), TABLES, { closeDrainMs: 50 });
    await backend.migrate();
    await backend.transaction(async (tx) => {
      await tx.insertRows('blocks', [
        { chain_id: 1, number: 7, hash: '0xcanon', canonical: true },
        { chain_id: 1, number: 7, hash: '0xsibling', canonical: false },
        { chain_id: 1, number: 8, hash: '0xeight', canonical: true },
        { chain_id: 2, number: 7, hash: '0xother-chain', canonical: true },
      ]);
      await tx.insertRows('transactions', [
        ...txs(1, 7, '0xcanon', 3),
        ...txs(1, 7, '0xsibling', 2),
        ...txs(1, 8, '0xeight', 1),
        ...txs(2, 7, '0xother-chain', 4),
      ]);
      await tx.insertRows('heights', [{ number: 7, note: 'seven' }]);
    });
    factory = new StorageIoScopeFactory({
      backend,
      storage: storageConfig({ url: 'sqlite::memory:' }),
      sleep: () => Promise.resolve(),
      random: () => 0,
      now: () => 1_000,
    });
  });

  afterEach(async () => {
    await backend.close();
  });

  const scan = async (table: string, query: Record<string, unknown>): Promise<Row[]> => {
    const scope = await factory.open('t1');
    try {
      return await collect(scope.io('calls').scan(table, query));
    } finally {
      await scope.close();
    }
  };
  const hashesOf = (rows: Row[]) => [...new Set(rows.map((r) => r.block_hash ?? r.hash))].sort();

  it.each([
    ['a height with a sibling, one chain', { block: 7, where: { chain_id: 1 } }, ['0xcanon'], 3],
    ['a height, every chain', { block: 7 }, ['0xcanon', '0xother-chain'], 7],
    ['a height without a sibling', { block: 8 }, ['0xeight'], 1],
    ['a height with no block', { block: 9 }, [], 0],
    ['the sibling, by its hash', { block: '0xsibling' }, ['0xsibling'], 2],
    ['the canonical block, by its hash', { block: '0xcanon' }, ['0xcanon'], 3],
    [
      'a where that picks the hash itself',
      { block: 7, where: { block_hash: '0xsibling' } },
      ['0xsibling'],
      2,
    ],
  ])('transactions: %s', async (_name, query, hashes, count) => {
    const rows = await scan('transactions', query);
    expect(hashesOf(rows)).toEqual(hashes);
    expect(rows).toHaveLength(count);
  });

  it('the blocks table itself: only the canonical block of the height, unless where says otherwise', async () => {
    expect(hashesOf(await scan('blocks', { block: 7, where: { chain_id: 1 } }))).toEqual(['0xcanon']);
    expect(hashesOf(await scan('blocks', { block: 7, where: { chain_id: 1, canonical: false } }))).toEqual([
      '0xsibling',
    ]);
    expect(hashesOf(await scan('blocks', { block: '0xsibling' }))).toEqual(['0xsibling']);
  });

  it('a table without a hash column is scanned by number', async () => {
    expect(await scan('heights', { block: 7 })).toEqual([{ number: 7, note: 'seven' }]);
  });

  it('a limit still applies to the canonical rows', async () => {
    const rows = await scan('transactions', { block: 7, where: { chain_id: 1 }, limit: 2 });
    expect(rows.map((r) => [r.block_hash, r.idx])).toEqual([
      ['0xcanon', 0],
      ['0xcanon', 1],
    ]);
  });
});

describe('canonicalScanPlan', () => {
  it.each([
    ['no block', 'transactions', { where: { chain_id: 1 } }, 'as-is'],
    ['a hash', 'transactions', { block: '0xab' }, 'as-is'],
    ['a number on a table with a hash column', 'transactions', { block: 3 }, 'lookup'],
    ['a number on a table without one', 'heights', { block: 3 }, 'as-is'],
  ])('%s → %s', (_name, table, query, kind) => {
    expect(canonicalScanPlan(TABLES, table, query).kind).toBe(kind);
  });

  it('without a canonical column in the blocks table, a number scans every block of the height', () => {
    const { canonical: _c, ...columns } = TABLES.blocks!.columns;
    const tables = { ...TABLES, blocks: { ...TABLES.blocks!, columns } };
    expect(canonicalScanPlan(tables, 'transactions', { block: 3 })).toEqual({
      kind: 'as-is',
      query: { block: 3 },
    });
  });

  it('the lookup narrows to the chain of the scan and keeps the other options', () => {
    const plan = canonicalScanPlan(TABLES, 'transactions', { block: 3, where: { chain_id: 5 }, limit: 9 });
    if (plan.kind !== 'lookup') throw new Error('expected a lookup');
    expect(plan.query).toEqual({ where: { number: 3, canonical: true, chain_id: 5 }, columns: ['hash'] });
    expect(plan.scanFor(['0x1', '0x2'])).toEqual({
      where: { chain_id: 5, block_number: 3, block_hash: ['0x1', '0x2'] },
      limit: 9,
    });
    expect(plan.scanFor([])).toBeUndefined();
  });
});
