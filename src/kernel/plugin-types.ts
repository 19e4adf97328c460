// Types for plugin authors: what a builder or writer package default-exports, and what it is given.
//
// Plugin packages reach these through `blockx/plugin` (src/plugin.ts; docs/plugins.md). The few runtime
// values here (the define helpers, isRetryableWriterFailure) import nothing, so a plugin loads the same
// from a source checkout, from dist/, or as an npm package.
import type { CallArgs, EncodedRow } from '../contracts/call-args.js';
import type { WriteFence } from '../contracts/write-fence.js';
import type { WriterResult } from '../contracts/task.js';
import type { RowScan } from './row-scan.js';
import type { PluginHooks } from './hooks.js';

export type { RowScan } from './row-scan.js';
export type { CallArgs, EncodedArgs, EncodedRow } from '../contracts/call-args.js';
export type { WriteFence } from '../contracts/write-fence.js';
export type { WriterResult } from '../contracts/task.js';

/** The phase a task is in when the kernel calls into a plugin or function. */
export type TaskStage = 'builder' | 'executor' | 'plugin';

/** The immutable per-task context shared by the builder, the writer and the IO scope. */
export interface TaskCtx {
  readonly taskId: string;
  readonly stage: TaskStage;
  /** Absolute deadline of the task (epoch ms); work past it is wasted. */
  readonly deadlineMs: number;
  /** Aborted when the task converges early (timeout, failure); stop work and IO when it fires. */
  readonly signal: AbortSignal;
  readonly debugMode?: boolean;
}

/** One call of a user function: `functions/<function>` invoked as `fn(ctx, ...args)`. */
export interface CallSpec {
  readonly function: string;
  /**
   * The values after `ctx`, or their JSON text encoded once (`encodedRowArgs` over the rows of
   * `TaskIo.scanJson`: docs/plugins.md § Rows as JSON text); the function gets the same values either way.
   */
  readonly args: CallArgs;
  /** Block context the builder attaches to the call; the function sees it as `ctx.block`. */
  readonly block?: unknown;
}

export interface CallList {
  readonly calls: readonly CallSpec[];
}

/** A row as the IO subsystem returns it: column name → JSON value. */
export type Row = Readonly<Record<string, unknown>>;
/** A row key: key column → value (one entry for a single-column key). */
export type RowKey = Readonly<Record<string, unknown>>;

/** Equality filter: column → value, or an array meaning "any of". */
export type RowFilter = Readonly<Record<string, unknown>>;

/** An inclusive range of block numbers (the table's `blockColumn`). */
export interface BlockRange {
  readonly from: number;
  readonly to: number;
}

/**
 * A scan of one table, ordered by primary key. `block` narrows to the rows of one block: a number
 * matches the table's `blockColumn` (every block at that height), a string its `blockHashColumn` (one
 * block). Unknown tables, columns or options are errors, never ignored.
 */
export interface ScanQuery {
  readonly block?: number | string;
  readonly blockRange?: BlockRange;
  readonly where?: RowFilter;
  /** Columns to return (default: all declared columns). */
  readonly columns?: readonly string[];
  readonly limit?: number;
}

/** Writes of a writer plugin, applied atomically when the transaction callback resolves. */
export interface TaskIoTransaction {
  /** Insert or replace the row with this primary key. */
  upsert(table: string, key: RowKey, values: Row): Promise<void>;
  /** Insert full rows (replacing rows with the same primary key). */
  insertRows(table: string, rows: readonly Row[]): Promise<void>;
  delete(table: string, key: RowKey): Promise<void>;
  /** Deletes every row matching the filter (and block range); resolves with the count. */
  deleteWhere(table: string, where: RowFilter, blockRange?: BlockRange): Promise<number>;
  /**
   * Replaces every row of one block in `table` with `rows` (idempotent block writes): deletes the rows
   * whose blockColumn equals `block` (and chainColumn equals `chainId` when given), then inserts `rows`.
   */
  replaceBlockRows(table: string, block: BlockSelector, rows: readonly Row[]): Promise<void>;
  /** The same for an inclusive block range (bundle writes). */
  replaceBlockRangeRows(
    table: string,
    range: BlockRange & { readonly chainId?: number },
    rows: readonly Row[],
  ): Promise<void>;
  /**
   * Fails (code FENCED, not retryable) unless `fence.term` is still its job's newest term, and keeps it so
   * until the transaction ends: call it first in a follow job's write, and a runner that lost the job
   * commits nothing (docs/follow.md § Fencing).
   */
  checkFence(fence: WriteFence): Promise<void>;
}

