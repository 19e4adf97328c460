// Which tables tasks may write (docs/storage.md, "Which tables tasks may write").
//
// A task's writes — every delete, upsert and block replacement a writer (or any plugin) makes through
// the task IO scope — may only touch tables declared `writable: true`. The default is false, so the chain
// data `blockx data load|generate` imports (blocks, transactions, events, traces) cannot be deleted by a
// task whose writer names it. The data CLI writes through the StorageBackend directly and is not a task.
//
// Two checks share this rule: `refuseTaskWrite` at run time, in the writer's TaskIoTransaction (before
// any SQL, so nothing is written), and `writerTableIssues` before run time (`blockx validate`, SubmitTask
// admission), on the tables a writer config names statically.
//
// Pure: no IO.

import type { TableConfig } from '../../kernel/config-types.js';
import type { SchemaIssue } from '../../kernel/errors.js';
import { StorageError, StorageErrorCode } from './errors.js';

type Tables = Readonly<Record<string, TableConfig>>;

/** The config rule a refused write names. */
export function writableRule(table: string): string {
  return `tables.${table}.writable`;
}

/**
 * Why a task may not write `table`, or undefined when it may. An undeclared table is left to the
 * storage checks at run time (UNKNOWN_TABLE) and reported by `writerTableIssues` before it.
 */
export function taskWriteRefusal(tables: Tables, table: string): string | undefined {
  const config = Object.hasOwn(tables, table) ? tables[table] : undefined;
  if (config === undefined || config.writable === true) return undefined;
  return (
    `table "${table}" is not writable by tasks (rule: ${writableRule(table)} is false; ` +
    `declare it \`writable: true\` in blockx.config.yaml if it is an output table — docs/storage.md)`
  );
}

/**
 * The built-in writer of `blockx ingest` (plugins/writers/chain-ingest-write/): it imports chain data from a
 * node, the job `blockx data load` does outside tasks, so it may write every declared table (docs/ingest.md).
 */
export const CHAIN_IMPORT_WRITER = 'ChainIngestResultHandler';

/** Throws NOT_WRITABLE (not retryable) when a task may not write `table`; `writer` is the writer's type. */
export function refuseTaskWrite(tables: Tables, table: string, operation: string, writer?: string): void {
  if (writer === CHAIN_IMPORT_WRITER) return;
  const refusal = taskWriteRefusal(tables, table);
  if (refusal !== undefined)
    throw new StorageError(StorageErrorCode.NOT_WRITABLE, `${operation}: ${refusal}`, { table });
}

/**
 * The tables a writer config names statically, with the JSON path of each (relative to the config): the
 * built-in writers' convention, `table` (BlockWriteResultHandler, BlockBundleWriteResultHandler) or the
 * `tables` allow-list (TableUpsertsResultHandler). A writer naming its tables at run time only (the
 * upserts' own `table` fields without an allow-list) is checked at run time only.
 */
export function writerTargetTables(config: unknown): { readonly table: string; readonly path: string }[] {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return [];
  const record = config as Record<string, unknown>;
  const out: { table: string; path: string }[] = [];
  if (typeof record.table === 'string') out.push({ table: record.table, path: '/table' });
  if (Array.isArray(record.tables))
    record.tables.forEach((t, i) => {
      if (typeof t === 'string') out.push({ table: t, path: `/tables/${i}` });
    });
  return out;
}

/** Problems of a writer config's target tables: undeclared, or not writable. Paths relative to the config. */
export function writerTableIssues(config: unknown, tables: Tables): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  for (const { table, path } of writerTargetTables(config)) {
    if (!Object.hasOwn(tables, table)) {
      const declared = Object.keys(tables).join(', ') || 'none';
      issues.push({
        path,
        rule: writableRule(table),
        message: `table "${table}" is not declared in the config (declared: ${declared})`,
      });
      continue;
    }
    const refusal = taskWriteRefusal(tables, table);
    if (refusal !== undefined) issues.push({ path, rule: writableRule(table), message: refusal });
  }
  return issues;
}
