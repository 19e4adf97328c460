// An in-memory StorageBackend for adapter tests (Temporal-style fake of the port, not a module mock).
// Small but faithful to the port's contract: unknown tables/columns and bad keys or rows fail with the
// same StorageError codes as the real backends, scans are ordered by primary key and honour
// where / blockRange / columns / limit / batchSize page by page, a transaction applies its writes on
// commit only (a rejecting callback or failed commit leaves nothing behind), and a signal that is
// aborted cancels an operation with CANCELLED.
//
// Test hooks: `failNext(op, error, times, skip)` makes calls of `op` throw (after `skip` successes); `hold(op)` parks calls
// of `op` (as if waiting for admission) until the returned release function runs; `calls` counts every
// call per op; `txLog` records each write issued inside transactions (committed or not).

import { JOB_TERMS_TABLE } from '../../src/contracts/write-fence.js';
import { encodeRow } from '../../src/contracts/call-args.js';
import type { TableConfig } from '../../src/kernel/config-types.js';
import { StorageError, StorageErrorCode } from '../../src/services/storage/errors.js';
import { keyProblems, rowProblems } from '../../src/services/storage/row-check.js';
import type {
  BlockRange,
  MigrationReport,
  OpOptions,
  EncodedRow,
  Row,
  RowFilter,
  RowKey,
  StorageBackend,
  StorageScanQuery,
  StorageTransaction,
} from '../../src/services/storage/types.js';

export type MemoryOp =
  | 'get'
  | 'getMany'
  | 'scan'
  | 'scanPage'
  | 'transaction'
  | 'commit'
  | 'upsert'
  | 'insertRows'
  | 'delete'
  | 'deleteWhere';

export interface TxLogEntry {
  readonly op: 'upsert' | 'insertRows' | 'delete' | 'deleteWhere';
  readonly table: string;
  readonly args: readonly unknown[];
}

type Data = Map<string, Map<string, Row>>;

export class MemoryStorageBackend implements StorageBackend {
  readonly kind = 'sqlite' as const;
  readonly displayUrl = 'memory:';
  readonly calls: Record<MemoryOp, number> = {
    get: 0,
    getMany: 0,
    scan: 0,
    scanPage: 0,
    transaction: 0,
    commit: 0,
    upsert: 0,
    insertRows: 0,
    delete: 0,
    deleteWhere: 0,
  };
  readonly txLog: TxLogEntry[] = [];
  /** Scans started and not yet finished or released (a leaked cursor stays counted). */
  openScans = 0;
  private data: Data = new Map();
  private readonly failures = new Map<MemoryOp, { error: unknown; times: number; skip: number }[]>();
  private readonly gates = new Map<MemoryOp, Promise<void>>();
  private txChain: Promise<unknown> = Promise.resolve();
  private inUse = 0;
  private waiting = 0;
  private closed = false;

  constructor(
    public tables: Readonly<Record<string, TableConfig>>,
    private readonly scanBatchSize = 100,
  ) {
    for (const name of Object.keys(tables)) this.data.set(name, new Map());
  }

  get admission(): { inUse: number; waiting: number; capacity: number } {
    return { inUse: this.inUse, waiting: this.waiting, capacity: 32 };
  }

  /** After `skip` more calls of `op` succeed, the next `times` calls throw `error`. */
  failNext(op: MemoryOp, error: unknown, times = 1, skip = 0): void {
    const queue = this.failures.get(op) ?? [];
    queue.push({ error, times, skip });
    this.failures.set(op, queue);
  }

  /** Parks calls of `op` until the returned function is called (they still honour their signal). */
  hold(op: MemoryOp): () => void {
    let release!: () => void;
    this.gates.set(op, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.gates.delete(op);
      release();
    };
  }

  /** Writes rows directly (outside any transaction), validated like insertRows. */
  seed(table: string, rows: readonly Row[]): void {
    const t = this.table(table);
    const target = this.data.get(table)!;
    for (const row of rows) this.putRow(target, table, t, row);
  }

  /** Every row of `table`, in primary key order. */
  rows(table: string): Row[] {
    const t = this.table(table);
    return sortRows([...this.data.get(table)!.values()], t);
  }

  migrate(): Promise<MigrationReport> {
    return Promise.resolve({ created: [], unchanged: Object.keys(this.tables) });
  }

