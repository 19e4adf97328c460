// Reading upserts out of call outputs: each output is an upsert `{table, key, values}`, an array of them,
// or null/undefined (nothing). An upsert has exactly those three fields: a table name, a non-empty key
// object (the primary key columns) and a values object. The storage layer checks the columns themselves.
import type { Row, RowKey } from 'blockx/plugin';
import { TableUpsertsError, TableUpsertsErrorCode } from './errors.js';

export interface Upsert {
  readonly table: string;
  readonly key: RowKey;
  readonly values: Row;
}

const FIELDS = new Set(['table', 'key', 'values']);

/** Every upsert of the outputs, in order; BAD_OUTPUT for the first malformed or disallowed one. */
export function collectUpserts(
  outputs: readonly unknown[],
  allowed: ReadonlySet<string> | undefined,
): Upsert[] {
  const upserts: Upsert[] = [];
  outputs.forEach((output, outputIndex) => {
    if (output === null || output === undefined) return;
    const list = Array.isArray(output) ? output : [output];
    list.forEach((item: unknown, i) => {
      const upsertIndex = Array.isArray(output) ? i : undefined;
      const fail = (problem: string, table?: string): never => {
        const where =
          upsertIndex === undefined ? `output ${outputIndex}` : `output ${outputIndex} upsert ${upsertIndex}`;
        throw new TableUpsertsError(TableUpsertsErrorCode.BAD_OUTPUT, `${where}: ${problem}`, {
          outputIndex,
          ...(upsertIndex === undefined ? {} : { upsertIndex }),
          ...(table === undefined ? {} : { table }),
        });
      };
      if (!isRecord(item))
        return fail(
          `expected an upsert {table, key, values}, an array of them or null, got ${describe(item)}`,
        );
      const extra = Object.keys(item).filter((k) => !FIELDS.has(k));
      if (extra.length)
        fail(
          `unknown upsert field(s) ${extra.map((k) => JSON.stringify(k)).join(', ')}; an upsert is {table, key, values}`,
        );
      const { table, key, values } = item;
      if (typeof table !== 'string' || table === '')
        return fail(`table must be a non-empty string, got ${describe(table)}`);
      if (!isRecord(key) || Object.keys(key).length === 0)
        return fail(`key must be an object of the primary key columns, got ${describe(key)}`, table);
      if (!isRecord(values))
        return fail(`values must be an object of columns, got ${describe(values)}`, table);
      if (allowed && !allowed.has(table))
        return fail(`table "${table}" is not in this writer's tables (${[...allowed].join(', ')})`, table);
      upserts.push({ table, key, values });
    });
  });
  return upserts;
}

/**
 * The upserts sorted by table, then by the key's canonical form (columns sorted, string values
 * case-folded so that two spellings of one hex key stay adjacent); stable, so equal keys keep their
 * output order. Every task applying upserts in this one order takes overlapping row locks in the same
 * order: no deadlocks between them.
 */
export function lockOrder(upserts: readonly Upsert[]): Upsert[] {
  const keyed = upserts.map((u) => ({ u, sortKey: JSON.stringify([u.table, canonicalKey(u.key)]) }));
  keyed.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
  return keyed.map((k) => k.u);
}

function canonicalKey(key: RowKey): unknown[] {
  return Object.keys(key)
    .sort()
    .map((column) => {
      const value = key[column];
      return [column, typeof value === 'string' ? value.toLowerCase() : value];
    });
}

// Local on purpose: a plugin package imports nothing of BlockX but blockx/plugin (docs/plugins.md), and
// blockx/plugin stays small.
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
