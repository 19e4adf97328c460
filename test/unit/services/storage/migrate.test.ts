// The migration decision, pure: config vs introspected tables → create / unchanged / differences.
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
import { planMigration, tableDifferences } from '../../../../src/services/storage/migrate.js';
import type { DbTable } from '../../../../src/services/storage/schema-introspect.js';
import { POSTGRES_DIALECT, SQLITE_DIALECT } from '../../../../src/services/storage/sql-dialect.js';

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
      unchanged: ['blocks'],
      differences: ['table "changed": primary key is (number) in the config but (miner) in the database'],
    });
  });

  it('in checkOnly mode a missing table is a difference, not a creation', () => {
    const plan = planMigration(POSTGRES_DIALECT, { blocks: BLOCKS, other: BLOCKS }, actual, true);
    expect(plan).toEqual({
      create: [],
      unchanged: ['blocks'],
      differences: ['table "other" does not exist in the database'],
    });
  });
});
