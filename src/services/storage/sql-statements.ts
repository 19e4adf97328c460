// SQL for every storage operation, for both dialects. Values arrive validated and encoded
// (value-codec.ts); identifiers are declared table and column names, always quoted.
//
// Scans use keyset pagination: each page is `... WHERE <filters> AND (pk) > (<last key of the previous
// page>) ORDER BY pk LIMIT n`, so a page costs one index range read wherever it starts, nothing is held
// open between pages, and memory is bounded by one page whatever the table size.

import type { TableConfig } from '../../kernel/config-types.js';
import { Params, quoteIdent } from './sql-dialect.js';
import type { Dialect } from './sql-dialect.js';

export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** One predicate over encoded values. */
export type Condition =
  | { readonly kind: 'eq'; readonly column: string; readonly value: unknown }
  | { readonly kind: 'null'; readonly column: string }
  | {
      readonly kind: 'in';
      readonly column: string;
      readonly values: readonly unknown[];
      /** The filter also accepts NULL. */
      readonly orNull: boolean;
    }
  | { readonly kind: 'between'; readonly column: string; readonly from: unknown; readonly to: unknown };

function predicate(p: Params, c: Condition): string {
  const col = quoteIdent(c.column);
  switch (c.kind) {
    case 'eq':
      return `${col} = ${p.add(c.value)}`;
    case 'null':
      return `${col} IS NULL`;
    case 'in': {
      const parts: string[] = [];
      if (c.values.length === 1) parts.push(`${col} = ${p.add(c.values[0])}`);
      else if (c.values.length > 1) parts.push(`${col} IN (${c.values.map((v) => p.add(v)).join(', ')})`);
      if (c.orNull) parts.push(`${col} IS NULL`);
      if (parts.length === 0) return '1 = 0';
      return parts.length === 1 ? (parts[0] as string) : `(${parts.join(' OR ')})`;
    }
    case 'between':
      return `${col} BETWEEN ${p.add(c.from)} AND ${p.add(c.to)}`;
    default: {
      const unreachable: never = c;
      throw new Error(`unknown condition ${JSON.stringify(unreachable)}`);
    }
  }
}

function whereSql(predicates: readonly string[]): string {
  return predicates.length === 0 ? '' : ` WHERE ${predicates.join(' AND ')}`;
}

function selectList(columns: readonly string[]): string {
  return columns.map(quoteIdent).join(', ');
}

/** Rows whose primary key is one of `keys` (each: encoded values in primary key order). */
export function selectByKeys(
  dialect: Dialect,
  name: string,
  table: TableConfig,
  columns: readonly string[],
  keys: readonly (readonly unknown[])[],
): Statement {
  const p = new Params(dialect);
  const pk = table.primaryKey;
  let match: string;
  if (pk.length === 1) {
    match = `${quoteIdent(pk[0] as string)} IN (${keys.map((k) => p.add(k[0])).join(', ')})`;
  } else {
    // OR of ANDs rather than row-value IN: both dialects plan it as index lookups, and PostgreSQL
    // infers each parameter's type from its column (a VALUES list would make them text).
    match = keys
      .map((k) => `(${pk.map((c, i) => `${quoteIdent(c)} = ${p.add(k[i])}`).join(' AND ')})`)
      .join(' OR ');
  }
  return { sql: `SELECT ${selectList(columns)} FROM ${quoteIdent(name)} WHERE ${match}`, params: p.values };
}

/** Whether the filter holds `column` to one value: `= v`, IN of one value without NULL, a BETWEEN v AND v. */
function pinnedByFilter(conditions: readonly Condition[], column: string): boolean {
  return conditions.some(
    (c) =>
      c.column === column &&
      (c.kind === 'eq' ||
        (c.kind === 'in' && c.values.length === 1 && !c.orNull) ||
        (c.kind === 'between' && c.from === c.to)),
  );
}

/**
 * One page of a scan, after the encoded primary key `after` (the previous page's last row). `extra`:
 * select-list items after the columns, as SQL (row-json.ts).
 */
export function scanPage(
  dialect: Dialect,
  name: string,
  table: TableConfig,
  columns: readonly string[],
  conditions: readonly Condition[],
  after: readonly unknown[] | undefined,
  limit: number,
  extra: readonly string[] = [],
): Statement {
  const p = new Params(dialect);
  const pk = table.primaryKey;
  // Leading key columns pinned to one value by the filter are equal on every row of the scan: they stay
  // out of the keyset comparison. With them in, SQLite seeks by the pinned prefix only and reads every
  // earlier row again on each page (quadratic scans); without, it seeks straight to `after`.
  let pinned = 0;
  while (pinned < pk.length - 1 && pinnedByFilter(conditions, pk[pinned] as string)) pinned++;
  const boundCols = pk.slice(pinned);
  const predicates = conditions.map((c) => {
    if (c.kind !== 'between') return predicate(p, c);
    // A range of one value is an equality: the planner then seeks by the whole key prefix instead of
    // picking a (chain, block) index and sorting the block's rows for every page.
    if (c.from === c.to) return predicate(p, { kind: 'eq', column: c.column, value: c.from });
    // After the first page the keyset bound implies the lower end (the bound's first column is at least
    // the previous page's value, itself ≥ from); left out, SQLite seeks by the bound instead of
    // re-reading the range from its start on every page.
    if (after !== undefined && c.column === boundCols[0]) return `${quoteIdent(c.column)} <= ${p.add(c.to)}`;
    return predicate(p, c);
  });
  if (after !== undefined) {
    const vals = after.slice(pinned);
    predicates.push(
      boundCols.length === 1
        ? `${quoteIdent(boundCols[0] as string)} > ${p.add(vals[0])}`
        : `(${boundCols.map(quoteIdent).join(', ')}) > (${vals.map((v) => p.add(v)).join(', ')})`,
    );
  }
  // The limit is a validated positive integer, inlined: LIMIT takes no typed parameter in SQLite.
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new RangeError(`bad page size ${limit}`);
  const sql =
    `SELECT ${[selectList(columns), ...extra].join(', ')} FROM ${quoteIdent(name)}${whereSql(predicates)}` +
    ` ORDER BY ${pk.map(quoteIdent).join(', ')} LIMIT ${limit}`;
  return { sql, params: p.values };
}