/** Which block a block write replaces. */
export interface BlockSelector {
  readonly number: number;
  readonly chainId?: number;
}

/**
 * Task-scoped storage access, supplied by the IO subsystem (reads are cached per task). This is the port
 * plugins are written against; its implementation lives with the worker's IO scope. Errors carry a
 * boolean `retryable` (and a string `code`); the scope has already retried retryable errors within its
 * retry scope when one reaches the plugin.
 */
export interface TaskIo {
  /**
   * `key`: the primary key columns → values. Missing row → null, as for a function's `ctx.io.get`
   * (one storage-read contract for plugins and functions: docs/plugins.md § Reading storage).
   */
  get(table: string, key: RowKey): Promise<Row | null>;
  /** One entry per key, in key order; null for each missing row. */
  getMany(table: string, keys: readonly RowKey[]): Promise<(Row | null)[]>;
  /**
   * Streams rows page by page with `for await` (memory stays bounded by one page), or collects them
   * with `toArray()`.
   */
  scan(table: string, query?: ScanQuery): RowScan<Row>;
  /**
   * The same rows as `scan`, each as its JSON text (`EncodedRow.literal`, the JSON of the row `scan`
   * yields, quoted as a JSON string) with the columns named in `fields` (a subset of the scanned
   * columns) decoded beside it. For builders that pass rows on to calls untouched
   * (`encodedRowArgs`): the database writes the text, nothing decodes it on the Worker. Rows read this
   * way do not seed the read cache.
   */
  scanJson(table: string, query?: ScanQuery, fields?: readonly string[]): RowScan<EncodedRow>;
  transaction<T>(fn: (tx: TaskIoTransaction) => Promise<T>): Promise<T>;
  /**
   * The block columns `table` is declared with (its blockColumn, blockHashColumn and chainColumn), for a
   * builder that scans several blocks at once and tells their rows apart (docs/task-fusion.md). Unknown
   * table: UNKNOWN_TABLE. Optional: an IO without it (a test's) makes such builders build each task alone.
   */
  blockColumns?(table: string): BlockColumns;
}

/** The block columns of a table, as configured (docs/storage.md); absent where the table has none. */
export interface BlockColumns {
  readonly block?: string;
  readonly hash?: string;
  readonly chain?: string;
}

/**
 * One task of a fused phase (docs/task-fusion.md): its context and its config, validated against the
 * plugin's schema with the defaults filled in, as `build` or `execute` would get them.
 */
export interface FusedTask<C> {
  readonly taskCtx: TaskCtx;
  readonly config: C;
}

/**
 * Task fusion for a builder (docs/task-fusion.md): tasks of one submitter whose configs give the same
 * key, reaching their Builder phase together on one Worker, are built by one `buildMany` — one scan
 * for all of them instead of one each. Each task keeps its own outcome.
 */
export interface BuilderFusion<C> {
  /** The key of the configs that may be built together; undefined: this one is always built alone. */
  key(config: C): string | undefined;
  /**
   * Builds every task: one entry per task, in order — its calls, exactly as `build` would make them, or
   * the error it fails with alone. Resolves with null to decline (each task is then built by `build`);
   * a rejection does the same, so a fused build never fails a task that would have succeeded alone.
   * `io` is one of the tasks' IO.
   */
  buildMany(tasks: readonly FusedTask<C>[], io: TaskIo): Promise<readonly (CallList | Error)[] | null>;
}

/** One task of a fused write: its context, config and the outputs of its calls. */
export interface FusedWrite<C> extends FusedTask<C> {
  readonly outputs: readonly unknown[];
}

