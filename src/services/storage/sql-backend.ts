// The StorageBackend both databases share: request checks, value encoding, admission, keyset
// pagination, transactions and migration, over a SqlDriver (sqlite-backend.ts, postgres-backend.ts) that
// only runs statements. Every error leaves as a StorageError with {table, backend}.

import { BytesRow, encodeRow } from '../../contracts/call-args.js';
import type { ColumnConfig, TableConfig } from '../../kernel/config-types.js';
import { Admission } from './admission.js';
import { TableWrites } from './bulk-writes.js';
import { StorageError, StorageErrorCode } from './errors.js';
import { planMigration } from './migrate.js';
import { driverRowText, rowJsonSelect, utf8Views } from './row-json.js';
import { checkScan, encodeKey, tableOf } from './request-check.js';
import type { RequestContext } from './request-check.js';
import type { DbTable } from './schema-introspect.js';
import { createBlockIndexSql, createTableSql } from './sql-dialect.js';
import type { SqlDriver, SqlRunner } from './sql-driver.js';
import { scanPage, selectByKeys } from './sql-statements.js';
import { SqlTransaction } from './sql-transaction.js';
import type { TransactionHost } from './sql-transaction.js';
import type {
  BackendKind,
  EncodedRow,
  MigrationReport,
  OpOptions,
  Row,
  RowKey,
  StorageBackend,
  StorageScanQuery,
  StorageTransaction,
} from './types.js';
import { decodeRow, encodeValue, keyId } from './value-codec.js';

/** Whether a JSON scan row's clean flag says its text is the row decodeRow gives (row-json.ts). */
const isClean = (flag: unknown): boolean => flag === 1 || flag === true;

/** The `fields` of an EncodedRow asked for none. */
const NO_FIELDS: Row = Object.freeze({});

/** Keys per getMany query. */
export const GET_MANY_CHUNK = 500;

export interface SqlBackendOptions {
  readonly displayUrl: string;
  readonly tables: Readonly<Record<string, TableConfig>>;
  readonly maxConcurrentOps: number;
  readonly admissionWaitMs: number;
  readonly scanBatchSize: number;
  /** How long close() lets running operations finish before closing connections (default 5 s). */
  readonly closeDrainMs?: number;
}

/** Carries an error of the transaction callback through the driver unchanged. */
class CallbackFailure {
  constructor(readonly error: unknown) {}
}