  serveTables(tables: Readonly<Record<string, TableConfig>>): Promise<MigrationReport> {
    const created = Object.keys(tables).filter((name) => !this.data.has(name));
    for (const name of created) this.data.set(name, new Map());
    this.tables = tables;
    return Promise.resolve({ created, unchanged: Object.keys(tables).filter((n) => !created.includes(n)) });
  }

  async get(table: string, key: RowKey, opts?: OpOptions): Promise<Row | undefined> {
    await this.enter('get', opts);
    try {
      const t = this.table(table);
      return this.data.get(table)!.get(pkString(this.checkKey(table, t, key), t));
    } finally {
      this.inUse--;
    }
  }

  async getMany(table: string, keys: readonly RowKey[], opts?: OpOptions): Promise<(Row | undefined)[]> {
    await this.enter('getMany', opts);
    try {
      const t = this.table(table);
      const rows = this.data.get(table)!;
      return keys.map((key) => rows.get(pkString(this.checkKey(table, t, key), t)));
    } finally {
      this.inUse--;
    }
  }

  async *scan(table: string, query: StorageScanQuery = {}, opts?: OpOptions): AsyncIterable<readonly Row[]> {
    await this.enter('scan', opts);
    this.inUse--;
    const t = this.table(table);
    for (const column of [...Object.keys(query.where ?? {}), ...(query.columns ?? [])]) {
      if (t.columns[column] === undefined)
        throw new StorageError(StorageErrorCode.UNKNOWN_COLUMN, `table "${table}" has no column "${column}"`);
    }
    let rows = filterRows(table, t, [...this.data.get(table)!.values()], query.where ?? {}, query.blockRange);
    rows = sortRows(rows, t).slice(0, query.limit ?? Infinity);
    const batch = Math.max(1, query.batchSize ?? this.scanBatchSize);
    this.openScans++;
    try {
      for (let i = 0; i < rows.length; i += batch) {
        await this.enter('scanPage', opts);
        this.inUse--;
        yield rows.slice(i, i + batch).map((row) => project(row, query.columns));
      }
    } finally {
      this.openScans--;
    }
  }

  /** The rows of `scan`, encoded here (the SQL backends have the database write the text). */
  async *scanJson(
    table: string,
    query: StorageScanQuery = {},
    fields: readonly string[] = [],
    opts?: OpOptions,
  ): AsyncIterable<readonly EncodedRow[]> {
    const columns = query.columns === undefined ? undefined : [...new Set([...query.columns, ...fields])];
    for await (const page of this.scan(table, { ...query, ...(columns ? { columns } : {}) }, opts))
      yield page.map((row) => encodeRow(project(row, query.columns), fields, row));
  }