/** How many rows of `columnCount` values one INSERT carries: within the parameter limit and the row cap. */
export function rowsPerInsert(dialect: Dialect, columnCount: number): number {
  const byParams = Math.floor(dialect.maxParams / Math.max(1, columnCount));
  return Math.max(1, Math.min(dialect.maxRowsPerInsert, byParams));
}

/** The conflict clause of an upsert: DO UPDATE SET every non-key column (DO NOTHING when there is none). */
function onConflict(table: TableConfig, columns: readonly string[]): string {
  const others = columns.filter((c) => !table.primaryKey.includes(c));
  const action =
    others.length === 0
      ? 'DO NOTHING'
      : `DO UPDATE SET ${others.map((c) => `${quoteIdent(c)} = excluded.${quoteIdent(c)}`).join(', ')}`;
  return `ON CONFLICT (${table.primaryKey.map(quoteIdent).join(', ')}) ${action}`;
}

/**
 * The SQL of a multi-row upsert of `rowCount` rows: INSERT ... VALUES (row), ... ON CONFLICT (pk) DO
 * UPDATE SET every other column. Its parameters are the rows' encoded values, row after row in
 * `columns` order, with no two rows sharing a key on PostgreSQL (it refuses to update one row twice in
 * one statement; SQLite applies the rows in order, so the last of equal keys wins).
 */
export function insertRowsSql(
  dialect: Dialect,
  name: string,
  table: TableConfig,
  columns: readonly string[],
  rowCount: number,
): string {
  const p = new Params(dialect);
  const rows: string[] = [];
  for (let r = 0; r < rowCount; r++) rows.push(`(${columns.map(() => p.add(undefined)).join(', ')})`);
  return `INSERT INTO ${quoteIdent(name)} (${selectList(columns)}) VALUES ${rows.join(', ')} ${onConflict(table, columns)}`;
}

/** A multi-row upsert of `rows` (encoded values for every declared column, in `columns` order). */
export function insertRows(
  dialect: Dialect,
  name: string,
  table: TableConfig,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
): Statement {
  return { sql: insertRowsSql(dialect, name, table, columns, rows.length), params: rows.flat() };
}

/**
 * The statements of a PostgreSQL bulk upsert through a staging table (postgres-backend.ts copyFrom):
 * COPY the rows into a session-local temporary table shaped like the target, then upsert them from it
 * in one INSERT ... SELECT. The staging table is created once per connection and emptied at every
 * commit; `truncate` empties it within a transaction that stages the same table twice.
 */
export function stagedUpsert(
  name: string,
  stage: string,
  table: TableConfig,
  columns: readonly string[],
): { create: string; truncate: string; copy: string; upsert: string } {
  const s = quoteIdent(stage);
  const list = selectList(columns);
  return {
    create: `CREATE TEMPORARY TABLE IF NOT EXISTS ${s} (LIKE ${quoteIdent(name)}) ON COMMIT DELETE ROWS`,
    truncate: `TRUNCATE ${s}`,
    copy: `COPY ${s} (${list}) FROM STDIN`,
    upsert: `INSERT INTO ${quoteIdent(name)} (${list}) SELECT ${list} FROM ${s} ${onConflict(table, columns)}`,
  };
}

/** DELETE the row with this encoded primary key. */
export function deleteByKey(
  dialect: Dialect,
  name: string,
  table: TableConfig,
  key: readonly unknown[],
): Statement {
  const p = new Params(dialect);
  const match = table.primaryKey.map((c, i) => `${quoteIdent(c)} = ${p.add(key[i])}`).join(' AND ');
  return { sql: `DELETE FROM ${quoteIdent(name)} WHERE ${match}`, params: p.values };
}

/** DELETE every row matching all conditions (every row when there are none). */
export function deleteWhere(dialect: Dialect, name: string, conditions: readonly Condition[]): Statement {
  const p = new Params(dialect);
  const predicates = conditions.map((c) => predicate(p, c));
  return { sql: `DELETE FROM ${quoteIdent(name)}${whereSql(predicates)}`, params: p.values };
}
