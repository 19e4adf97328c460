// What sql-backend.ts needs from a database driver: run statements on a connection or inside a
// transaction, read a table's shape, classify the driver's errors, close. sqlite-backend.ts and
// postgres-backend.ts implement it; everything else (validation, encoding, admission, pagination,
// migration) is shared, so both backends behave the same by construction.

import type { StorageError } from './errors.js';
import type { DbTable } from './schema-introspect.js';
import type { Dialect } from './sql-dialect.js';
import type { Statement } from './sql-statements.js';
import type { BackendKind } from './types.js';

/** Statements on one connection (or inside one transaction). */
export interface SqlRunner {
  /** The result rows: column name → driver value. */
  all(stmt: Statement): Promise<Record<string, unknown>[]>;
  /** The result rows as arrays of driver values, in select-list order (no object per row). */
  allRows(stmt: Statement): Promise<unknown[][]>;
  /**
   * PostgreSQL only: as `allRows`, with json and jsonb values as their text, unparsed (for a scan that
   * writes each row's JSON text itself: row-json.ts driverRowText). Absent on SQLite.
   */
  readonly allRowsJsonText?: (stmt: Statement) => Promise<unknown[][]>;
  /** Runs a statement that returns no rows; resolves with the number of rows it changed. */
  run(stmt: Statement): Promise<number>;
  /**
   * PostgreSQL only: runs `COPY … FROM STDIN` (`sql`) with `data` (COPY text, pg-copy.ts) as its input;
   * resolves with the rows copied. Absent where the driver has no COPY (SQLite).
   */
  readonly copyFrom?: (sql: string, data: readonly string[]) => Promise<number>;
}

export interface ConnectionOptions {
  readonly signal?: AbortSignal | undefined;
  /** performance.now() by which a connection (or the SQLite connection lock) must be had. */
  readonly deadline: number;
  /** The table the work is about, for error details. */
  readonly table?: string | undefined;
}

export interface TransactionOptions extends ConnectionOptions {
  /**
   * `write` for the port's transactions: PostgreSQL READ COMMITTED (conflicting block writes serialise
   * on advisory locks, write-locks.ts and docs/storage.md); SQLite BEGIN IMMEDIATE (one writer).
   * `migration` for migrate: PostgreSQL READ COMMITTED under an advisory lock, so a migrator that waited
   * for another sees the tables it created.
   */
  readonly mode: 'write' | 'migration';
}

export interface SqlDriver {
  readonly kind: BackendKind;
  readonly dialect: Dialect;
  /** Runs `fn` on a connection outside any transaction (reads). */
  withConnection<T>(fn: (q: SqlRunner) => Promise<T>, opts: ConnectionOptions): Promise<T>;
  /**
   * Runs `fn` in a transaction: commits when it resolves, rolls back when it rejects (re-throwing its
   * error unchanged). A failing BEGIN/COMMIT rejects with the driver's error.
   */
  withTransaction<T>(fn: (q: SqlRunner) => Promise<T>, opts: TransactionOptions): Promise<T>;
  /** The table's columns and primary key as the database has them; undefined when it does not exist. */
  introspect(q: SqlRunner, table: string): Promise<DbTable | undefined>;
  /** A driver error as a StorageError (CONFLICT, CONNECTION, BAD_VALUE or QUERY_FAILED). */
  classify(err: unknown, table: string | undefined): StorageError;
  /** Closes every connection; work still running fails. */
  close(): Promise<void>;
}
