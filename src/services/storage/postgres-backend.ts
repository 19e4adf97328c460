// The shared backend: a pg.Pool of `poolSize` connections. Transactions are READ COMMITTED: the port's
// transactions only write, row writes are protected by PostgreSQL's row locks, and predicate writes
// (deleteWhere, hence block replacements) by the advisory locks sql-transaction.ts takes (write-locks.ts;
// why not SERIALIZABLE, with measurements: docs/storage.md, "Concurrent writes on PostgreSQL"). A
// deadlock or serialization failure is a retryable CONFLICT and the caller's retry scope re-runs.
//
// Connections die (server restart, pg_terminate_backend, network): the pool drops idle ones by itself
// (its 'error' event is handled here, as an unhandled one would crash the process), a connection that
// dies while leased has its own error listener for the lease, and a leased connection that saw a
// connection error or an abandoned query is destroyed on release instead of returning to the pool.
//
// int8 comes back as a JS number through a per-pool type parser (pg-types.ts), never a global one.

import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import type { CustomTypesConfig } from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import { classifyPostgresError, storageErrorFrom } from './error-classify.js';
import { StorageError, StorageErrorCode } from './errors.js';
import { PG_TYPES, PG_TYPES_JSON_TEXT } from './pg-types.js';
import { introspectPostgres } from './schema-introspect.js';
import type { DbTable } from './schema-introspect.js';
import { PgGroupCommit } from './pg-group-commit.js';
import { lostClientSettings } from './pg-lost-client.js';
import { POSTGRES_DIALECT } from './sql-dialect.js';
import type { ConnectionOptions, SqlDriver, SqlRunner, TransactionOptions } from './sql-driver.js';
import type { Statement } from './sql-statements.js';

/** pg_advisory_xact_lock key serialising concurrent migrations ("blockx" in ASCII). */
const MIGRATION_LOCK_KEY = 0x626c6f636b78;

export interface PostgresDriverOptions {
  readonly url: string;
  readonly displayUrl: string;
  readonly poolSize: number;
  /** Bound on opening a new connection (default 10 s). */
  readonly connectTimeoutMs?: number;
  /**
   * `storage.lostClientTimeoutMs`: the session settings that make the server abort the transaction of a
   * connection gone silent (./pg-lost-client.ts); undefined or 0 = the server's own.
   */
  readonly lostClientTimeoutMs?: number;
}

interface Lease {
  readonly client: pg.PoolClient;
  /** Set when the connection must not be reused (connection error, abandoned query). */
  broken: Error | undefined;
  readonly onError: (err: Error) => void;
}

export class PostgresDriver implements SqlDriver {
  readonly kind = 'postgres' as const;
  readonly dialect = POSTGRES_DIALECT;
  private readonly pool: pg.Pool;
  private readonly leases = new Set<Lease>();
  private readonly group: PgGroupCommit<SqlRunner, TransactionOptions>;

