// One task's IO scope (docs/task-lifecycle.md § Retry scopes): created at activation, closed when the task
// converges.
//
// - One AbortController per scope. `close()` aborts it: every pending operation (backoff, admission
//   wait, query, scan page) rejects with CANCELLED at once, and every later operation rejects with
//   IO_SCOPE_CLOSED. Idempotent.
// - `io(phase)` is the TaskIo of one retry scope (builder / calls / result), each with its own retry
//   budget (storage.retry.<phase>) and retry counter.
// - Reads go through one read cache shared by all phases and calls of the task (core/io/read-cache.ts):
//   the cached value is the read's promise, so identical reads in flight at once hit storage once,
//   misses are cached too, failures are not. getMany serves what is cached and fetches the rest in one
//   backend getMany. Scans are not cached as scans, but the first SCAN_SEED_ROWS full rows of each seed the get cache.
//   Seeding is lazy: a scanned row is frozen at once, but its cache key (canonical JSON of the primary key)
//   is made only when a get or getMany of its table first asks. A per-block task scans its block's rows
//   and never reads them back, and building those keys showed as ~3 % of `blockx up` in a profiled
//   backfill. What a read sees is the same: the seeds go in before its lookup, skipped where the key is
//   cached already, and dropped with the table's entries after a transaction writes it.
//   A transaction drops the cached rows of every table it wrote.
// - A scan that fails part-way resumes where it stopped (resumable-scan.ts).

import { rowScan } from '../../../../kernel/row-scan.js';
import type { BlockxConfig } from '../../../../kernel/config-types.js';
import type {
  EncodedRow,
  Row,
  RowKey,
  ScanQuery,
  TaskIo,
  TaskIoTransaction,
} from '../../../../kernel/plugin-types.js';
import { StorageError } from '../../../storage/errors.js';
import type { StorageBackend, StorageScanQuery } from '../../../storage/types.js';
import { ReadCache, TaskIoError, TaskIoErrorCode, readCacheKey } from '../../core/io/index.js';
import type { IoPhase, TaskIoScope } from '../orchestration/ports.js';
import {
  RetryAttempts,
  cancelledError,
  raceAbort,
  withRetries,
  type RetryScope,
  type Sleep,
} from './retry-runner.js';
import { canonicalScanPlan } from './canonical-block.js';
import { resumableScan } from './resumable-scan.js';
import { tableConfig, toStorageScanQuery } from './scan-query.js';
import { taskIoTransaction } from './task-io-transaction.js';

/**
 * Rows of one scan that seed the get cache. A short lookup scan (the block of a height, a few rows) is
 * what calls read again; the rows of a large scan each go to their own call as an argument, and caching
 * 10,000 of them per task only costs time and memory.
 */
export const SCAN_SEED_ROWS = 64;
export interface StorageTaskIoScopeOptions {
  readonly taskId: string;
  readonly backend: StorageBackend;
  readonly storage: BlockxConfig['storage'];
  readonly sleep: Sleep;
  readonly random: () => number;
  readonly openedAtMs: number;
  /** Called on every retry of any phase (the factory's counter). */
  readonly onRetry?: () => void;
  /** Called once, when the scope closes. */
  readonly onClose?: (scope: StorageTaskIoScope) => void;
}

export interface TaskIoScopeStats {
  readonly taskId: string;
  readonly openedAtMs: number;
  readonly closed: boolean;
  readonly retries: Readonly<Record<IoPhase, number>>;
  readonly cacheHits: number;
  readonly cacheMisses: number;
  readonly cacheEntries: number;
}

type CachedRead = Promise<Row | undefined>;

/**
 * The abort reason of every closed scope, made once: `abort()` without a reason builds a DOMException,
 * stack trace included, for each task, which showed in the worker's profile at 5,000 empty tasks/s
 * (docs/batched-protocol.md). A sleeping IO retry rejects with it, as it did with the per-task one.
 */
const SCOPE_CLOSED = new DOMException('the task IO scope is closed', 'AbortError');

export class StorageTaskIoScope implements TaskIoScope {
  readonly taskId: string;
  /**
   * Made on first use: most tasks of a fast stream never read, and a controller per task showed in the
   * worker's profile (docs/batched-protocol.md).
   */
  private abortController: AbortController | undefined;
  private isClosed = false;
  private readonly cache: ReadCache<CachedRead>;
  private readonly retries: Record<IoPhase, number> = { builder: 0, calls: 0, result: 0 };
  private readonly views = new Map<string, TaskIo>();
  private readonly retryScopes = new Map<IoPhase, RetryScope>();
  /** Scanned rows (frozen) waiting to seed the get cache, by table: keyed when a read of it asks. */
  private readonly seeds = new Map<
    string,
    { readonly primaryKey: readonly string[]; readonly rows: Row[] }
  >();

