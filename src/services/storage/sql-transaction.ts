// The writes of one transaction (StorageTransaction) over a driver's transaction runner. Requests are
// validated before any SQL runs; a validation error leaves the transaction usable. A statement that
// fails inside the database poisons the transaction: it rolls back even if the callback swallowed the
// error (PostgreSQL would otherwise turn the COMMIT of an aborted transaction into a silent ROLLBACK).
//
// A deleteWhere first takes the advisory locks of the region it deletes (write-locks.ts; PostgreSQL
// only, held to the end of the transaction), so concurrent replacements of one block or bundle run one
// after the other even under READ COMMITTED — see docs/storage.md, "Concurrent writes on PostgreSQL".

import { JOB_TERMS_TABLE, type WriteFence } from '../../contracts/write-fence.js';
import type { TableConfig } from '../../kernel/config-types.js';
import { COPY_MIN_ROWS } from './bulk-writes.js';
import type { TableWrites } from './bulk-writes.js';
import { StorageError, StorageErrorCode } from './errors.js';
import { encodeCopyText, encodeParams } from './row-encoder.js';
import { conditionsOf, encodeKey, encodeRow, mergeUpsert, tableOf } from './request-check.js';
import type { RequestContext } from './request-check.js';
import type { Dialect } from './sql-dialect.js';
import type { SqlRunner } from './sql-driver.js';
import { deleteByKey, deleteWhere } from './sql-statements.js';
import type { BlockRange, Row, RowFilter, RowKey, StorageTransaction } from './types.js';
import { deleteRegion, keyId as lockId, lockStatement, regionLocks } from './write-locks.js';

/** What a transaction needs from its backend. */
export interface TransactionHost {
  readonly ctx: RequestContext;
  readonly dialect: Dialect;
  isClosed(): boolean;
  /** Any error as a StorageError (StorageErrors pass through). */
  wrap(err: unknown, table: string | undefined): StorageError;
  /** The statements that write rows to `table` (cached per table; bulk-writes.ts). */
  writesOf(table: string): TableWrites;
}

/** The staged tables of each database transaction, by its runner (see SqlTransaction.staged). */
const STAGED_BY_RUNNER = new WeakMap<SqlRunner, Set<string>>();

export class SqlTransaction implements StorageTransaction {
  /** The first failure inside the database, if any: the transaction must roll back. */
  failure: StorageError | undefined;
  private ended = false;
  /** Advisory locks this transaction holds: key id → exclusive. */
  private readonly held = new Map<string, boolean>();
  /**
   * Tables whose PostgreSQL staging table the database transaction has filled (bulk-writes.ts): kept per
   * runner, not per SqlTransaction, because the members of a PostgreSQL group commit share one runner and
   * one database transaction (pg-group-commit.ts), so a member must empty what an earlier one staged.
   */
  private readonly staged: Set<string>;

  constructor(
    private readonly host: TransactionHost,
    private readonly q: SqlRunner,
    private readonly signal: AbortSignal | undefined,
  ) {
    let staged = STAGED_BY_RUNNER.get(q);
    if (staged === undefined) STAGED_BY_RUNNER.set(q, (staged = new Set()));
    this.staged = staged;
  }

  /** No further statements: the callback has settled. */
  end(): void {
    this.ended = true;
  }