  async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>, opts?: OpOptions): Promise<T> {
    const run = async (): Promise<T> => {
      await this.enter('transaction', opts);
      const work: Data = new Map([...this.data].map(([name, rows]) => [name, new Map(rows)]));
      let open = true;
      const guard = (op: TxLogEntry['op'], table: string, args: unknown[]): TableConfig => {
        if (!open) throw new StorageError(StorageErrorCode.QUERY_FAILED, 'transaction already finished');
        this.calls[op]++;
        this.txLog.push({ op, table, args });
        this.injected(op);
        if (opts?.signal?.aborted) throw cancelled();
        return this.table(table);
      };
      const tx: StorageTransaction = {
        upsert: async (table, key, values) => {
          const t = guard('upsert', table, [key, values]);
          this.checkKey(table, t, key);
          this.putRow(work.get(table)!, table, t, { ...values, ...key });
        },
        insertRows: async (table, rows) => {
          const t = guard('insertRows', table, [rows]);
          for (const row of rows) this.putRow(work.get(table)!, table, t, row);
        },
        delete: async (table, key) => {
          const t = guard('delete', table, [key]);
          work.get(table)!.delete(pkString(this.checkKey(table, t, key), t));
        },
        deleteWhere: async (table, where, blockRange) => {
          const t = guard('deleteWhere', table, [where, blockRange]);
          const rows = work.get(table)!;
          const doomed = filterRows(table, t, [...rows.values()], where, blockRange);
          for (const row of doomed) rows.delete(pkString(row, t));
          return doomed.length;
        },
        checkFence: async (fence) => {
          // One transaction at a time here, so no claim comes between the check and the commit.
          const terms = [...(work.get(JOB_TERMS_TABLE)?.values() ?? [])];
          const stored = terms.find((row) => row.job_id === fence.jobId);
          if (stored === undefined || Number(stored.term) !== fence.term)
            throw new StorageError(
              StorageErrorCode.FENCED,
              `job ${fence.jobId}: term ${fence.term} is not the newest`,
            );
        },
      };
      try {
        const result = await fn(tx);
        this.calls.commit++;
        this.injected('commit');
        if (opts?.signal?.aborted) throw cancelled();
        this.data = work;
        return result;
      } finally {
        open = false;
        this.inUse--;
      }
    };
    const result = this.txChain.then(run, run);
    this.txChain = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Counts the call, waits at a held gate (as admission would), applies injected failures. */
  private async enter(op: MemoryOp, opts: OpOptions | undefined): Promise<void> {
    this.calls[op]++;
    if (this.closed) throw new StorageError(StorageErrorCode.CLOSED, 'backend is closed');
    if (opts?.signal?.aborted) throw cancelled();
    const gate = this.gates.get(op);
    if (gate !== undefined) {
      this.waiting++;
      try {
        await waitOrAbort(gate, opts?.signal);
      } finally {
        this.waiting--;
      }
    }
    this.injected(op);
    this.inUse++;
  }

  private injected(op: MemoryOp): void {
    const queue = this.failures.get(op);
    const next = queue?.[0];
    if (queue === undefined || next === undefined) return;
    if (next.skip > 0) {
      next.skip--;
      return;
    }
    if (--next.times <= 0) queue.shift();
    throw next.error;
  }

  private table(name: string): TableConfig {
    const t = this.tables[name];
    if (t === undefined) throw new StorageError(StorageErrorCode.UNKNOWN_TABLE, `unknown table "${name}"`);
    return t;
  }

  private checkKey(table: string, t: TableConfig, key: RowKey): RowKey {
    const problems = keyProblems(table, t, key);
    if (problems.length > 0)
      throw new StorageError(StorageErrorCode.BAD_VALUE, problems.join('; '), { table });
    return key;
  }

  private putRow(target: Map<string, Row>, table: string, t: TableConfig, row: Row): void {
    const problems = rowProblems(table, t, row);
    if (problems.length > 0)
      throw new StorageError(StorageErrorCode.BAD_VALUE, problems.join('; '), { table });
    const full: Record<string, unknown> = {};
    for (const column of Object.keys(t.columns)) full[column] = row[column] ?? null;
    target.set(pkString(full, t), Object.freeze(full));
  }
}

function cancelled(): StorageError {
  return new StorageError(StorageErrorCode.CANCELLED, 'operation cancelled by its signal');
}

function waitOrAbort(gate: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return gate;
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(cancelled());
    signal.addEventListener('abort', onAbort, { once: true });
    void gate.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

function pkString(row: RowKey, t: TableConfig): string {
  return JSON.stringify(t.primaryKey.map((column) => row[column]));
}

function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = JSON.stringify(a) ?? '';
  const sb = JSON.stringify(b) ?? '';
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function sortRows(rows: Row[], t: TableConfig): Row[] {
  return rows.sort((a, b) => {
    for (const column of t.primaryKey) {
      const c = compareValues(a[column], b[column]);
      if (c !== 0) return c;
    }
    return 0;
  });
}

function filterRows(
  table: string,
  t: TableConfig,
  rows: Row[],
  where: RowFilter,
  blockRange: BlockRange | undefined,
): Row[] {
  for (const column of Object.keys(where)) {
    if (t.columns[column] === undefined)
      throw new StorageError(StorageErrorCode.UNKNOWN_COLUMN, `table "${table}" has no column "${column}"`);
  }
  const blockColumn = t.blockColumn;
  if (blockRange !== undefined && blockColumn === undefined)
    throw new StorageError(StorageErrorCode.BAD_VALUE, `table "${table}" has no block column`, { table });
  return rows.filter((row) => {
    for (const [column, wanted] of Object.entries(where)) {
      const value = JSON.stringify(row[column]);
      const ok = Array.isArray(wanted)
        ? wanted.some((w) => JSON.stringify(w) === value)
        : JSON.stringify(wanted) === value;
      if (!ok) return false;
    }
    if (blockRange !== undefined && blockColumn !== undefined) {
      const n = row[blockColumn] as number;
      if (n < blockRange.from || n > blockRange.to) return false;
    }
    return true;
  });
}

function project(row: Row, columns: readonly string[] | undefined): Row {
  if (columns === undefined) return row;
  const out: Record<string, unknown> = {};
  for (const column of columns) out[column] = row[column];
  return out;
}
