// The migration decision, pure: config vs introspected tables → create / unchanged / differences.
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
import {
  needsBlockIndex,
  planMigration,
  tableDifferences,
} from '../../../../src/services/storage/migrate.js';
import type { DbTable } from '../../../../src/services/storage/schema-introspect.js';
import {
  blockIndexColumns,
  POSTGRES_DIALECT,
  SQLITE_DIALECT,
} from '../../../../src/services/storage/sql-dialect.js';

const BLOCKS: TableConfig = {
  columns: {
    number: { type: 'bigint', nullable: false },
    miner: { type: 'text', nullable: false },
    extra: { type: 'json', nullable: true },
  },
  primaryKey: ['number'],
};

const PG_BLOCKS: DbTable = {
  columns: [
    { name: 'number', type: 'BIGINT', nullable: false },
    { name: 'miner', type: 'TEXT', nullable: false },
    { name: 'extra', type: 'JSONB', nullable: true },
  ],
  primaryKey: ['number'],
};

describe('tableDifferences', () => {
  it('finds none for a matching table', () => {
    expect(tableDifferences(POSTGRES_DIALECT, 'blocks', BLOCKS, PG_BLOCKS)).toEqual([]);
  });

  it('reports a type, nullability, missing and extra column and the primary key, one line each', () => {
    const actual: DbTable = {
      columns: [
        { name: 'number', type: 'BIGINT', nullable: true },
        { name: 'miner', type: 'INTEGER', nullable: false },
        { name: 'gas', type: 'BIGINT', nullable: false },
      ],
      primaryKey: ['number', 'miner'],
    };
    expect(tableDifferences(POSTGRES_DIALECT, 'blocks', BLOCKS, actual)).toEqual([
      'table "blocks": column "number" is NOT NULL in the config but nullable in the database',
      'table "blocks": column "miner" is text in the config but INTEGER in the database',
      'table "blocks": column "extra" (json) is missing from the database',
      'table "blocks": column "gas" (BIGINT) is in the database but not in the config',
      'table "blocks": primary key is (number) in the config but (number, miner) in the database',
    ]);
    expect(tableDifferences(POSTGRES_DIALECT, 'blocks', BLOCKS, { ...PG_BLOCKS, primaryKey: [] })).toEqual([
      'table "blocks": primary key is (number) in the config but there is none in the database',
    ]);
  });

  it('compares against the dialect types (SQLite stores bigint, boolean as INTEGER and json as TEXT)', () => {
    const sqlite: DbTable = {
      columns: [
        { name: 'number', type: 'INTEGER', nullable: false },
        { name: 'miner', type: 'TEXT', nullable: false },
        { name: 'extra', type: 'TEXT', nullable: true },
      ],
      primaryKey: ['number'],
    };
    expect(tableDifferences(SQLITE_DIALECT, 'blocks', BLOCKS, sqlite)).toEqual([]);
    expect(tableDifferences(POSTGRES_DIALECT, 'blocks', BLOCKS, sqlite)).toHaveLength(2);
  });
});

describe('planMigration', () => {
  const tables = { blocks: BLOCKS, other: BLOCKS, changed: BLOCKS };
  const actual = new Map<string, DbTable | undefined>([
    ['blocks', PG_BLOCKS],
    ['other', undefined],
    ['changed', { ...PG_BLOCKS, primaryKey: ['miner'] }],
  ]);

  it('creates missing tables, keeps matching ones and collects every difference', () => {
    expect(planMigration(POSTGRES_DIALECT, tables, actual, false)).toEqual({
      create: ['other'],
      index: [],
      unchanged: ['blocks'],
      differences: ['table "changed": primary key is (number) in the config but (miner) in the database'],
    });
  });

  it('in checkOnly mode a missing table is a difference, not a creation', () => {
    const plan = planMigration(POSTGRES_DIALECT, { blocks: BLOCKS, other: BLOCKS }, actual, true);
    expect(plan).toEqual({
      create: [],
      index: [],
      unchanged: ['blocks'],
      differences: ['table "other" does not exist in the database'],
    });
  });
});

describe('the block index (docs/storage.md, "Bulk writes")', () => {
  const col = (type: 'integer' | 'bigint' | 'text') => ({ type, nullable: false });
  /** A table with a chain and a block column and the given primary key. */
  const withKey = (primaryKey: string[]): TableConfig => ({
    columns: { chain_id: col('integer'), block: col('bigint'), idx: col('integer'), id: col('text') },
    primaryKey,
    blockColumn: 'block',
    chainColumn: 'chain_id',
  });
  const shapeOf = (t: TableConfig, indexes: string[][]): DbTable => ({
    columns: Object.entries(t.columns).map(([name, c]) => ({
      name,
      type: POSTGRES_DIALECT.columnType(c.type),
      nullable: false,
    })),
    primaryKey: t.primaryKey,
    indexes: [t.primaryKey, ...indexes],
  });

  it.each([
    ['a key led by (chain, block)', ['chain_id', 'block', 'idx'], [], false],
    ['a key led by (block, chain)', ['block', 'chain_id', 'idx'], [], false],
    ['a key led by the block alone', ['block', 'idx'], [], true],
    ['a key of its own, no other index', ['id'], [], true],
    ['a key of its own and the block index', ['id'], [['chain_id', 'block']], false],
    ['a key of its own and a longer index led by the pair', ['id'], [['block', 'chain_id', 'idx']], false],
    ['a key of its own and an index of the block alone', ['id'], [['block']], true],
    ['an index whose first place is an expression', ['id'], [['', 'chain_id', 'block']], true],
  ] as const)('%s: index wanted = %s', (_, key, indexes, wanted) => {
    const table = withKey([...key]);
    expect(
      needsBlockIndex(
        table,
        indexes.map((i) => [...i]),
      ),
    ).toBe(wanted);
    // New tables: by their key alone. Existing ones: by what the database has; never in checkOnly mode.
    const created = planMigration(POSTGRES_DIALECT, { t: table }, new Map([['t', undefined]]), false);
    expect(created.index).toEqual(needsBlockIndex(table, []) ? ['t'] : []);
    const existing = new Map([
      [
        't',
        shapeOf(
          table,
          indexes.map((i) => [...i]),
        ),
      ],
    ]);
    expect(planMigration(POSTGRES_DIALECT, { t: table }, existing, false).index).toEqual(wanted ? ['t'] : []);
    expect(planMigration(POSTGRES_DIALECT, { t: table }, existing, true).index).toEqual([]);
  });

  it('a table without a block column needs none; a chain-less one is indexed by its block alone', () => {
    expect(needsBlockIndex(BLOCKS, [])).toBe(false);
    const chainless: TableConfig = { ...withKey(['id']), chainColumn: undefined };
    expect(blockIndexColumns(chainless)).toEqual(['block']);
    expect(needsBlockIndex(chainless, [['block', 'idx']])).toBe(false);
  });
});
