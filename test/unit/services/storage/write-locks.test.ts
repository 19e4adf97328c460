// The advisory locks a predicate write takes on PostgreSQL (write-locks.ts, docs/storage.md): which
// region a deleteWhere covers, the lock hierarchy table → bundle → block, deterministic keys, and the
// property the whole design rests on: two writes whose rows may overlap always wait for each other,
// while writes of different blocks never do.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
import { POSTGRES_DIALECT, SQLITE_DIALECT } from '../../../../src/services/storage/sql-dialect.js';
import {
  BUNDLE_SIZE,
  MAX_BUNDLE_LOCKS,
  bundleOf,
  deleteRegion,
  lockKey,
  lockStatement,
  locksConflict,
  regionLocks,
  type WriteRegion,
} from '../../../../src/services/storage/write-locks.js';

const col = (type: 'integer' | 'bigint' | 'text') => ({ type, nullable: false });
const TRANSFERS: TableConfig = {
  columns: { chain_id: col('integer'), block_number: col('bigint'), log_idx: col('integer') },
  primaryKey: ['chain_id', 'block_number', 'log_idx'],
  blockColumn: 'block_number',
  chainColumn: 'chain_id',
};
const NO_CHAIN: TableConfig = { ...TRANSFERS, chainColumn: undefined } as TableConfig;
const NO_BLOCK: TableConfig = { columns: { tag: col('text') }, primaryKey: ['tag'] };

const block = (n: number, chain: number | null = 1, table = 't'): WriteRegion => ({
  kind: 'block',
  table,
  chain,
  block: n,
});
const range = (from: number, to: number, chain: number | null = 1, table = 't'): WriteRegion => ({
  kind: 'range',
  table,
  chain,
  from,
  to,
});
const bundleRange = (b: number): WriteRegion =>
  b === 0 ? range(0, 0) : range((b - 1) * BUNDLE_SIZE + 1, b * BUNDLE_SIZE);

describe('bundleOf', () => {
  it.each([
    [0, 0],
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [2000, 2],
    [2001, 3],
    [18_000_000, 18_000],
  ])('block %i is in bundle %i', (n, b) => {
    expect(bundleOf(n)).toBe(b);
  });
});

describe('deleteRegion', () => {
  it.each<
    [string, TableConfig, Record<string, unknown>, { from: number; to: number } | undefined, WriteRegion]
  >([
    ['block and chain pinned', TRANSFERS, { block_number: 7, chain_id: 1 }, undefined, block(7, 1, 'x')],
    ['one-element IN lists', TRANSFERS, { block_number: [7], chain_id: [1] }, undefined, block(7, 1, 'x')],
    [
      'extra filter columns narrow, never widen',
      TRANSFERS,
      { block_number: 7, chain_id: 1, log_idx: 3 },
      undefined,
      block(7, 1, 'x'),
    ],
    [
      'a range with the chain pinned',
      TRANSFERS,
      { chain_id: 2 },
      { from: 1, to: 1000 },
      range(1, 1000, 2, 'x'),
    ],
    [
      'a pinned block beats a range',
      TRANSFERS,
      { chain_id: 2, block_number: 5 },
      { from: 1, to: 9 },
      block(5, 2, 'x'),
    ],
    [
      'chain not pinned: every chain',
      TRANSFERS,
      { block_number: 7 },
      undefined,
      { kind: 'table', table: 'x' },
    ],
    [
      'several blocks',
      TRANSFERS,
      { block_number: [7, 8], chain_id: 1 },
      undefined,
      { kind: 'table', table: 'x' },
    ],
    ['nothing pinned', TRANSFERS, {}, undefined, { kind: 'table', table: 'x' }],
    ['a table without chain column', NO_CHAIN, { block_number: 7 }, undefined, block(7, null, 'x')],
    ['a table without block column', NO_BLOCK, { tag: 'a' }, undefined, { kind: 'table', table: 'x' }],
  ])('%s', (_name, table, where, blockRange, expected) => {
    expect(deleteRegion('x', table, where, blockRange)).toEqual(expected);
  });
});

