// Translation of scans into the storage port's query (StorageScanQuery), in two steps:
//
//   SDK scan options of a call (`ctx.io.scan(table, {block: ctx.block, limit})`)  → callScanToQuery
//   ScanQuery (builders, writers, and the step above)                          → toStorageScanQuery
//
// `block` narrows a scan to one block: a number matches the table's blockColumn (every block at that
// height), a string its blockHashColumn (exactly one block). A call passes its whole block object; the
// hash is used when the table has a hash column (heights can have several blocks), else the number, and
// the block's chain_id filters the chainColumn when the table has one. Anything the IO scope does not
// know is an error naming it, never ignored.

import type { TableConfig } from '../../../../kernel/config-types.js';
import type { Row, RowFilter, ScanQuery } from '../../../../kernel/plugin-types.js';
import { StorageError, StorageErrorCode } from '../../../storage/errors.js';
import type { StorageScanQuery } from '../../../storage/types.js';
import { canonicalJson } from '../../../../kernel/canonical-json.js';
import { TaskIoError, TaskIoErrorCode } from '../../core/io/index.js';

/** The options a ScanQuery (and a call's scan options) may carry. */
export const SCAN_OPTIONS: readonly string[] = ['block', 'blockRange', 'where', 'columns', 'limit'];

/** The declared table, or UNKNOWN_TABLE. */
export function tableConfig(tables: Readonly<Record<string, TableConfig>>, table: string): TableConfig {
  const config = Object.hasOwn(tables, table) ? tables[table] : undefined;
  if (config === undefined)
    throw new StorageError(StorageErrorCode.UNKNOWN_TABLE, `unknown table "${table}"`, { table });
  return config;
}

export function toStorageScanQuery(
  table: string,
  config: TableConfig,
  query: ScanQuery = {},
): StorageScanQuery {
  const options = asOptions(table, query);
  const where: Record<string, unknown> = { ...(whereOf(table, options.where) ?? {}) };
  const block = options.block;
  if (block !== undefined) {
    if (typeof block === 'number') {
      if (!Number.isSafeInteger(block)) throw badValue(table, `scan block must be an integer, got ${block}`);
      addFilter(
        table,
        where,
        requireColumn(table, config.blockColumn, 'block column', 'a block number'),
        block,
      );
    } else if (typeof block === 'string') {
      addFilter(
        table,
        where,
        requireColumn(table, config.blockHashColumn, 'block hash column', 'a block hash'),
        block,
      );
    } else {
      throw badValue(table, `scan block must be a block number or a block hash, got ${typeof block}`);
    }
  }
  const out: { -readonly [K in keyof StorageScanQuery]: StorageScanQuery[K] } = {};
  if (Object.keys(where).length > 0) out.where = where;
  if (options.blockRange !== undefined) {
    requireColumn(table, config.blockColumn, 'block column', 'a block range');
    out.blockRange = options.blockRange as StorageScanQuery['blockRange'];
  }
  if (options.columns !== undefined) {
    const columns = options.columns;
    if (!Array.isArray(columns) || !columns.every((c) => typeof c === 'string'))
      throw badValue(table, 'scan columns must be an array of column names');
    out.columns = columns as string[];
  }
  if (options.limit !== undefined) out.limit = limitOf(table, options.limit);
  return out;
}

/** A call's scan options (`ctx.io.scan`) → ScanQuery; `block` may be the call's whole block object. */
export function callScanToQuery(table: string, config: TableConfig, options: unknown): ScanQuery {
  const o = asOptions(table, options ?? {});
  const where: Record<string, unknown> = { ...(whereOf(table, o.where) ?? {}) };
  let block: number | string | undefined;
  if (typeof o.block === 'object' && o.block !== null && !Array.isArray(o.block)) {
    const b = o.block as Row;
    if (config.blockHashColumn !== undefined && typeof b.hash === 'string') block = b.hash;
    else if (typeof b.number === 'number') block = b.number;
    else
      throw badValue(
        table,
        config.blockHashColumn === undefined
          ? 'the scan block object has no numeric "number"'
          : 'the scan block object has neither a "hash" string nor a numeric "number"',
      );
    if (b.chain_id !== undefined && b.chain_id !== null && config.chainColumn !== undefined)
      addFilter(table, where, config.chainColumn, b.chain_id);
  } else if (o.block !== undefined) {
    if (typeof o.block !== 'number' && typeof o.block !== 'string')
      throw badValue(table, `scan block must be a number, a hash or a block object, got ${typeof o.block}`);
    block = o.block;
  }
  return {
    ...(block !== undefined ? { block } : {}),
    ...(Object.keys(where).length > 0 ? { where } : {}),
    ...(o.blockRange !== undefined ? { blockRange: o.blockRange as ScanQuery['blockRange'] } : {}),
    ...(o.columns !== undefined ? { columns: o.columns as string[] } : {}),
    ...(o.limit !== undefined ? { limit: limitOf(table, o.limit) } : {}),
  };
}

function asOptions(table: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TaskIoError(TaskIoErrorCode.BAD_REQUEST, `scan options of table "${table}" must be an object`, {
      retryable: false,
      table,
    });
  const options = value as Record<string, unknown>;
  for (const [option, v] of Object.entries(options)) {
    if (v !== undefined && !SCAN_OPTIONS.includes(option))
      throw new TaskIoError(
        TaskIoErrorCode.UNKNOWN_OPTION,
        `unknown scan option "${option}" (known: ${SCAN_OPTIONS.join(', ')})`,
        { retryable: false, table, option, operation: 'scan' },
      );
  }
  return options;
}

function whereOf(table: string, where: unknown): RowFilter | undefined {
  if (where === undefined) return undefined;
  if (typeof where !== 'object' || where === null || Array.isArray(where))
    throw badValue(table, 'scan where must be an object of column → value');
  return where as RowFilter;
}

function limitOf(table: string, limit: unknown): number {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 0)
    throw badValue(table, `scan limit must be a non-negative integer, got ${String(limit)}`);
  return limit;
}

function requireColumn(table: string, column: string | undefined, what: string, use: string): string {
  if (column === undefined)
    throw badValue(table, `table "${table}" has no ${what}, so a scan cannot take ${use}`);
  return column;
}

/** Adds `column = value`; a `where` that already filters the column on another value is a conflict. */
function addFilter(table: string, where: Record<string, unknown>, column: string, value: unknown): void {
  const existing = where[column];
  if (existing !== undefined && canonicalJson(existing) !== canonicalJson(value))
    throw badValue(
      table,
      `scan block sets "${column}" = ${canonicalJson(value)} but where sets it to ${canonicalJson(existing)}`,
    );
  where[column] = value;
}

function badValue(table: string, message: string): StorageError {
  return new StorageError(StorageErrorCode.BAD_VALUE, message, { table });
}
