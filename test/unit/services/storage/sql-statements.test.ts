// The SQL both dialects get: quoting, DDL, key lookups, keyset pages, multi-row upserts, deletes.
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
import {
  createBlockIndexSql,
  createTableSql,
  POSTGRES_DIALECT,
  quoteIdent,
  SQLITE_DIALECT,
} from '../../../../src/services/storage/sql-dialect.js';
import {
  deleteByKey,
  deleteWhere,
  insertRows,
  rowsPerInsert,
  scanPage,
  selectByKeys,
} from '../../../../src/services/storage/sql-statements.js';

const ITEMS: TableConfig = {
  columns: {
    chain_id: { type: 'integer', nullable: false },
    block: { type: 'bigint', nullable: false },
    idx: { type: 'integer', nullable: false },
    data: { type: 'json', nullable: true },
  },
  primaryKey: ['chain_id', 'block', 'idx'],
  blockColumn: 'block',
  chainColumn: 'chain_id',
};
const TAGS: TableConfig = { columns: { tag: { type: 'text', nullable: false } }, primaryKey: ['tag'] };

describe('DDL', () => {
  it('quotes identifiers, doubling embedded quotes', () => {
    expect(quoteIdent('a"b')).toBe('"a""b"');
  });

  it('creates columns in declaration order with per-dialect types, NOT NULL and the primary key', () => {
    expect(createTableSql(SQLITE_DIALECT, 'items', ITEMS)).toBe(
      'CREATE TABLE "items" ("chain_id" INTEGER NOT NULL, "block" INTEGER NOT NULL, "idx" INTEGER NOT NULL, ' +
        '"data" TEXT, PRIMARY KEY ("chain_id", "block", "idx"))',
    );
    expect(createTableSql(POSTGRES_DIALECT, 'items', ITEMS)).toBe(
      'CREATE TABLE "items" ("chain_id" INTEGER NOT NULL, "block" BIGINT NOT NULL, "idx" INTEGER NOT NULL, ' +
        '"data" JSONB, PRIMARY KEY ("chain_id", "block", "idx"))',
    );
  });

  it('maps every column type per dialect', () => {
    const types = ['integer', 'bigint', 'real', 'text', 'boolean', 'json', 'bytes'] as const;
    expect(types.map((t) => SQLITE_DIALECT.columnType(t))).toEqual([
      'INTEGER',
      'INTEGER',
      'REAL',
      'TEXT',
      'INTEGER',
      'TEXT',
      'BLOB',
    ]);
    expect(types.map((t) => POSTGRES_DIALECT.columnType(t))).toEqual([
      'INTEGER',
      'BIGINT',
      'DOUBLE PRECISION',
      'TEXT',
      'BOOLEAN',
      'JSONB',
      'BYTEA',
    ]);
  });

  it('indexes (chainColumn, blockColumn), or nothing without a block column', () => {
    expect(createBlockIndexSql('items', ITEMS)).toBe(
      'CREATE INDEX IF NOT EXISTS "items_block_idx" ON "items" ("chain_id", "block")',
    );
    expect(createBlockIndexSql('items', { ...ITEMS, chainColumn: undefined })).toBe(
      'CREATE INDEX IF NOT EXISTS "items_block_idx" ON "items" ("block")',
    );
    expect(createBlockIndexSql('tags', TAGS)).toBeUndefined();
  });
});

