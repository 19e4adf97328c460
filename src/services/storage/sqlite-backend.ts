// The embedded backend: one better-sqlite3 connection (WAL, busy_timeout, prepared statement cache).
//
// better-sqlite3 is synchronous: every statement runs to completion on the calling tick, behind the
// async port. A transaction, though, spans awaits (its callback is async), and a second operation on the
// same connection in between would run inside it: a read would see uncommitted rows, a write would join
// a transaction it does not belong to. So the connection is a lock (a FIFO admission of capacity 1):
// a transaction holds it from BEGIN IMMEDIATE to COMMIT/ROLLBACK, and every read takes it for its
// statements, waiting while a transaction is open. The wait is bounded by the operation's admission
// deadline (storage.admissionWaitMs) and ends in a retryable OVERLOADED, never a deadlock, even if a
// transaction callback reads through the backend instead of its transaction. Write transactions that
// queue one behind the other for the lock share one COMMIT (sqlite-group-commit.ts); the group commits
// before the lock goes to anything else, so a read never sees a group's uncommitted writes.
//
// Other processes on the same file: WAL lets their readers run beside our writer; writers queue on the
// file lock for busy_timeout (= admissionWaitMs, during which this process is blocked, as SQLite is
// synchronous), then fail with SQLITE_BUSY → CONFLICT (retryable).

import Database from 'better-sqlite3';
import { chmodSync, existsSync } from 'node:fs';
import { Admission } from './admission.js';
import { classifySqliteError, storageErrorFrom } from './error-classify.js';
import type { StorageError } from './errors.js';
import { introspectSqlite } from './schema-introspect.js';
import type { DbTable } from './schema-introspect.js';
import { SQLITE_DIALECT } from './sql-dialect.js';
import { SqliteGroupCommit } from './sqlite-group-commit.js';
import type { ConnectionOptions, SqlDriver, SqlRunner, TransactionOptions } from './sql-driver.js';
import type { Statement } from './sql-statements.js';

/** The connection lock's tag of a write transaction (one that may join a group commit). */
const WRITE_TAG = 'write';

/** Prepared statements kept per connection (least recently used ones are dropped). */
const STATEMENT_CACHE_SIZE = 256;

export interface SqliteDriverOptions {
  /** A file path, or `:memory:`. */
  readonly path: string;
  readonly displayUrl: string;
  /** How long a writer waits for another process's write lock (PRAGMA busy_timeout). */
  readonly busyTimeoutMs: number;
}

/** How long opening a file waits for another process that is switching the same file to WAL. */
export const WAL_SWITCH_WAIT_MS = 10_000;
const WAL_RETRY_MS = 20;

/** The part of a better-sqlite3 connection enableWal uses. */
interface PragmaTarget {
  pragma(source: string): unknown;
}

/**
 * `PRAGMA journal_mode = WAL`, retried while SQLite answers SQLITE_BUSY. Two processes opening one new
 * file at once (the Workers of `blockx up` start together) both switch it to WAL, and SQLite answers one
 * of them SQLITE_BUSY at once, without waiting in its busy handler (each holds the read lock the other
 * needs gone): that one tries again until the other's switch is done (then the file is in WAL already),
 * for at most `waitMs`. Any other error, and SQLITE_BUSY past `waitMs`, is thrown.
 */
export function enableWal(
  db: PragmaTarget,
  waitMs = WAL_SWITCH_WAIT_MS,
  clock: () => number = Date.now,
  sleep: (ms: number) => void = sleepSync,
): void {
  const until = clock() + waitMs;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || clock() >= until) throw err;
    }
    sleep(WAL_RETRY_MS);
  }
}