  /** Throws when the transaction must not commit: a statement failed or the signal aborted. */
  assertCommittable(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.signal?.aborted) throw this.cancelled(undefined);
  }

  async upsert(table: string, key: RowKey, values: Row): Promise<void> {
    const { ctx } = this.host;
    const t = tableOf(ctx, table);
    const params = encodeRow(ctx, table, t, mergeUpsert(ctx, table, t, key, values));
    const sql = this.host.writesOf(table).insertSql(1);
    await this.exec(table, () => this.q.run({ sql, params }));
  }

  async insertRows(table: string, rows: readonly Row[]): Promise<void> {
    const { ctx } = this.host;
    const t = tableOf(ctx, table);
    if (!Array.isArray(rows))
      throw new StorageError(StorageErrorCode.BAD_VALUE, `insertRows needs an array of rows`, {
        table,
        backend: ctx.backend,
      });
    if (rows.length === 0) return;
    const writes = this.host.writesOf(table);
    const { copyFrom } = this.q;
    if (copyFrom !== undefined && rows.length >= COPY_MIN_ROWS) {
      // Every row is checked and encoded before any SQL runs: a bad row writes nothing.
      const copy = encodeCopyText(ctx, table, t, rows);
      const st = writes.staged;
      const restage = this.staged.has(table);
      await this.exec(table, async () => {
        await this.q.run({ sql: st.create, params: [] });
        if (restage) await this.q.run({ sql: st.truncate, params: [] });
        this.staged.add(table);
        await copyFrom(st.copy, copy.text);
        await this.q.run({ sql: st.upsert, params: [] });
      });
      return;
    }
    const encoded = encodeParams(ctx, table, t, rows, this.host.dialect.kind === 'postgres');
    await this.exec(table, async () => {
      let offset = 0;
      for (const n of writes.statementSizes(encoded.rows)) {
        const params = encoded.values.slice(offset * writes.width, (offset + n) * writes.width);
        await this.q.run({ sql: writes.insertSql(n), params });
        offset += n;
      }
    });
  }

  async delete(table: string, key: RowKey): Promise<void> {
    const t = tableOf(this.host.ctx, table);
    const encoded = encodeKey(this.host.ctx, table, t, key);
    await this.exec(table, () => this.q.run(deleteByKey(this.host.dialect, table, t, encoded)));
  }

  async deleteWhere(table: string, where: RowFilter, blockRange?: BlockRange): Promise<number> {
    const t = tableOf(this.host.ctx, table);
    const conditions = conditionsOf(this.host.ctx, table, t, where, blockRange);
    return this.exec(table, async () => {
      await this.lockRegion(table, t, where, blockRange);
      return this.q.run(deleteWhere(this.host.dialect, table, conditions));
    });
  }

  async checkFence(fence: WriteFence): Promise<void> {
    const { dialect } = this.host;
    // FOR SHARE: a claim of a newer term (a DELETE of this row) waits until this transaction ends, while
    // fenced writers of one job do not wait for each other. SQLite's BEGIN IMMEDIATE already excludes it.
    const sql =
      `SELECT term FROM ${JOB_TERMS_TABLE} WHERE job_id = ${dialect.placeholder(1)}` +
      (dialect.kind === 'postgres' ? ' FOR SHARE' : '');
    const rows = await this.exec(JOB_TERMS_TABLE, () => this.q.all({ sql, params: [fence.jobId] }));
    const stored = rows[0] === undefined ? undefined : Number(rows[0].term);
    if (stored === fence.term) return;
    this.failure ??= fencedError(fence, stored, this.host.ctx.backend);
    throw this.failure;
  }

  /** Takes the locks of the region a deleteWhere covers that this transaction does not hold yet. */
  private async lockRegion(
    table: string,
    t: TableConfig,
    where: RowFilter,
    blockRange: BlockRange | undefined,
  ): Promise<void> {
    // Advisory locks are PostgreSQL's: SQLite has one writer, so no lock keys are worked out there.
    if (this.host.dialect.kind !== 'postgres') return;
    const missing = regionLocks(deleteRegion(table, t, where ?? {}, blockRange)).filter((l) => {
      const held = this.held.get(lockId(l));
      return held === undefined || (l.exclusive && !held);
    });
    const stmt = lockStatement(this.host.dialect, missing);
    if (stmt === undefined) return;
    await this.q.all(stmt);
    for (const l of missing) this.held.set(lockId(l), l.exclusive || this.held.get(lockId(l)) === true);
  }

  private async exec<T>(table: string, body: () => Promise<T>): Promise<T> {
    const backend = this.host.ctx.backend;
    if (this.host.isClosed())
      throw new StorageError(StorageErrorCode.CLOSED, `storage backend ${backend} is closed`, {
        table,
        backend,
      });
    if (this.ended)
      throw new StorageError(
        StorageErrorCode.QUERY_FAILED,
        `transaction already finished: a write on table "${table}" came after its callback settled`,
        { table, backend },
      );
    if (this.failure !== undefined) throw this.failure;
    if (this.signal?.aborted) {
      this.failure = this.cancelled(table);
      throw this.failure;
    }
    try {
      return await body();
    } catch (err) {
      const e = this.host.wrap(err, table);
      this.failure ??= e;
      throw e;
    }
  }

  private cancelled(table: string | undefined): StorageError {
    return new StorageError(StorageErrorCode.CANCELLED, `storage transaction cancelled`, {
      backend: this.host.ctx.backend,
      cause: this.signal?.reason,
      ...(table === undefined ? {} : { table }),
    });
  }
}

/** The write's term is not the job's newest (or the job has none): nothing of the transaction commits. */
function fencedError(fence: WriteFence, stored: number | undefined, backend: string): StorageError {
  return new StorageError(
    StorageErrorCode.FENCED,
    `job ${fence.jobId}: this write's term ${fence.term} is not the job's newest ` +
      `(${stored === undefined ? 'no term is stored' : `term ${stored} is`}): a newer runner holds the job; nothing written`,
    { table: JOB_TERMS_TABLE, backend },
  );
}
