// Validation of rows against a declared table, shared by the backends (before any SQL runs), the JSONL
// loader (to report bad lines by number) and the IO scope. Pure: no IO.
//
// The JSON representation of each column type (see types.ts):
//   integer, bigint → a safe integer · real → a finite number · text → string · boolean → boolean
//   json → any JSON value (not undefined) · bytes → a "0x"-prefixed even-length hex string
// A nullable column also accepts null; an omitted nullable column is null.

import type { ColumnConfig, ColumnType, TableConfig } from '../../kernel/config-types.js';

/** A bytes value: "0x" and an even number of hex digits. */
export const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})*$/;

/** Why `value` is not a valid `type` value, or undefined when it is. */
export function valueProblem(type: ColumnType, value: unknown): string | undefined {
  switch (type) {
    case 'integer':
    case 'bigint':
      return Number.isSafeInteger(value) ? undefined : `expected a safe integer, got ${describe(value)}`;
    case 'real':
      return typeof value === 'number' && Number.isFinite(value)
        ? undefined
        : `expected a finite number, got ${describe(value)}`;
    case 'text':
      return typeof value === 'string' ? undefined : `expected a string, got ${describe(value)}`;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `expected a boolean, got ${describe(value)}`;
    case 'json':
      return value === undefined ? 'expected a JSON value, got undefined' : jsonProblem(value);
    case 'bytes':
      return typeof value === 'string' && HEX_BYTES.test(value)
        ? undefined
        : `expected a 0x-prefixed hex string, got ${describe(value)}`;
    default: {
      const unreachable: never = type;
      return `unknown column type ${String(unreachable)}`;
    }
  }
}

/**
 * A row's own value of `column`: undefined when absent, even for a name Object.prototype has
 * ("constructor", "toString"), which a plain `record[column]` would read from the prototype.
 */
export function ownValue(record: Readonly<Record<string, unknown>>, column: string): unknown {
  return Object.hasOwn(record, column) ? record[column] : undefined;
}

/** Why JSON.stringify cannot write `value` (a BigInt, a cycle, a function), or undefined. */
function jsonProblem(value: unknown): string | undefined {
  try {
    return typeof JSON.stringify(value) === 'string'
      ? undefined
      : `expected a JSON value, got ${typeof value}`;
  } catch (err) {
    return `not writable as JSON: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function columnProblem(column: string, decl: ColumnConfig, value: unknown): string | undefined {
  if (value === null) return decl.nullable ? undefined : `column "${column}" is not nullable`;
  const p = valueProblem(decl.type, value);
  return p === undefined ? undefined : `column "${column}" (${decl.type}): ${p}`;
}

export interface RowCheckOptions {
  /**
   * `full` (default): every non-nullable column must be present. `partial`: only the given columns are
   * checked (filters, upsert values merged later with the key).
   */
  readonly mode?: 'full' | 'partial';
}

/** Every problem of `row` as a row of `tableName`; empty when the row is valid. */
export function rowProblems(
  tableName: string,
  table: TableConfig,
  row: unknown,
  opts: RowCheckOptions = {},
): string[] {
  if (typeof row !== 'object' || row === null || Array.isArray(row))
    return [`a row of table "${tableName}" must be an object, got ${describe(row)}`];
  const out: string[] = [];
  const record = row as Record<string, unknown>;
  for (const [column, value] of Object.entries(record)) {
    const decl = table.columns[column];
    if (decl === undefined) {
      out.push(`table "${tableName}" has no column "${column}"`);
      continue;
    }
    if (value === undefined) continue;
    const p = columnProblem(column, decl, value);
    if (p !== undefined) out.push(p);
  }
  if ((opts.mode ?? 'full') === 'full') {
    for (const [column, decl] of Object.entries(table.columns)) {
      if (ownValue(record, column) === undefined && !decl.nullable) out.push(`column "${column}" is missing`);
    }
  }
  return out;
}

/** Problems of a primary key: exactly the primary key columns, each a valid non-null value. */
export function keyProblems(tableName: string, table: TableConfig, key: unknown): string[] {
  if (typeof key !== 'object' || key === null || Array.isArray(key))
    return [
      `a key of table "${tableName}" must be an object of its primary key columns, got ${describe(key)}`,
    ];
  const record = key as Record<string, unknown>;
  const out: string[] = [];
  for (const column of Object.keys(record)) {
    if (!table.primaryKey.includes(column))
      out.push(
        `"${column}" is not a primary key column of table "${tableName}" (${table.primaryKey.join(', ')})`,
      );
  }
  for (const column of table.primaryKey) {
    const value = ownValue(record, column);
    if (value === undefined) out.push(`primary key column "${column}" is missing`);
    else {
      const decl = table.columns[column];
      if (decl !== undefined) {
        const p =
          value === null ? `primary key column "${column}" is null` : columnProblem(column, decl, value);
        if (p !== undefined) out.push(p);
      }
    }
  }
  return out;
}