describe('statements', () => {
  it('looks keys up with IN for one key column and OR of ANDs for a composite key', () => {
    expect(selectByKeys(SQLITE_DIALECT, 'tags', TAGS, ['tag'], [['a'], ['b']])).toEqual({
      sql: 'SELECT "tag" FROM "tags" WHERE "tag" IN (?, ?)',
      params: ['a', 'b'],
    });
    expect(
      selectByKeys(
        POSTGRES_DIALECT,
        'items',
        ITEMS,
        ['idx'],
        [
          [1, 2, 3],
          [1, 2, 4],
        ],
      ),
    ).toEqual({
      sql:
        'SELECT "idx" FROM "items" WHERE ("chain_id" = $1 AND "block" = $2 AND "idx" = $3) OR ' +
        '("chain_id" = $4 AND "block" = $5 AND "idx" = $6)',
      params: [1, 2, 3, 1, 2, 4],
    });
  });

  it('pages by keyset: filters, a row-value bound after the previous page, ORDER BY the key, LIMIT', () => {
    const first = scanPage(
      POSTGRES_DIALECT,
      'items',
      ITEMS,
      ['chain_id', 'block', 'idx'],
      [
        { kind: 'in', column: 'idx', values: [1, 2], orNull: false },
        { kind: 'between', column: 'block', from: 10, to: 20 },
      ],
      undefined,
      7,
    );
    expect(first).toEqual({
      sql:
        'SELECT "chain_id", "block", "idx" FROM "items" WHERE "idx" IN ($1, $2) AND "block" BETWEEN $3 AND $4 ' +
        'ORDER BY "chain_id", "block", "idx" LIMIT 7',
      params: [1, 2, 10, 20],
    });
    const next = scanPage(SQLITE_DIALECT, 'items', ITEMS, ['idx'], [], [1, 12, 2], 7);
    expect(next.sql).toBe(
      'SELECT "idx" FROM "items" WHERE ("chain_id", "block", "idx") > (?, ?, ?) ORDER BY "chain_id", "block", "idx" LIMIT 7',
    );
    expect(scanPage(SQLITE_DIALECT, 'tags', TAGS, ['tag'], [], ['m'], 2).sql).toBe(
      'SELECT "tag" FROM "tags" WHERE "tag" > ? ORDER BY "tag" LIMIT 2',
    );
    expect(() => scanPage(SQLITE_DIALECT, 'tags', TAGS, ['tag'], [], undefined, 0)).toThrow(RangeError);
  });

  it.each([
    [
      'chain pinned by =',
      [{ kind: 'eq', column: 'chain_id', value: 1 }],
      '("block", "idx") > (?, ?)',
      [1, 12, 2],
    ],
    [
      'chain and block pinned (the last key column always stays)',
      [
        { kind: 'eq', column: 'chain_id', value: 1 },
        { kind: 'in', column: 'block', values: [12], orNull: false },
      ],
      '"idx" > ?',
      [1, 12, 2],
    ],
    [
      'a second key column pinned but not the first: nothing dropped',
      [{ kind: 'eq', column: 'block', value: 12 }],
      '("chain_id", "block", "idx") > (?, ?, ?)',
      [12, 1, 12, 2],
    ],
    [
      'IN with two values does not pin',
      [{ kind: 'in', column: 'chain_id', values: [1, 2], orNull: false }],
      '("chain_id", "block", "idx") > (?, ?, ?)',
      [1, 2, 1, 12, 2],
    ],
  ] as const)(
    'keyset bound leaves out leading key columns the filter pins (%s): SQLite seeks, no re-reading',
    (_name, conditions, bound, params) => {
      const stmt = scanPage(SQLITE_DIALECT, 'items', ITEMS, ['idx'], conditions, [1, 12, 2], 7);
      expect(stmt.sql).toContain(`AND ${bound} ORDER BY "chain_id", "block", "idx" LIMIT 7`);
      expect(stmt.params).toEqual(params.slice(params.length - stmt.params.length));
      expect(stmt.params).toHaveLength(
        conditions.reduce((n, c) => n + ('values' in c ? c.values.length : 1), 0) +
          (bound.match(/\?/g)?.length ?? 0),
      );
    },
  );

  it('a one-block range is an equality (and pins the block); a wider range keeps only its upper end after page 1', () => {
    const chain = { kind: 'eq', column: 'chain_id', value: 1 } as const;
    const one = scanPage(
      SQLITE_DIALECT,
      'items',
      ITEMS,
      ['idx'],
      [chain, { kind: 'between', column: 'block', from: 12, to: 12 }],
      [1, 12, 2],
      7,
    );
    expect(one.sql).toContain('WHERE "chain_id" = ? AND "block" = ? AND "idx" > ? ORDER BY');
    expect(one.params).toEqual([1, 12, 2]);
    const range = [chain, { kind: 'between', column: 'block', from: 10, to: 20 } as const];
    const first = scanPage(SQLITE_DIALECT, 'items', ITEMS, ['idx'], range, undefined, 7);
    expect(first.sql).toContain('WHERE "chain_id" = ? AND "block" BETWEEN ? AND ? ORDER BY');
    const later = scanPage(SQLITE_DIALECT, 'items', ITEMS, ['idx'], range, [1, 12, 2], 7);
    // The keyset bound (block ≥ 12 > from) implies the lower end; SQLite then seeks by the bound.
    expect(later.sql).toContain(
      'WHERE "chain_id" = ? AND "block" <= ? AND ("block", "idx") > (?, ?) ORDER BY',
    );
    expect(later.params).toEqual([1, 20, 12, 2]);
  });

  it('builds null, empty-IN and IN-or-null predicates', () => {
    const stmt = deleteWhere(SQLITE_DIALECT, 'items', [
      { kind: 'null', column: 'data' },
      { kind: 'in', column: 'idx', values: [], orNull: false },
      { kind: 'in', column: 'block', values: [5], orNull: true },
      { kind: 'eq', column: 'chain_id', value: 1 },
    ]);
    expect(stmt).toEqual({
      sql: 'DELETE FROM "items" WHERE "data" IS NULL AND 1 = 0 AND ("block" = ? OR "block" IS NULL) AND "chain_id" = ?',
      params: [5, 1],
    });
    expect(deleteWhere(POSTGRES_DIALECT, 'tags', []).sql).toBe('DELETE FROM "tags"');
    expect(deleteByKey(POSTGRES_DIALECT, 'tags', TAGS, ['x'])).toEqual({
      sql: 'DELETE FROM "tags" WHERE "tag" = $1',
      params: ['x'],
    });
  });

  it('upserts many rows: DO UPDATE of the non-key columns, DO NOTHING when every column is key', () => {
    const cols = Object.keys(ITEMS.columns);
    expect(
      insertRows(POSTGRES_DIALECT, 'items', ITEMS, cols, [
        [1, 2, 3, '{}'],
        [1, 2, 4, null],
      ]),
    ).toEqual({
      sql:
        'INSERT INTO "items" ("chain_id", "block", "idx", "data") VALUES ($1, $2, $3, $4), ($5, $6, $7, $8) ' +
        'ON CONFLICT ("chain_id", "block", "idx") DO UPDATE SET "data" = excluded."data"',
      params: [1, 2, 3, '{}', 1, 2, 4, null],
    });
    expect(insertRows(SQLITE_DIALECT, 'tags', TAGS, ['tag'], [['a']]).sql).toBe(
      'INSERT INTO "tags" ("tag") VALUES (?) ON CONFLICT ("tag") DO NOTHING',
    );
  });

  it('keeps every INSERT within the host parameter limit and the row cap', () => {
    expect(rowsPerInsert(SQLITE_DIALECT, 7)).toBe(500);
    expect(rowsPerInsert(SQLITE_DIALECT, 100) * 100).toBeLessThanOrEqual(32_766);
    expect(rowsPerInsert(POSTGRES_DIALECT, 7)).toBe(9_362);
    expect(rowsPerInsert(POSTGRES_DIALECT, 3)).toBe(10_000);
    expect(rowsPerInsert(POSTGRES_DIALECT, 100_000)).toBe(1);
  });
});
