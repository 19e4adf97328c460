// Reads a table's shape from each database: columns (name, type as the database reports it, upper-case;
// nullability) in column order, the primary key columns in key order, and the columns of its plain
// indexes (partial ones left out; an expression's place is ''). migrate.ts compares the result with the
// config.

import type { SqlRunner } from './sql-driver.js';

export interface DbColumn {
  readonly name: string;
  /** Upper-case, e.g. INTEGER, DOUBLE PRECISION, JSONB. */
  readonly type: string;
  readonly nullable: boolean;
}

export interface DbTable {
  readonly columns: readonly DbColumn[];
  readonly primaryKey: readonly string[];
  /** Each full-table index's columns in index order (the primary key's among them). */
  readonly indexes?: readonly (readonly string[])[];
}

/** Index rows (index, column in order) → each index's column list. */
function groupIndexes(rows: readonly Record<string, unknown>[]): string[][] {
  const byIndex = new Map<string, string[]>();
  for (const r of rows) {
    const id = String(r['index_id']);
    const cols = byIndex.get(id) ?? [];
    cols.push(typeof r['column_name'] === 'string' ? r['column_name'] : '');
    byIndex.set(id, cols);
  }
  return [...byIndex.values()];
}

export async function introspectSqlite(q: SqlRunner, table: string): Promise<DbTable | undefined> {
  const exists = await q.all({
    sql: `SELECT 1 AS found FROM sqlite_schema WHERE type = 'table' AND name = ?`,
    params: [table],
  });
  if (exists.length === 0) return undefined;
  const rows = await q.all({
    sql: `SELECT name, type, "notnull" AS not_null, pk FROM pragma_table_info(?) ORDER BY cid`,
    params: [table],
  });
  const columns = rows.map((r) => ({
    name: String(r['name']),
    type: String(r['type']).toUpperCase(),
    // SQLite lets primary key columns of a rowid table hold NULL unless declared NOT NULL.
    nullable: Number(r['not_null']) === 0,
  }));
  const primaryKey = rows
    .filter((r) => Number(r['pk']) > 0)
    .sort((a, b) => Number(a['pk']) - Number(b['pk']))
    .map((r) => String(r['name']));
  const indexes = await q.all({
    sql: `SELECT il.name AS index_id, ii.name AS column_name
            FROM pragma_index_list(?) AS il, pragma_index_info(il.name) AS ii
           WHERE il.partial = 0
           ORDER BY il.name, ii.seqno`,
    params: [table],
  });
  return { columns, primaryKey, indexes: groupIndexes(indexes) };
}

export async function introspectPostgres(q: SqlRunner, table: string): Promise<DbTable | undefined> {
  const rows = await q.all({
    sql: `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull
            FROM pg_catalog.pg_attribute a
            JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = current_schema() AND c.relname = $1 AND c.relkind IN ('r', 'p')
             AND a.attnum > 0 AND NOT a.attisdropped
           ORDER BY a.attnum`,
    params: [table],
  });
  if (rows.length === 0) return undefined;
  const pk = await q.all({
    sql: `SELECT a.attname AS name
            FROM pg_catalog.pg_index i
            JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
            JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
           WHERE n.nspname = current_schema() AND c.relname = $1 AND i.indisprimary
           ORDER BY k.ord`,
    params: [table],
  });
  const indexes = await q.all({
    sql: `SELECT i.indexrelid::text AS index_id, a.attname AS column_name
            FROM pg_catalog.pg_index i
            JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
            JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
            CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
            LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
           WHERE n.nspname = current_schema() AND c.relname = $1 AND i.indpred IS NULL
           ORDER BY i.indexrelid, k.ord`,
    params: [table],
  });
  return {
    columns: rows.map((r) => ({
      name: String(r['name']),
      type: String(r['type']).toUpperCase(),
      nullable: r['notnull'] !== true,
    })),
    primaryKey: pk.map((r) => String(r['name'])),
    indexes: groupIndexes(indexes),
  };
}
