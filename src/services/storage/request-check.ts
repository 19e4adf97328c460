// Checks every request against the declared tables before any SQL runs: an unknown table or column is
// UNKNOWN_TABLE / UNKNOWN_COLUMN, a bad key, value, filter or option is BAD_VALUE naming the column.
// Valid values come out encoded for the backend (value-codec.ts), in primary key or declaration order.

import type { ColumnConfig, TableConfig } from '../../kernel/config-types.js';
import { StorageError, StorageErrorCode } from './errors.js';
import { keyProblems, ownValue, rowProblems, valueProblem } from './row-check.js';
import type { Condition } from './sql-statements.js';
import type { BackendKind, BlockRange, Row, RowFilter, RowKey, StorageScanQuery } from './types.js';
import { encodeValue } from './value-codec.js';

/** The backend a request goes to: its kind (for encoding), name (for errors) and tables. */
export interface RequestContext {
  readonly kind: BackendKind;
  readonly backend: string;
  readonly tables: Readonly<Record<string, TableConfig>>;
}

export function badValue(ctx: RequestContext, table: string, message: string, column?: string): StorageError {
  return new StorageError(StorageErrorCode.BAD_VALUE, message, {
    table,
    backend: ctx.backend,
    ...(column === undefined ? {} : { column }),
  });
}

export function tableOf(ctx: RequestContext, name: string): TableConfig {
  const table = Object.hasOwn(ctx.tables, name) ? ctx.tables[name] : undefined;
  if (table === undefined)
    throw new StorageError(
      StorageErrorCode.UNKNOWN_TABLE,
      `table "${name}" is not declared in the config (declared: ${Object.keys(ctx.tables).join(', ') || 'none'})`,
      { table: name, backend: ctx.backend },
    );
  return table;
}

function columnOf(ctx: RequestContext, name: string, table: TableConfig, column: string): ColumnConfig {
  const decl = Object.hasOwn(table.columns, column) ? table.columns[column] : undefined;
  if (decl === undefined)
    throw new StorageError(StorageErrorCode.UNKNOWN_COLUMN, `table "${name}" has no column "${column}"`, {
      table: name,
      column,
      backend: ctx.backend,
    });
  return decl;
}

/** Throws UNKNOWN_COLUMN for the first undeclared column of `record`. */
function requireKnownColumns(ctx: RequestContext, name: string, table: TableConfig, record: object): void {
  for (const column of Object.keys(record)) columnOf(ctx, name, table, column);
}

function requireObject(ctx: RequestContext, name: string, what: string, value: unknown): object {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw badValue(ctx, name, `${what} of table "${name}" must be an object`);
  return value;
}

/** A primary key → its encoded values in primary key order. */
export function encodeKey(ctx: RequestContext, name: string, table: TableConfig, key: RowKey): unknown[] {
  requireKnownColumns(ctx, name, table, requireObject(ctx, name, 'a key', key));
  const problems = keyProblems(name, table, key);
  if (problems.length > 0) {
    const column =
      Object.keys(key).find((c) => !table.primaryKey.includes(c)) ??
      table.primaryKey.find((c) => {
        const v = key[c];
        return (
          v === undefined ||
          v === null ||
          valueProblem((table.columns[c] as ColumnConfig).type, v) !== undefined
        );
      });
    throw badValue(ctx, name, `bad key for table "${name}": ${problems.join('; ')}`, column);
  }
  return table.primaryKey.map((c) => encodeValue(ctx.kind, (table.columns[c] as ColumnConfig).type, key[c]));
}

/** A full row → its encoded values in declaration order (an omitted nullable column is NULL). */
export function encodeRow(ctx: RequestContext, name: string, table: TableConfig, row: Row): unknown[] {
  requireKnownColumns(ctx, name, table, requireObject(ctx, name, 'a row', row));
  const problems = rowProblems(name, table, row);
  if (problems.length > 0) {
    const column = Object.entries(table.columns).find(([c, decl]) => {
      const v = ownValue(row, c);
      if (v === undefined) return !decl.nullable;
      if (v === null) return !decl.nullable;
      return valueProblem(decl.type, v) !== undefined;
    })?.[0];
    throw badValue(ctx, name, `bad row for table "${name}": ${problems.join('; ')}`, column);
  }
  return Object.entries(table.columns).map(([c, decl]) =>
    encodeValue(ctx.kind, decl.type, ownValue(row, c) ?? null),
  );
}