/** Blocks this thread for `ms` (the driver's constructor is synchronous, as better-sqlite3 is). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export class SqliteDriver implements SqlDriver {
  readonly kind = 'sqlite' as const;
  readonly dialect = SQLITE_DIALECT;
  private readonly db: Database.Database;
  private readonly lock: Admission;
  private readonly statements = new Map<string, Database.Statement<unknown[]>>();
  private readonly runner: SqlRunner;
  private readonly group: SqliteGroupCommit;
  private readonly nextIsWrite = (): boolean => this.lock.nextTag() === WRITE_TAG;

  constructor(private readonly opts: SqliteDriverOptions) {
    // A file this process creates is its owner's alone (0600; SQLite gives the -wal and -shm files the
    // same mode): an Executor running as its own user cannot read it (docs/security.md § Executors as
    // their own user). A file that was there is left as its owner made it.
    const creating = opts.path !== ':memory:' && opts.path !== '' && !existsSync(opts.path);
    this.db = new Database(opts.path);
    if (creating) chmodSync(opts.path, 0o600);
    try {
      if (opts.path !== ':memory:') enableWal(this.db);
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(opts.busyTimeoutMs))}`);
      // Integers come back as JS numbers: a stored value beyond ±2^53 comes back rounded, but a rounded
      // value is itself beyond Number.MAX_SAFE_INTEGER, so decoding still refuses it (BAD_VALUE) rather
      // than pass on a wrong number. (safeIntegers would allocate a BigInt per integer cell read.)
      this.db.defaultSafeIntegers(false);
    } catch (err) {
      this.db.close();
      throw err;
    }
    this.lock = new Admission(1, 0, opts.displayUrl, 'SQLite connection (a transaction holds it)');
    this.group = new SqliteGroupCommit(this.db);
    this.runner = {
      all: async (stmt) => this.prepare(stmt).raw(false).all(stmt.params) as Record<string, unknown>[],
      allRows: async (stmt) => this.prepare(stmt).raw(true).all(stmt.params) as unknown[][],
      run: async (stmt) => this.prepare(stmt).run(stmt.params).changes,
    };
  }

  async withConnection<T>(fn: (q: SqlRunner) => Promise<T>, opts: ConnectionOptions): Promise<T> {
    const unlock = await this.takeLock(opts);
    try {
      return await fn(this.runner);
    } finally {
      unlock();
    }
  }

  async withTransaction<T>(fn: (q: SqlRunner) => Promise<T>, opts: TransactionOptions): Promise<T> {
    if (opts.mode === 'write') {
      // Writes queued one behind the other share one COMMIT (sqlite-group-commit.ts).
      const release = await this.takeLock({ ...opts, tag: WRITE_TAG });
      return this.group.run(() => fn(this.runner), release, this.nextIsWrite);
    }
    const unlock = await this.takeLock(opts);
    try {
      this.db.exec('BEGIN IMMEDIATE');
      let result: T;
      try {
        result = await fn(this.runner);
      } catch (err) {
        this.rollback();
        throw err;
      }
      try {
        this.db.exec('COMMIT');
      } catch (err) {
        this.rollback();
        throw err;
      }
      return result;
    } finally {
      unlock();
    }
  }

  introspect(q: SqlRunner, table: string): Promise<DbTable | undefined> {
    return introspectSqlite(q, table);
  }

  classify(err: unknown, table: string | undefined): StorageError {
    return storageErrorFrom(classifySqliteError(err), err, this.opts.displayUrl, table);
  }

  async close(): Promise<void> {
    this.lock.close();
    this.statements.clear();
    // Closing rolls back a transaction still open; its callback's next write fails with CLOSED.
    if (this.db.open) this.db.close();
  }

  private takeLock(opts: ConnectionOptions & { readonly tag?: string }) {
    return this.lock.acquire({
      signal: opts.signal,
      waitMs: opts.deadline - performance.now(),
      table: opts.table,
      tag: opts.tag,
    });
  }

  private rollback(): void {
    if (!this.db.open || !this.db.inTransaction) return;
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // The transaction is gone already (SQLite rolls back on some errors by itself).
    }
  }

  private prepare(stmt: Statement): Database.Statement<unknown[]> {
    let prepared = this.statements.get(stmt.sql);
    if (prepared !== undefined) {
      // Re-insert: Map order is the recency order.
      this.statements.delete(stmt.sql);
    } else {
      prepared = this.db.prepare<unknown[]>(stmt.sql);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.statements.keys().next();
        if (!oldest.done) this.statements.delete(oldest.value);
      }
    }
    this.statements.set(stmt.sql, prepared);
    return prepared;
  }
}