/**
 * Task fusion for a writer (docs/task-fusion.md): the writes of tasks whose configs give the same key,
 * reaching their Writer phase together on one Worker, go in one transaction. All or nothing still holds
 * per task: a task whose outputs are refused gets its error and writes nothing; if the transaction
 * fails, every task is written again alone by `execute`.
 */
export interface WriterFusion<C> {
  /** The key of the configs that may be written together; undefined: this one is always written alone. */
  key(config: C): string | undefined;
  /**
   * Writes every task whose outputs it accepts in ONE transaction of `io`: one entry per task, in order —
   * its results, or the error it fails with (and writes nothing). Rejects when the transaction fails.
   */
  executeMany(tasks: readonly FusedWrite<C>[], io: TaskIo): Promise<readonly (WriterResult[] | Error)[]>;
}

/** Fields every plugin implementation may carry besides its entry points. */
export interface PluginCommon {
  /** Defaults to the package name. */
  readonly name?: string;
  /** Defaults to the package version. */
  readonly version?: string;
  /** Taps kernel hooks (with the plugin's name); called once, before registration. */
  apply?(hooks: PluginHooks): void;
}

/** A Call Builder: turns a task config (already validated against the plugin's schema) into calls. */
export interface BuilderPlugin<C = unknown> extends PluginCommon {
  build(taskCtx: TaskCtx, config: C, io: TaskIo): CallList | Promise<CallList>;
  /**
   * Streaming form: yields calls during the Calls phase instead of building the list up front. The
   * Worker uses it (under scanSem, dispatching calls while the scan continues, in bounded memory) when
   * `streams(config)` says so; otherwise it calls `build`.
   */
  stream?(taskCtx: TaskCtx, config: C, io: TaskIo): AsyncIterable<CallSpec>;
  /** Whether this task config builds by streaming. Default: no. */
  streams?(config: C): boolean;
  /** Optional: build tasks of one key together (docs/task-fusion.md). */
  readonly fusion?: BuilderFusion<C>;
}

/** A Writer Plugin: writes the outputs of the successful root calls, once. */
export interface WriterPlugin<C = unknown> extends PluginCommon {
  execute(taskCtx: TaskCtx, config: C, outputs: readonly unknown[], io: TaskIo): Promise<WriterResult[]>;
  /** Optional: write tasks of one key in one transaction (docs/task-fusion.md). */
  readonly fusion?: WriterFusion<C>;
}

/**
 * Declares a builder plugin module: returns `plugin` unchanged, typed with its config `C` (the shape its
 * JSON schema describes, defaults filled in: the kernel validates every task config against the schema
 * with ajv's `useDefaults`, so a schema default is the only default). `name`, `version` and
 * `apply(hooks)` are optional (PluginCommon).
 *
 *   export default defineBuilder<MyConfig>({ name: 'my-builder', build(taskCtx, config, io) { ... } });
 */
export function defineBuilder<C>(plugin: BuilderPlugin<C>): BuilderPlugin<C> {
  return plugin;
}

/** Declares a writer plugin module; the writer counterpart of defineBuilder. */
export function defineWriter<C>(plugin: WriterPlugin<C>): WriterPlugin<C> {
  return plugin;
}

/**
 * The error shape a writer throws: PluginError (blockx/plugin) has it, and so does any Error with a
 * boolean `retryable`, optionally a `code` (duck-typed, so errors from other libraries qualify). An error without `retryable` is unclassified and treated as
 * retryable (docs/task-lifecycle.md § Failure codes).
 */
export interface WriterFailure extends Error {
  readonly retryable: boolean;
  readonly code?: string;
}

/** Whether a task that failed with `err` in its writer may be resubmitted. */
export function isRetryableWriterFailure(err: unknown): boolean {
  if (typeof err === 'object' && err !== null && 'retryable' in err) {
    const retryable = (err as { retryable: unknown }).retryable;
    if (typeof retryable === 'boolean') return retryable;
  }
  return true;
}