  constructor(private readonly options: StorageTaskIoScopeOptions) {
    this.taskId = options.taskId;
    this.cache = new ReadCache(Math.max(0, options.storage.readCacheMaxEntries));
  }

  get closed(): boolean {
    return this.isClosed;
  }

  io(phase: IoPhase, writer?: string): TaskIo {
    const key = writer === undefined ? phase : `${phase}:${writer}`;
    let view = this.views.get(key);
    if (view === undefined) {
      view = {
        // The cache and the backend say undefined for a missing row; the contract says null.
        get: async (table, key) => (await this.get(phase, table, key)) ?? null,
        getMany: async (table, keys) => (await this.getMany(phase, table, keys)).map((row) => row ?? null),
        scan: (table, query) => rowScan(() => this.scan(phase, table, query)),
        scanJson: (table, query, fields) => rowScan(() => this.scanJson(phase, table, query, fields ?? [])),
        transaction: (fn) => this.transaction(phase, fn, writer),
        blockColumns: (table) => {
          const t = tableConfig(this.options.backend.tables, table);
          return {
            ...(t.blockColumn === undefined ? {} : { block: t.blockColumn }),
            ...(t.blockHashColumn === undefined ? {} : { hash: t.blockHashColumn }),
            ...(t.chainColumn === undefined ? {} : { chain: t.chainColumn }),
          };
        },
      };
      this.views.set(key, view);
    }
    return view;
  }

