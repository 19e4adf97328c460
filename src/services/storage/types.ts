// The storage port: one interface over the embedded SQLite backend and PostgreSQL. Everything above it
// (the task IO scope, `blockx db migrate`, `blockx data load`, the writers) is written against this file
// only, so both backends pass the same tests.
//
// Values at this boundary are plain JSON so they cross the executor socket unchanged:
//   integer, bigint → number (block numbers, gas, timestamps stay below 2^53; a bigger stored value is an
//                     error, never a silent rounding)
//   real → number · text → string · boolean → boolean · json → any JSON value · bytes → "0x…" hex string
//   a NULL (nullable columns only) → null
//
// Rows are returned with every declared column, in declaration order unless a projection narrows them.

import type { BlockRange, EncodedRow, Row, RowFilter, RowKey } from '../../kernel/plugin-types.js';
import type { TableConfig } from '../../kernel/config-types.js';
import type { WriteFence } from '../../contracts/write-fence.js';

export type { BlockRange, EncodedRow, Row, RowFilter, RowKey } from '../../kernel/plugin-types.js';

export type BackendKind = 'sqlite' | 'postgres';

/** One page-by-page scan of a table, ordered by primary key. */
export interface StorageScanQuery {
  /** Equality / IN filters on declared columns (the block column, chain column, hash column, ...). */
  readonly where?: RowFilter;
  /** Inclusive range on the table's blockColumn (bundle scans): `from <= block <= to`. */
  readonly blockRange?: BlockRange;
  /** Columns to return (default: all). Unknown columns are an error. */
  readonly columns?: readonly string[];
  /** At most this many rows in total. */
  readonly limit?: number;
  /** Rows per page (default: storage.scanBatchSize). */
  readonly batchSize?: number;
}

/** Options every operation takes. */
export interface OpOptions {
  /** Aborting cancels the operation (a waiting admission leaves the queue; a query is abandoned). */
  readonly signal?: AbortSignal;
}

/** Writes inside one transaction; all of them commit together or none does. */
export interface StorageTransaction {
  /** Insert or replace the row with this primary key (`key` ∪ `values` must cover every non-null column). */
  upsert(table: string, key: RowKey, values: Row): Promise<void>;
  /** Insert many full rows (upsert semantics on the primary key). Used by loaders and block writes. */
  insertRows(table: string, rows: readonly Row[]): Promise<void>;
  delete(table: string, key: RowKey): Promise<void>;
  /**
   * Delete every row matching the filter / block range (the table's blockColumn); returns the count.
   * On PostgreSQL it first locks the region it deletes (one block, the bundles of a range, or the whole
   * table) until the transaction ends, so two "delete this block, insert its rows" transactions of the
   * same block run one after the other, and of different blocks side by side (docs/storage.md).
   */
  deleteWhere(table: string, where: RowFilter, blockRange?: BlockRange): Promise<number>;
  /**
   * Throws StorageError FENCED (and the transaction commits nothing) unless `fence.term` is the job's
   * newest term in `blockx_job_terms`. It holds until the transaction ends: a claim of a newer term waits
   * for it (PostgreSQL: a share lock on the term row; SQLite: one writer). docs/follow.md § Fencing.
   */
  checkFence(fence: WriteFence): Promise<void>;
}

/** What `migrate` found and did, table by table. */
export interface MigrationReport {
  readonly created: readonly string[];
  /** Tables that exist and match the config. */
  readonly unchanged: readonly string[];
  /**
   * Existing tables that lacked an index for block replacements and got one (absent when none did;
   * docs/storage.md, "Bulk writes").
   */
  readonly indexed?: readonly string[];
}

export interface StorageBackend {
  readonly kind: BackendKind;
  /** The URL with any password masked, for logs and errors. */
  readonly displayUrl: string;
  /** The declared tables this backend serves (from the config). */
  readonly tables: Readonly<Record<string, TableConfig>>;

  /**
   * Creates missing tables, and the block-column index of any table whose primary key does not already
   * lead with (chainColumn, blockColumn); checks existing ones against the config.
   * A mismatch (missing/extra column, other type or nullability, other primary key) throws
   * StorageError SCHEMA_MISMATCH listing every difference; nothing is altered. `checkOnly` creates
   * nothing and reports missing tables as a mismatch.
   */
  migrate(opts?: { readonly checkOnly?: boolean }): Promise<MigrationReport>;
  /**
   * Serves `tables` from now on (a running cluster's config changed; table-changes.ts decides which
   * declarations these are): migrates them as `migrate` does, then swaps them in, so a request sees a
   * new table only once it exists. On a mismatch nothing is swapped and the old tables keep serving.
   */
  serveTables(tables: Readonly<Record<string, TableConfig>>): Promise<MigrationReport>;

  get(table: string, key: RowKey, opts?: OpOptions): Promise<Row | undefined>;
  /** One result per key, in order; one round trip per batch of keys, not per key. */
  getMany(table: string, keys: readonly RowKey[], opts?: OpOptions): Promise<(Row | undefined)[]>;
  /** Keyset-paginated: memory is bounded by one page whatever the table size. */
  scan(table: string, query?: StorageScanQuery, opts?: OpOptions): AsyncIterable<readonly Row[]>;
  /**
   * The rows `scan` yields, each as its JSON text (quoted as a JSON string literal), with the declared
   * columns `fields` decoded beside it. The database writes the text where it can (row-json.ts); the
   * same pages, order, errors and keyset pagination as `scan`.
   */
  scanJson(
    table: string,
    query?: StorageScanQuery,
    fields?: readonly string[],
    opts?: OpOptions,
  ): AsyncIterable<readonly EncodedRow[]>;
  /**
   * Runs `fn` in one transaction (READ COMMITTED plus deleteWhere's region locks on PostgreSQL; BEGIN
   * IMMEDIATE on SQLite). Commits when `fn` resolves, rolls back when it rejects or the process dies
   * (nothing partial is ever visible). Does not retry: retry scopes above decide (a CONFLICT — deadlock,
   * serialization failure — is retryable and means "run the whole callback again").
   */
  transaction<T>(fn: (tx: StorageTransaction) => Promise<T>, opts?: OpOptions): Promise<T>;

  /** Admission right now (for metrics and tests). */
  readonly admission: { readonly inUse: number; readonly waiting: number; readonly capacity: number };
  /** Closes connections; in-flight operations finish or fail with CLOSED. Idempotent. */
  close(): Promise<void>;
}