/** `key` ∪ `values` as one full row; a key column in `values` must agree with the key. */
export function mergeUpsert(
  ctx: RequestContext,
  name: string,
  table: TableConfig,
  key: RowKey,
  values: Row,
): Row {
  encodeKey(ctx, name, table, key);
  requireKnownColumns(ctx, name, table, requireObject(ctx, name, 'upsert values', values));
  for (const column of table.primaryKey) {
    const v = values[column];
    if (v !== undefined && JSON.stringify(v) !== JSON.stringify(key[column]))
      throw badValue(
        ctx,
        name,
        `upsert values give key column "${column}" another value than the key`,
        column,
      );
  }
  return { ...values, ...key };
}

/** One encoded filter value of a column, or a BAD_VALUE. */
function filterValue(
  ctx: RequestContext,
  name: string,
  column: string,
  decl: ColumnConfig,
  v: unknown,
): unknown {
  if (v === null) {
    if (!decl.nullable)
      throw badValue(ctx, name, `column "${column}" is not nullable; it cannot be filtered on null`, column);
    return null;
  }
  const problem = valueProblem(decl.type, v);
  if (problem !== undefined)
    throw badValue(ctx, name, `filter on column "${column}" (${decl.type}): ${problem}`, column);
  return encodeValue(ctx.kind, decl.type, v);
}

/** A filter (equality; an array means "any of") and a block range → conditions for sql-statements.ts. */
export function conditionsOf(
  ctx: RequestContext,
  name: string,
  table: TableConfig,
  where: RowFilter | undefined,
  blockRange: BlockRange | undefined,
): Condition[] {
  const out: Condition[] = [];
  for (const [column, value] of Object.entries(
    requireObject(ctx, name, 'a filter', where ?? {}) as RowFilter,
  )) {
    const decl = columnOf(ctx, name, table, column);
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      const values = value.map((v) => filterValue(ctx, name, column, decl, v));
      out.push({
        kind: 'in',
        column,
        values: values.filter((v) => v !== null),
        orNull: values.includes(null),
      });
    } else {
      const v = filterValue(ctx, name, column, decl, value);
      out.push(v === null ? { kind: 'null', column } : { kind: 'eq', column, value: v });
    }
  }
  if (blockRange !== undefined) {
    if (table.blockColumn === undefined)
      throw badValue(ctx, name, `table "${name}" has no blockColumn; a block range cannot apply to it`);
    const { from, to } = requireObject(ctx, name, 'a block range', blockRange) as BlockRange;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to))
      throw badValue(
        ctx,
        name,
        `a block range needs integer from and to, got ${JSON.stringify(blockRange)}`,
        table.blockColumn,
      );
    const type = (table.columns[table.blockColumn] as ColumnConfig).type;
    out.push({
      kind: 'between',
      column: table.blockColumn,
      from: encodeValue(ctx.kind, type, from),
      to: encodeValue(ctx.kind, type, to),
    });
  }
  return out;
}

export interface CheckedScan {
  readonly conditions: readonly Condition[];
  /** The columns the caller gets, in declaration order. */
  readonly columns: readonly string[];
  /** The columns selected: `columns` plus the primary key (keyset pagination needs it). */
  readonly selected: readonly string[];
  readonly limit: number;
  readonly batchSize: number;
}

export function checkScan(
  ctx: RequestContext,
  name: string,
  table: TableConfig,
  query: StorageScanQuery,
  defaultBatchSize: number,
): CheckedScan {
  const conditions = conditionsOf(ctx, name, table, query.where, query.blockRange);
  const declared = Object.keys(table.columns);
  let columns = declared;
  if (query.columns !== undefined) {
    if (!Array.isArray(query.columns) || query.columns.length === 0)
      throw badValue(ctx, name, `columns must be a non-empty array of column names`);
    for (const c of query.columns) columnOf(ctx, name, table, String(c));
    columns = declared.filter((c) => query.columns?.includes(c));
  }
  const limit = query.limit ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw badValue(ctx, name, `limit must be an integer >= 0, got ${String(limit)}`);
  const batchSize = query.batchSize ?? defaultBatchSize;
  if (!Number.isSafeInteger(batchSize) || batchSize <= 0)
    throw badValue(ctx, name, `batchSize must be an integer > 0, got ${String(batchSize)}`);
  const selected = declared.filter((c) => columns.includes(c) || table.primaryKey.includes(c));
  return { conditions, columns, selected, limit, batchSize };
}