describe('regionLocks', () => {
  const modes = (region: WriteRegion) =>
    regionLocks(region)
      .map((l) => `${l.exclusive ? 'X' : 'S'} ${l.label}`)
      .sort();

  it.each<[string, WriteRegion, string[]]>([
    ['block: S table, S bundle, X block', block(1500), ['S bundle t/1/2', 'S table t', 'X block t/1/1500']],
    ['genesis block is in bundle 0', block(0), ['S bundle t/1/0', 'S table t', 'X block t/1/0']],
    ['one bundle: S table, X bundle', bundleRange(3), ['S table t', 'X bundle t/1/3']],
    ['a range over two bundles', range(999, 1001), ['S table t', 'X bundle t/1/1', 'X bundle t/1/2']],
    ['an empty range locks nothing', range(10, 9), []],
    ['a whole table: X table', { kind: 'table', table: 't' }, ['X table t']],
    [
      `more than ${MAX_BUNDLE_LOCKS} bundles: X table`,
      range(1, (MAX_BUNDLE_LOCKS + 1) * BUNDLE_SIZE),
      ['X table t'],
    ],
  ])('%s', (_name, region, expected) => {
    expect(modes(region)).toEqual(expected);
  });

  it('takes the locks of one request in key order (two single-region writes never deadlock)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 20 }), (n, w) => {
        for (const region of [block(n), range(n, n + w * 100)]) {
          const keys = regionLocks(region).map((l) => l.key);
          const sorted = [...keys].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
          expect(keys).toEqual(sorted);
        }
      }),
    );
  });

  it('keys are deterministic int4 pairs, and differ by table, chain, level and number', () => {
    expect(lockKey('block', 't', 1, 5)).toEqual(lockKey('block', 't', 1, 5));
    const keys = [
      lockKey('block', 't', 1, 5),
      lockKey('block', 't', 1, 6),
      lockKey('block', 't', 2, 5),
      lockKey('block', 'u', 1, 5),
      lockKey('bundle', 't', 1, 5),
      lockKey('table', 't'),
      lockKey('table', 'u'),
    ].map((k) => k.join(':'));
    expect(new Set(keys).size).toBe(keys.length);
    fc.assert(
      fc.property(fc.string(), fc.integer(), fc.integer(), (table, chain, n) => {
        for (const k of lockKey('block', table, chain, n)) {
          expect(Number.isInteger(k)).toBe(true);
          expect(k).toBeGreaterThanOrEqual(-(2 ** 31));
          expect(k).toBeLessThan(2 ** 31);
        }
      }),
    );
    // Pinned, so a change of the derivation (which every worker must make at once) is deliberate.
    expect(lockKey('block', 'token_transfers', 1, 42)).toEqual([-1476447798, 1268685208]);
  });
});

describe('which writes wait for each other', () => {
  // Any write region of one table on chain 1 or 2: a block, a range of up to 3 bundles, or the table.
  const region: fc.Arbitrary<WriteRegion> = fc.oneof(
    fc
      .record({ n: fc.integer({ min: 0, max: 5_000 }), chain: fc.constantFrom(1, 2) })
      .map(({ n, chain }) => block(n, chain)),
    fc
      .record({
        from: fc.integer({ min: 0, max: 5_000 }),
        len: fc.integer({ min: 0, max: 3_000 }),
        chain: fc.constantFrom(1, 2),
      })
      .map(({ from, len, chain }) => range(from, from + len, chain)),
    fc.constant<WriteRegion>({ kind: 'table', table: 't' }),
  );
  const blocksOf = (r: WriteRegion): [number | string | null, number, number] | 'all' =>
    r.kind === 'table' ? 'all' : r.kind === 'block' ? [r.chain, r.block, r.block] : [r.chain, r.from, r.to];
  const overlap = (a: WriteRegion, b: WriteRegion): boolean => {
    const x = blocksOf(a);
    const y = blocksOf(b);
    if (x === 'all' || y === 'all') return true;
    return x[0] === y[0] && x[1] <= y[2] && y[1] <= x[2] && x[1] <= x[2] && y[1] <= y[2];
  };

  it('two writes that may touch the same rows always conflict (safety)', () => {
    fc.assert(
      fc.property(region, region, (a, b) => {
        if (overlap(a, b)) expect(locksConflict(regionLocks(a), regionLocks(b))).toBe(true);
      }),
      { numRuns: 2_000 },
    );
  });

  it('block writes of different blocks or chains never wait for each other', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e9 }),
        fc.integer({ min: 0, max: 1e9 }),
        fc.constantFrom(1, 2),
        (n, m, chain) => {
          fc.pre(n !== m || chain !== 1);
          expect(locksConflict(regionLocks(block(n, 1)), regionLocks(block(m, chain)))).toBe(false);
        },
      ),
    );
  });

  it.each<[string, WriteRegion, WriteRegion, boolean]>([
    ['the same block', block(5), block(5), true],
    ['a bundle and a block inside it', bundleRange(1), block(1000), true],
    ['a bundle and a block of the next bundle', bundleRange(1), block(1001), false],
    ['genesis bundle and block 0', bundleRange(0), block(0), true],
    ['two bundles', bundleRange(1), bundleRange(2), false],
    ['the same bundle', bundleRange(2), bundleRange(2), true],
    ['the same block of other tables', block(5, 1, 't'), block(5, 1, 'u'), false],
    ['a table write and any block', { kind: 'table', table: 't' }, block(123_456), true],
  ])('%s: conflict %s', (_name, a, b, expected) => {
    expect(locksConflict(regionLocks(a), regionLocks(b))).toBe(expected);
  });
});

describe('lockStatement', () => {
  it('is one SELECT of the lock functions in the given order on PostgreSQL', () => {
    const locks = regionLocks(block(1500));
    const stmt = lockStatement(POSTGRES_DIALECT, locks);
    const calls = locks.map(
      (l) =>
        `${l.exclusive ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared'}(${l.key[0]}, ${l.key[1]})`,
    );
    expect(stmt).toEqual({ sql: `SELECT ${calls.join(', ')}`, params: [] });
  });

  it('is nothing on SQLite (BEGIN IMMEDIATE: one writer) or for no locks', () => {
    expect(lockStatement(SQLITE_DIALECT, regionLocks(block(1)))).toBeUndefined();
    expect(lockStatement(POSTGRES_DIALECT, [])).toBeUndefined();
  });
});