  /** Aborted when the scope closes (already aborted when asked for after that). */
  private get signal(): AbortSignal {
    if (this.abortController === undefined) {
      this.abortController = new AbortController();
      if (this.isClosed) this.abortController.abort(SCOPE_CLOSED);
    }
    return this.abortController.signal;
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.isClosed = true;
      this.abortController?.abort(SCOPE_CLOSED);
      this.cache.clear();
      this.seeds.clear();
      this.options.onClose?.(this);
    }
    return Promise.resolve();
  }

  /** Hits the executor's read copies served from this scope's answers (ReadCache.countHits). */
  countCopyHits(hits: number): void {
    this.cache.countHits(hits);
  }

  stats(): TaskIoScopeStats {
    const cache = this.cache.stats();
    return {
      taskId: this.taskId,
      openedAtMs: this.options.openedAtMs,
      closed: this.closed,
      retries: { ...this.retries },
      cacheHits: cache.hits,
      cacheMisses: cache.misses,
      cacheEntries: cache.entries,
    };
  }

  private retryScope(phase: IoPhase): RetryScope {
    let scope = this.retryScopes.get(phase);
    if (scope === undefined) {
      scope = {
        taskId: this.taskId,
        phase,
        config: this.options.storage.retry[phase],
        signal: this.signal,
        sleep: this.options.sleep,
        random: this.options.random,
        onRetry: () => {
          this.retries[phase]++;
          this.options.onRetry?.();
        },
      };
      this.retryScopes.set(phase, scope);
    }
    return scope;
  }

  private closedError(phase: IoPhase, operation: string, table: string): TaskIoError {
    return new TaskIoError(
      TaskIoErrorCode.IO_SCOPE_CLOSED,
      `task ${this.taskId}: io.${operation} on "${table}" after the task's IO scope was closed`,
      { retryable: false, taskId: this.taskId, phase, operation, table },
    );
  }

  private get(phase: IoPhase, table: string, key: RowKey): Promise<Row | undefined> {
    if (this.closed) return Promise.reject(this.closedError(phase, 'get', table));
    this.seedPending(table);
    const cacheKey = this.cacheKeyOf(table, key);
    if (cacheKey === undefined) return this.fetchOne(phase, table, key);
    const found = this.cache.lookup(cacheKey);
    if (found.hit) return found.value;
    const read = this.fetchOne(phase, table, key);
    this.remember(table, cacheKey, read);
    return read;
  }

  private getMany(phase: IoPhase, table: string, keys: readonly RowKey[]): Promise<(Row | undefined)[]> {
    if (this.closed) return Promise.reject(this.closedError(phase, 'getMany', table));
    this.seedPending(table);
    const reads: CachedRead[] = [];
    const fetchKeys: RowKey[] = [];
    // Keys to fetch: index in the request → index in fetchKeys (a key asked twice is fetched once).
    const slots: { index: number; fetchIndex: number }[] = [];
    const fetchIndexOf = new Map<string, number>();
    const cacheKeys: (string | undefined)[] = [];
    keys.forEach((key, index) => {
      const cacheKey = this.cacheKeyOf(table, key);
      if (cacheKey !== undefined) {
        const pending = fetchIndexOf.get(cacheKey);
        if (pending !== undefined) {
          slots.push({ index, fetchIndex: pending });
          return;
        }
        const found = this.cache.lookup(cacheKey);
        if (found.hit) {
          reads[index] = found.value;
          return;
        }
        fetchIndexOf.set(cacheKey, fetchKeys.length);
      }
      slots.push({ index, fetchIndex: fetchKeys.length });
      cacheKeys.push(cacheKey);
      fetchKeys.push(key);
    });
    if (fetchKeys.length > 0) {
      const fetched = this.fetchMany(phase, table, fetchKeys);
      const perKey = fetchKeys.map((_key, i) => fetched.then((rows) => rows[i]));
      perKey.forEach((read, i) => {
        const cacheKey = cacheKeys[i];
        if (cacheKey !== undefined) this.remember(table, cacheKey, read);
      });
      for (const slot of slots) reads[slot.index] = perKey[slot.fetchIndex]!;
    }
    return Promise.all(reads);
  }

  private async *scan(phase: IoPhase, table: string, asked: ScanQuery | undefined): AsyncGenerator<Row> {
    const storageQuery = await this.scanQuery(phase, table, asked);
    if (storageQuery === undefined) return;
    const config = tableConfig(this.options.backend.tables, table);
    const seedCache = this.cache.enabled && storageQuery.columns === undefined;
    let seeded = 0;
    yield* resumableScan({
      backend: this.options.backend,
      table,
      query: storageQuery,
      signal: this.signal,
      attempts: new RetryAttempts(this.retryScope(phase), 'scan', table),
      onRow: seedCache
        ? (row) => {
            if (seeded++ < SCAN_SEED_ROWS) this.seed(table, config.primaryKey, row);
          }
        : undefined,
    });
  }

  /** The rows of `scan` as JSON text (TaskIo.scanJson); they do not seed the get cache. */
  private async *scanJson(
    phase: IoPhase,
    table: string,
    asked: ScanQuery | undefined,
    fields: readonly string[],
  ): AsyncGenerator<EncodedRow> {
    const storageQuery = await this.scanQuery(phase, table, asked);
    if (storageQuery === undefined) return;
    const { backend } = this.options;
    yield* resumableScan<EncodedRow>({
      backend,
      table,
      query: storageQuery,
      signal: this.signal,
      attempts: new RetryAttempts(this.retryScope(phase), 'scan', table),
      onRow: undefined,
      pages: (signal) => backend.scanJson(table, storageQuery, fields, { signal }),
    });
  }

  /**
   * The storage query of a scan as asked; undefined when it can match nothing (a block height without a
   * canonical block). A block number is first resolved to the canonical block of that height
   * (canonical-block.ts, docs/storage.md).
   */
  private async scanQuery(
    phase: IoPhase,
    table: string,
    asked: ScanQuery | undefined,
  ): Promise<StorageScanQuery | undefined> {
    if (this.closed) throw this.closedError(phase, 'scan', table);
    const config = tableConfig(this.options.backend.tables, table);
    const askedQuery = toStorageScanQuery(table, config, asked); // a bad query fails before any lookup
    const plan = canonicalScanPlan(this.options.backend.tables, table, asked);
    let query = plan.query;
    if (plan.kind === 'lookup') {
      const hashes: string[] = [];
      const lookupConfig = tableConfig(this.options.backend.tables, plan.table);
      for await (const row of resumableScan({
        backend: this.options.backend,
        table: plan.table,
        query: toStorageScanQuery(plan.table, lookupConfig, plan.query),
        signal: this.signal,
        attempts: new RetryAttempts(this.retryScope(phase), 'scan', plan.table),
        onRow: undefined,
      })) {
        const hash = row[plan.hashColumn];
        if (typeof hash === 'string') hashes.push(hash);
      }
      const resolved = plan.scanFor(hashes);
      if (resolved === undefined) return undefined;
      query = resolved;
    }
    // Most scans are served as asked: translate the query once.
    return query === asked ? askedQuery : toStorageScanQuery(table, config, query);
  }

  private async transaction<T>(
    phase: IoPhase,
    fn: (tx: TaskIoTransaction) => Promise<T>,
    writer: string | undefined,
  ): Promise<T> {
    if (this.closed) throw this.closedError(phase, 'transaction', '*');
    const scope = this.retryScope(phase);
    const written = new Set<string>();
    const storageErrors = new Set<unknown>();
    const writerErrors = new Set<unknown>();
    const context = {
      tables: this.options.backend.tables,
      ...(writer !== undefined ? { writer } : {}),
      signal: this.signal,
      written,
      storageErrors,
      cancelled: (operation: string, table: string) => cancelledError(scope, operation, table),
    };
    try {
      return await withRetries(
        scope,
        'transaction',
        undefined,
        () =>
          this.options.backend.transaction(
            async (tx) => {
              try {
                return await fn(taskIoTransaction(tx, context));
              } catch (err) {
                writerErrors.add(err);
                throw err;
              }
            },
            { signal: this.signal },
          ),
        (err) => writerErrors.has(err) && !storageErrors.has(err) && !(err instanceof StorageError),
      );
    } finally {
      // Even a failed commit may have landed (connection lost during COMMIT): drop the cache either way.
      this.cache.invalidateTables(written);
      for (const table of written) this.seeds.delete(table);
    }
  }

  private fetchOne(phase: IoPhase, table: string, key: RowKey): Promise<Row | undefined> {
    const signal = this.signal;
    const scope = this.retryScope(phase);
    return withRetries(scope, 'get', table, () =>
      raceAbort(this.options.backend.get(table, key, { signal }), signal, () =>
        cancelledError(scope, 'get', table),
      ),
    ).then(freezeRow);
  }

  private fetchMany(phase: IoPhase, table: string, keys: readonly RowKey[]): Promise<(Row | undefined)[]> {
    const signal = this.signal;
    const scope = this.retryScope(phase);
    return withRetries(scope, 'getMany', table, () =>
      raceAbort(this.options.backend.getMany(table, keys, { signal }), signal, () =>
        cancelledError(scope, 'getMany', table),
      ),
    ).then((rows) => rows.map(freezeRow));
  }

  /** The cache key of a read, or undefined when the cache is off or the key is not JSON (no caching). */
  private cacheKeyOf(table: string, key: RowKey): string | undefined {
    if (!this.cache.enabled) return undefined;
    try {
      return readCacheKey(table, key);
    } catch {
      return undefined;
    }
  }

  /** Caches a read in flight; a failed read is forgotten so the next one tries storage again. */
  private remember(table: string, cacheKey: string, read: CachedRead): void {
    this.cache.set(table, cacheKey, read);
    read.catch(() => this.cache.deleteIfSame(cacheKey, read));
  }

  /** Keeps a full row a scan yielded, frozen, to seed the get cache when a read of `table` asks. */
  private seed(table: string, primaryKey: readonly string[], row: Row): void {
    freezeRow(row);
    let pending = this.seeds.get(table);
    if (pending === undefined) this.seeds.set(table, (pending = { primaryKey, rows: [] }));
    pending.rows.push(row);
  }

  /** Seeds the get cache with the rows kept for `table` (unless a key is cached or in flight). */
  private seedPending(table: string): void {
    const pending = this.seeds.get(table);
    if (pending === undefined) return;
    this.seeds.delete(table);
    for (const row of pending.rows) this.seedRow(table, pending.primaryKey, row);
  }

  private seedRow(table: string, primaryKey: readonly string[], row: Row): void {
    const key: Record<string, unknown> = {};
    for (const column of primaryKey) {
      const value = row[column];
      if (value === undefined || value === null) return;
      key[column] = value;
    }
    const cacheKey = this.cacheKeyOf(table, key);
    if (cacheKey !== undefined && !this.cache.has(cacheKey))
      this.cache.set(table, cacheKey, Promise.resolve(row));
  }
}

/**
 * Rows the cache hands out are shared by every reader of the task: frozen, so none can change another's
 * view (and so the executor link may send a row's JSON text taken once).
 */
function freezeRow<R extends Row | undefined>(row: R): R {
  return row === undefined ? row : Object.freeze(row);
}