export class SqlBackend implements StorageBackend, TransactionHost {
  readonly kind: BackendKind;
  readonly displayUrl: string;
  /** The declared tables being served: the config's, then what serveTables swapped in. */
  private served: Readonly<Record<string, TableConfig>>;
  private context: RequestContext;
  private readonly gate: Admission;
  private readonly writes = new Map<string, TableWrites>();
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly driver: SqlDriver,
    private readonly opts: SqlBackendOptions,
  ) {
    this.kind = driver.kind;
    this.displayUrl = opts.displayUrl;
    this.served = opts.tables;
    this.context = { kind: driver.kind, backend: opts.displayUrl, tables: opts.tables };
    this.gate = new Admission(opts.maxConcurrentOps, opts.admissionWaitMs, opts.displayUrl);
  }

  get dialect() {
    return this.driver.dialect;
  }

  get tables(): Readonly<Record<string, TableConfig>> {
    return this.served;
  }

  get ctx(): RequestContext {
    return this.context;
  }

  async serveTables(tables: Readonly<Record<string, TableConfig>>): Promise<MigrationReport> {
    const report = await this.migrateTables(tables, false);
    this.served = tables;
    this.context = { ...this.context, tables };
    return report;
  }

  get admission() {
    return this.gate.snapshot;
  }

  isClosed(): boolean {
    return this.closed;
  }

  wrap(err: unknown, table: string | undefined): StorageError {
    if (err instanceof StorageError) return err;
    if (this.closed)
      return new StorageError(StorageErrorCode.CLOSED, `storage backend ${this.displayUrl} is closed`, {
        backend: this.displayUrl,
        cause: err,
        ...(table === undefined ? {} : { table }),
      });
    return this.driver.classify(err, table);
  }

  writesOf(table: string): TableWrites {
    let w = this.writes.get(table);
    if (w === undefined) {
      // A staging table name no declared table can have (those are lower-case identifiers).
      const stage = `BlockX stage ${Object.keys(this.tables).indexOf(table)}`;
      w = new TableWrites(this.dialect, table, this.tables[table] as TableConfig, stage);
      this.writes.set(table, w);
    }
    return w;
  }

  async migrate(opts: { readonly checkOnly?: boolean } = {}): Promise<MigrationReport> {
    return this.migrateTables(this.served, opts.checkOnly === true);
  }

  private async migrateTables(
    tables: Readonly<Record<string, TableConfig>>,
    checkOnly: boolean,
  ): Promise<MigrationReport> {
    return this.admitted(undefined, undefined, (deadline) =>
      this.driver.withTransaction(
        async (q) => {
          const actual = new Map<string, DbTable | undefined>();
          for (const name of Object.keys(tables)) actual.set(name, await this.driver.introspect(q, name));
          const plan = planMigration(this.dialect, tables, actual, checkOnly);
          if (plan.differences.length > 0)
            throw new StorageError(
              StorageErrorCode.SCHEMA_MISMATCH,
              `the database at ${this.displayUrl} does not match the configured tables ` +
                `(${plan.differences.length} difference${plan.differences.length === 1 ? '' : 's'}); ` +
                `nothing was changed:\n${plan.differences.map((d) => `  - ${d}`).join('\n')}`,
              { backend: this.displayUrl, differences: plan.differences },
            );
          for (const name of plan.create)
            await q.run({
              sql: createTableSql(this.dialect, name, tables[name] as TableConfig),
              params: [],
            });
          for (const name of plan.index) {
            const index = createBlockIndexSql(name, tables[name] as TableConfig);
            if (index !== undefined) await q.run({ sql: index, params: [] });
          }
          const indexed = plan.index.filter((name) => !plan.create.includes(name));
          return {
            created: plan.create,
            unchanged: plan.unchanged,
            ...(indexed.length === 0 ? {} : { indexed }),
          };
        },
        { mode: 'migration', deadline },
      ),
    );
  }

  async get(table: string, key: RowKey, opts: OpOptions = {}): Promise<Row | undefined> {
    const [row] = await this.getMany(table, [key], opts);
    return row;
  }

  async getMany(table: string, keys: readonly RowKey[], opts: OpOptions = {}): Promise<(Row | undefined)[]> {
    const t = tableOf(this.ctx, table);
    if (!Array.isArray(keys))
      throw new StorageError(StorageErrorCode.BAD_VALUE, `getMany needs an array of keys`, {
        table,
        backend: this.displayUrl,
      });
    const pkTypes = t.primaryKey.map((c) => (t.columns[c] as ColumnConfig).type);
    const ids: string[] = [];
    const unique = new Map<string, unknown[]>();
    for (const key of keys) {
      const encoded = encodeKey(this.ctx, table, t, key);
      const id = keyId(
        pkTypes,
        t.primaryKey.map((c) => key[c]),
      );
      ids.push(id);
      if (!unique.has(id)) unique.set(id, encoded);
    }
    if (ids.length === 0) return [];
    const columns = Object.keys(t.columns);
    const found = new Map<string, Row>();
    const batches = [...unique.values()];
    await this.read(table, opts.signal, async (q) => {
      for (let i = 0; i < batches.length; i += GET_MANY_CHUNK) {
        const stmt = selectByKeys(this.dialect, table, t, columns, batches.slice(i, i + GET_MANY_CHUNK));
        for (const raw of await q.all(stmt)) {
          const row = decodeRow(this.kind, table, t.columns, raw, columns, this.displayUrl);
          found.set(
            keyId(
              pkTypes,
              t.primaryKey.map((c) => row[c]),
            ),
            row,
          );
        }
      }
    });
    return ids.map((id) => found.get(id));
  }

  async *scan(
    table: string,
    query: StorageScanQuery = {},
    opts: OpOptions = {},
  ): AsyncGenerator<readonly Row[]> {
    const t = tableOf(this.ctx, table);
    const s = checkScan(this.ctx, table, t, query, this.opts.scanBatchSize);
    const project = s.columns.length !== s.selected.length;
    let remaining = s.limit;
    let after: unknown[] | undefined;
    while (remaining > 0) {
      const pageSize = Math.min(s.batchSize, remaining);
      const stmt = scanPage(this.dialect, table, t, s.selected, s.conditions, after, pageSize);
      const raw = await this.read(table, opts.signal, (q) => q.all(stmt));
      if (raw.length === 0) return;
      const rows = raw.map((r) => decodeRow(this.kind, table, t.columns, r, s.selected, this.displayUrl));
      const last = rows[rows.length - 1] as Row;
      after = t.primaryKey.map((c) => encodeValue(this.kind, (t.columns[c] as ColumnConfig).type, last[c]));
      remaining -= rows.length;
      yield project ? rows.map((r) => pick(r, s.columns)) : rows;
      if (raw.length < pageSize) return;
      // better-sqlite3 answers synchronously, so pages would follow each other as microtasks only: a long
      // scan would starve timers, gRPC and heartbeats. Let the event loop turn between pages.
      if (this.kind === 'sqlite') await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  async *scanJson(
    table: string,
    query: StorageScanQuery = {},
    fields: readonly string[] = [],
    opts: OpOptions = {},
  ): AsyncGenerator<readonly EncodedRow[]> {
    const t = tableOf(this.ctx, table);
    const s = checkScan(this.ctx, table, t, query, this.opts.scanBatchSize);
    for (const f of fields)
      if (!Object.hasOwn(t.columns, f))
        throw new StorageError(StorageErrorCode.UNKNOWN_COLUMN, `table "${table}" has no column "${f}"`, {
          table,
          column: f,
          backend: this.displayUrl,
        });
    // PostgreSQL reads values and writes each row's text here: its SQL JSON path made a 3,000-block
    // per-bundle backfill 3x slower (bench/backfill, same run: 22 s against 7.4 s; docs/performance.md §
    // Rows as JSON text). SQLite builds the text in SQL.
    if (this.kind === 'postgres') {
      yield* this.scanDriverText(table, t, s, fields, opts);
      return;
    }
    const json = rowJsonSelect(this.kind, t, s.columns);
    if (json === undefined) {
      // More columns than one SQL JSON expression takes: the rows as values, encoded here.
      yield* this.scanValuesAsJson(table, query, s.columns, fields, 0, opts);
      return;
    }
    // Each row: its key (for the next page and for re-reading a flagged row) and the fields as driver
    // values, then its text, then whether the text is exact (row-json.ts).
    const raw = Object.keys(t.columns).filter((c) => t.primaryKey.includes(c) || fields.includes(c));
    const keyAt = t.primaryKey.map((c) => raw.indexOf(c));
    const fieldAt = fields.map((c) => raw.indexOf(c));
    const textAt = raw.length;
    let remaining = s.limit;
    let after: unknown[] | undefined;
    while (remaining > 0) {
      const pageSize = Math.min(s.batchSize, remaining);
      const stmt = scanPage(this.dialect, table, t, raw, s.conditions, after, pageSize, json);
      let page: unknown[][];
      try {
        page = await this.read(table, opts.signal, (q) => q.allRows(stmt));
      } catch (err) {
        // A json column holding text that is not JSON fails the statement (SQLite's json()): the rest
        // of the scan as values, which fails as scan fails (BAD_VALUE naming the column) or goes on.
        if (opts.signal?.aborted === true) throw err;
        yield* this.scanValuesAsJson(table, query, s.columns, fields, s.limit - remaining, opts);
        return;
      }
      if (page.length === 0) return;
      const rows = new Array<EncodedRow>(page.length);
      let flagged: number[] | undefined;
      // SQLite: the clean rows' texts as bytes, one buffer for the page (row-json.ts utf8Views);
      // PostgreSQL: each a JSON string literal already.
      const bytes =
        this.kind === 'sqlite'
          ? utf8Views(page.map((r) => (isClean(r[textAt + 1]) ? (r[textAt] as string) : undefined)))
          : undefined;
      for (let i = 0; i < page.length; i++) {
        const r = page[i] as unknown[];
        if (isClean(r[textAt + 1])) {
          const f = this.fieldsOf(table, t, r, fields, fieldAt);
          rows[i] =
            bytes !== undefined ? new BytesRow(bytes[i]!, f) : { literal: r[textAt] as string, fields: f };
        } else (flagged ??= []).push(i);
      }
      if (flagged !== undefined) {
        // Rows SQL could not spell as decodeRow does: read them as values (the same error, or the same
        // value, as scan), in one batch.
        const keys = flagged.map((i) => this.keyOf(table, t, page[i] as unknown[], keyAt));
        const values = await this.getMany(table, keys, opts);
        flagged.forEach((i, k) => {
          const row = values[k];
          // Gone between the page and the re-read: left out, as a later page would not show it.
          if (row !== undefined) rows[i] = encodeRow(pick(row, s.columns), fields, row);
        });
      }
      const last = this.keyOf(table, t, page[page.length - 1] as unknown[], keyAt);
      after = t.primaryKey.map((c) => encodeValue(this.kind, (t.columns[c] as ColumnConfig).type, last[c]));
      remaining -= page.length;
      yield flagged === undefined ? rows : rows.filter((r) => r !== undefined);
      if (page.length < pageSize) return;
      if (this.kind === 'sqlite') await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /**
   * scanJson on PostgreSQL: pages of driver values (json and jsonb as their text), each row's JSON text
   * written from them (row-json.ts driverRowText) into one buffer per page (utf8Views), with no row
   * object and no JSON.stringify of a parsed json value on the way (docs/performance.md § Rows as bytes).
   * A row driverRowText cannot spell is decoded the ordinary way: scan's value, or scan's error.
   */
  private async *scanDriverText(
    table: string,
    t: TableConfig,
    s: ReturnType<typeof checkScan>,
    fields: readonly string[],
    opts: OpOptions,
  ): AsyncGenerator<readonly EncodedRow[]> {
    const read = [...new Set([...s.columns, ...t.primaryKey, ...fields])];
    const at = (names: readonly string[]): number[] => names.map((c) => read.indexOf(c));
    const keyAt = at(t.primaryKey);
    const fieldAt = at(fields);
    const textOf = driverRowText(t, s.columns, at(s.columns));
    const columnsAt = at(s.columns);
    let remaining = s.limit;
    let after: unknown[] | undefined;
    while (remaining > 0) {
      const pageSize = Math.min(s.batchSize, remaining);
      const stmt = scanPage(this.dialect, table, t, read, s.conditions, after, pageSize);
      const page = await this.read(table, opts.signal, (q) =>
        q.allRowsJsonText !== undefined ? q.allRowsJsonText(stmt) : q.allRows(stmt),
      );
      if (page.length === 0) return;
      const texts = page.map(
        (r) => textOf(r) ?? JSON.stringify(this.decodedAt(table, t, r, s.columns, columnsAt)),
      );
      const views = utf8Views(texts);
      yield page.map(
        (r, i) =>
          new BytesRow(
            views[i]!,
            fields.length === 0 ? NO_FIELDS : this.decodedAt(table, t, r, fields, fieldAt),
          ),
      );
      const last = this.decodedAt(table, t, page[page.length - 1] as unknown[], t.primaryKey, keyAt);
      after = t.primaryKey.map((c) => encodeValue(this.kind, (t.columns[c] as ColumnConfig).type, last[c]));
      remaining -= page.length;
      if (page.length < pageSize) return;
    }
  }

  /** The `names` of a driver row whose json values are text (scanDriverText), decoded as scan decodes them. */
  private decodedAt(
    table: string,
    t: TableConfig,
    r: readonly unknown[],
    names: readonly string[],
    at: readonly number[],
  ): Row {
    const raw: Record<string, unknown> = {};
    names.forEach((c, i) => {
      const v = r[at[i] as number];
      raw[c] = (t.columns[c] as ColumnConfig).type === 'json' && typeof v === 'string' ? JSON.parse(v) : v;
    });
    return decodeRow(this.kind, table, t.columns, raw, names, this.displayUrl);
  }

  /** scanJson through `scan`: the rows as values, encoded here, after skipping the first `skip`. */
  private async *scanValuesAsJson(
    table: string,
    query: StorageScanQuery,
    columns: readonly string[],
    fields: readonly string[],
    skip: number,
    opts: OpOptions,
  ): AsyncGenerator<readonly EncodedRow[]> {
    const read = [...new Set([...columns, ...fields])];
    const project = read.length !== columns.length;
    let left = skip;
    for await (const page of this.scan(table, { ...query, columns: read }, opts)) {
      const rows = left >= page.length ? [] : page.slice(left);
      left = Math.max(0, left - page.length);
      if (rows.length === 0) continue;
      // The rows' texts as bytes, one buffer for the page (row-json.ts utf8Views), as SQLite's SQL path
      // gives them: PostgreSQL's rows then travel to the executor as bytes too (docs/performance.md §
      // Rows as bytes).
      const views = utf8Views(rows.map((r) => JSON.stringify(project ? pick(r, columns) : r)));
      yield rows.map((r, i) => new BytesRow(views[i]!, fields.length === 0 ? NO_FIELDS : pick(r, fields)));
    }
  }

  /** The primary key of a JSON scan's result row (driver values at `at`), decoded. */
  private keyOf(table: string, t: TableConfig, r: readonly unknown[], at: readonly number[]): Row {
    const key: Record<string, unknown> = {};
    t.primaryKey.forEach((c, i) => (key[c] = r[at[i] as number]));
    return decodeRow(this.kind, table, t.columns, key, t.primaryKey, this.displayUrl);
  }

  /** The fields of a JSON scan's result row (driver values at `at`), decoded. */
  private fieldsOf(
    table: string,
    t: TableConfig,
    r: readonly unknown[],
    fields: readonly string[],
    at: readonly number[],
  ): Row {
    if (fields.length === 0) return NO_FIELDS;
    const values: Record<string, unknown> = {};
    fields.forEach((c, i) => (values[c] = r[at[i] as number]));
    return decodeRow(this.kind, table, t.columns, values, fields, this.displayUrl);
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>, opts: OpOptions = {}): Promise<T> {
    const { signal } = opts;
    try {
      return await this.admitted(signal, undefined, (deadline) =>
        this.driver.withTransaction(
          async (q) => {
            const tx = new SqlTransaction(this, q, signal);
            let result: T;
            try {
              result = await fn(tx);
            } catch (err) {
              throw new CallbackFailure(err);
            } finally {
              tx.end();
            }
            tx.assertCommittable();
            return result;
          },
          { mode: 'write', signal, deadline },
        ),
      );
    } catch (err) {
      if (err instanceof CallbackFailure) throw err.error;
      throw err;
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.gate.close();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.gate.whenIdle(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.opts.closeDrainMs ?? 5_000);
        }),
      ]);
      clearTimeout(timer);
      await this.driver.close();
    })();
    return this.closing;
  }

  private read<T>(
    table: string,
    signal: AbortSignal | undefined,
    fn: (q: SqlRunner) => Promise<T>,
  ): Promise<T> {
    return this.admitted(signal, table, (deadline) =>
      this.driver.withConnection(fn, { signal, deadline, table }),
    );
  }

  /** Runs `body` holding an admission permit; driver errors leave as StorageErrors. */
  private async admitted<T>(
    signal: AbortSignal | undefined,
    table: string | undefined,
    body: (deadline: number) => Promise<T>,
  ): Promise<T> {
    const deadline = performance.now() + this.opts.admissionWaitMs;
    const release = await this.gate.acquire({ signal, table });
    try {
      return await body(deadline);
    } catch (err) {
      throw err instanceof CallbackFailure ? err : this.wrap(err, table);
    } finally {
      release();
    }
  }
}

function pick(row: Row, columns: readonly string[]): Row {
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c] = row[c];
  return out;
}