  constructor(private readonly opts: PostgresDriverOptions) {
    this.pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.poolSize,
      types: PG_TYPES,
      keepAlive: true,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
    });
    // An idle connection died; the pool has already dropped it and the next lease opens a new one.
    this.pool.on('error', () => {});
    const settings = lostClientSettings(opts.lostClientTimeoutMs ?? 0);
    // Queued on the new client before the lease's first query. A server (or a pooler) that refuses a
    // setting keeps its own behaviour for it; the connection is as good as without it, so no error.
    if (settings !== undefined)
      this.pool.on('connect', (client) => void client.query(settings).catch(() => {}));
    // Write groups on half the pool at most (a group holds its connection throughout): the other half
    // stays for reads, and writes beyond it queue and group. With a group per connection, a 3,000-block
    // backfill made 1.5 writes per transaction and no measurable gain; with half, 2.9 and a gain
    // (docs/storage.md § Group commit on PostgreSQL).
    this.group = new PgGroupCommit<SqlRunner, TransactionOptions>(
      (fn, o) => this.transaction(fn, o),
      Math.max(1, Math.floor(opts.poolSize / 2)),
      groupTransactionOptions,
      (o) => this.refusal(o),
    );
  }

  async withConnection<T>(fn: (q: SqlRunner) => Promise<T>, opts: ConnectionOptions): Promise<T> {
    const lease = await this.lease(opts);
    try {
      return await fn(this.runner(lease, opts.signal));
    } catch (err) {
      this.noteError(lease, err);
      throw err;
    } finally {
      this.release(lease);
    }
  }

  withTransaction<T>(fn: (q: SqlRunner) => Promise<T>, opts: TransactionOptions): Promise<T> {
    // Writes that wait for a turn share a transaction (pg-group-commit.ts); migrations run alone.
    return opts.mode === 'write' ? this.group.run(fn, opts) : this.transaction(fn, opts);
  }

  /** One transaction of its own on a leased connection. */
  private async transaction<T>(fn: (q: SqlRunner) => Promise<T>, opts: TransactionOptions): Promise<T> {
    const lease = await this.lease(opts);
    try {
      if (opts.mode === 'migration') {
        // READ COMMITTED: after waiting for the lock, catalog reads see what the other migrator made.
        await this.query(lease, { sql: 'BEGIN', params: [] });
        await this.query(lease, { sql: `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`, params: [] });
      } else {
        // Not SERIALIZABLE: concurrent delete-block-then-insert transactions on one table fail there with
        // 40001 (false positives of predicate locking) even for different blocks (docs/storage.md).
        await this.query(lease, { sql: 'BEGIN ISOLATION LEVEL READ COMMITTED', params: [] });
      }
      let result: T;
      try {
        result = await fn(this.runner(lease, opts.signal));
      } catch (err) {
        await this.rollback(lease);
        throw err;
      }
      try {
        await this.query(lease, { sql: 'COMMIT', params: [] });
      } catch (err) {
        await this.rollback(lease);
        throw err;
      }
      return result;
    } catch (err) {
      this.noteError(lease, err);
      throw err;
    } finally {
      this.release(lease);
    }
  }

  introspect(q: SqlRunner, table: string): Promise<DbTable | undefined> {
    return introspectPostgres(q, table);
  }

  classify(err: unknown, table: string | undefined): StorageError {
    return storageErrorFrom(classifyPostgresError(err), err, this.opts.displayUrl, table);
  }

  async close(): Promise<void> {
    // Leases still out after the backend's drain bound: destroy them, so pool.end() does not wait.
    for (const lease of [...this.leases]) {
      lease.broken ??= new Error('storage backend closed');
      this.release(lease);
    }
    await this.pool.end();
  }

  private runner(lease: Lease, signal: AbortSignal | undefined): SqlRunner {
    return {
      all: async (stmt) => (await this.query(lease, stmt, signal)).rows as Record<string, unknown>[],
      allRows: async (stmt) => (await this.query(lease, stmt, signal, 'array')).rows as unknown[][],
      allRowsJsonText: async (stmt) =>
        (await this.query(lease, stmt, signal, 'array', PG_TYPES_JSON_TEXT)).rows as unknown[][],
      run: async (stmt) => (await this.query(lease, stmt, signal)).rowCount ?? 0,
      copyFrom: (sql, data) => this.copyFrom(lease, sql, data, signal),
    };
  }

  private query(
    lease: Lease,
    stmt: Statement,
    signal?: AbortSignal,
    rowMode?: 'array',
    types?: CustomTypesConfig,
  ): Promise<pg.QueryResult> {
    if (lease.broken !== undefined) return Promise.reject(lease.broken);
    return this.abandonable(
      lease,
      lease.client.query({
        text: stmt.sql,
        values: stmt.params as unknown[],
        ...(rowMode === undefined ? {} : { rowMode }),
        ...(types === undefined ? {} : { types }),
      }),
      signal,
    );
  }

  /**
   * COPY ... FROM STDIN with `data` as the input (pg-copy-streams: CopyData messages, then CopyDone; it
   * settles once the server has answered ReadyForQuery). A COPY the server refuses fails like a statement,
   * leaving the connection usable (and the transaction to roll back).
   */
  private copyFrom(
    lease: Lease,
    sql: string,
    data: readonly string[],
    signal?: AbortSignal,
  ): Promise<number> {
    if (lease.broken !== undefined) return Promise.reject(lease.broken);
    const stream = lease.client.query(copyFromStdin(sql));
    const copied = pipeline(Readable.from(data), stream).then(() => stream.rowCount);
    return this.abandonable(lease, copied, signal);
  }

  /**
   * `pending`, or CANCELLED as soon as `signal` aborts. On abort the work is abandoned: the connection is
   * destroyed on release. No COMMIT was sent, so the server rolls its work back once it notices the closed
   * socket (at the latest when the statement ends).
   */
  private abandonable<T>(lease: Lease, pending: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    if (signal === undefined) return pending;
    if (signal.aborted) {
      pending.catch(() => {});
      lease.broken ??= new Error('query abandoned');
      return Promise.reject(this.cancelled(signal));
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        lease.broken ??= new Error('query abandoned');
        reject(this.cancelled(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      pending.then(
        (r) => {
          signal.removeEventListener('abort', onAbort);
          resolve(r);
        },
        (e: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  }

  /** Why a write that waited for a group must not start: as a wait for a connection would end. */
  private refusal(opts: TransactionOptions): StorageError | undefined {
    if (opts.signal?.aborted) return this.cancelled(opts.signal);
    if (performance.now() <= opts.deadline) return undefined;
    return new StorageError(
      StorageErrorCode.OVERLOADED,
      `no PostgreSQL connection for a write within its admission wait on ${this.opts.displayUrl}`,
      { backend: this.opts.displayUrl },
    );
  }

  private async lease(opts: ConnectionOptions): Promise<Lease> {
    const { signal } = opts;
    if (signal?.aborted) throw this.cancelled(signal);
    // Waiting for a busy pool is admission (bounded by the deadline → OVERLOADED); opening a new
    // connection is not (bounded by connectTimeoutMs → CONNECTION).
    const queued = this.pool.idleCount === 0 && this.pool.totalCount >= this.opts.poolSize;
    const connecting = this.pool.connect();
    const client = await new Promise<pg.PoolClient>((resolve, reject) => {
      let settled = false;
      const finish = (): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const giveUp = (err: StorageError): void => {
        if (!finish()) return;
        // The connection may still arrive; hand it straight back.
        connecting.then(
          (c) => c.release(),
          () => {},
        );
        reject(err);
      };
      const onAbort = (): void => giveUp(this.cancelled(signal));
      const waitMs = Math.max(0, opts.deadline - performance.now());
      const timer = queued
        ? setTimeout(
            () =>
              giveUp(
                new StorageError(
                  StorageErrorCode.OVERLOADED,
                  `no PostgreSQL connection free within the admission wait (pool of ${this.opts.poolSize}) on ${this.opts.displayUrl}`,
                  {
                    backend: this.opts.displayUrl,
                    ...(opts.table === undefined ? {} : { table: opts.table }),
                  },
                ),
              ),
            waitMs,
          )
        : undefined;
      signal?.addEventListener('abort', onAbort, { once: true });
      connecting.then(
        (c) => (finish() ? resolve(c) : undefined),
        (e: unknown) => (finish() ? reject(e) : undefined),
      );
    });
    const lease: Lease = {
      client,
      broken: undefined,
      onError: (err) => {
        lease.broken ??= err;
      },
    };
    client.on('error', lease.onError);
    this.leases.add(lease);
    return lease;
  }

  private release(lease: Lease): void {
    if (!this.leases.delete(lease)) return;
    lease.client.removeListener('error', lease.onError);
    // A broken connection is destroyed instead of going back to the pool. Keep swallowing its late
    // errors: with no listener, an 'error' event would crash the process.
    if (lease.broken !== undefined) lease.client.on('error', () => {});
    lease.client.release(lease.broken);
  }

  private async rollback(lease: Lease): Promise<void> {
    if (lease.broken !== undefined) return;
    try {
      await this.query(lease, { sql: 'ROLLBACK', params: [] });
    } catch (err) {
      lease.broken ??= err instanceof Error ? err : new Error(String(err));
    }
  }

  private noteError(lease: Lease, err: unknown): void {
    if (!(err instanceof StorageError) && classifyPostgresError(err) === StorageErrorCode.CONNECTION)
      lease.broken ??= err instanceof Error ? err : new Error(String(err));
  }

  private cancelled(signal: AbortSignal | undefined): StorageError {
    return new StorageError(StorageErrorCode.CANCELLED, `storage operation cancelled`, {
      backend: this.opts.displayUrl,
      cause: signal?.reason,
    });
  }
}

/**
 * A group's own transaction: a write, leased by the earliest of its members' deadlines, without a signal
 * (each member's transaction checks its own before every statement, sql-transaction.ts; one that aborts
 * fails the group, and it then fails alone).
 */
function groupTransactionOptions(members: readonly TransactionOptions[]): TransactionOptions {
  return { mode: 'write', deadline: Math.min(...members.map((m) => m.deadline)) };
}
