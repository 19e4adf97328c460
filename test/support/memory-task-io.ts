// A fake of the TaskIo port over in-memory tables, for plugin tests (the port, not a module mock).
//
// Tables are declared like `tables:` in blockx.config.yaml (columns, primaryKey, blockColumn,
// blockHashColumn, chainColumn); `MemoryTaskIo.fromConfigFile()` takes them from the repo's config. It
// keeps the storage port's rules that plugins depend on:
//   - scans are ordered by primary key and yielded page by page (lazily); `block` as a number matches the
//     blockColumn, as a string the blockHashColumn; unknown tables, columns and options are errors;
//   - rows are checked with the storage row checks (every non-nullable column, JSON value types);
//   - a transaction works on a copy and replaces the tables only when its callback resolves and the
//     commit succeeds, so a failed one leaves the prior state;
//   - failures can be injected per operation (`failNext`), e.g. a retryable StorageError at commit.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { argsValuesOf, encodeRow, type CallArgs } from '../../src/contracts/call-args.js';
import type { ColumnConfig, TableConfig } from '../../src/kernel/config-types.js';
import type {
  BlockColumns,
  BlockRange,
  BlockSelector,
  EncodedRow,
  Row,
  RowFilter,
  RowKey,
  ScanQuery,
  TaskIo,
  TaskIoTransaction,
  WriteFence,
} from '../../src/kernel/plugin-types.js';
import { rowScan, type RowScan } from '../../src/kernel/row-scan.js';
import { StorageError, StorageErrorCode } from '../../src/services/storage/errors.js';
import { keyProblems, rowProblems } from '../../src/services/storage/row-check.js';
import { matches, pkOf, project, sortedRows } from './memory-rows.js';

/** Operations a failure can be injected into. `commit` fails after the callback resolved. */
export type MemoryIoOp = 'get' | 'getMany' | 'scan' | 'transaction' | 'commit';

export interface InjectedFailure {
  readonly op: MemoryIoOp;
  readonly error: Error;
  /** Only operations on this table (ignored for transaction/commit). */
  readonly table?: string;
  /** scan: fail after yielding this many rows (default 0: on the first read). */
  readonly afterRows?: number;
  /** How many matching operations fail (default 1). */
  readonly times?: number;
}

type Tables = Map<string, Map<string, Row>>;

const SCAN_OPTIONS = new Set(['block', 'blockRange', 'where', 'columns', 'limit']);
const DEFAULT_CONFIG = new URL('../../blockx.config.yaml', import.meta.url);

export class MemoryTaskIo implements TaskIo {
  private data: Tables = new Map();
  private readonly failures: { failure: InjectedFailure; left: number }[] = [];
  /** Every scan issued, in order, for assertions on what a plugin asked for. */
  readonly scans: { table: string; query: ScanQuery }[] = [];
  /** Rows handed out by scans so far (a streaming consumer that stops early reads fewer). */
  rowsRead = 0;
  commits = 0;
  /** The newest term of each job, for fenced writes (`checkFence`); set it as a claim would. */
  readonly terms = new Map<string, number>();

  constructor(
    readonly tables: Readonly<Record<string, TableConfig>>,
    private readonly pageSize = 2,
  ) {
    for (const name of Object.keys(tables)) this.data.set(name, new Map());
  }

  /** The tables of a blockx.config.yaml (default: the repository's). */
  static fromConfigFile(file: URL | string = DEFAULT_CONFIG, pageSize?: number): MemoryTaskIo {
    const doc = parse(readFileSync(file, 'utf8')) as { tables: Record<string, RawTable> };
    const tables: Record<string, TableConfig> = {};
    for (const [name, raw] of Object.entries(doc.tables)) {
      const columns: Record<string, ColumnConfig> = {};
      for (const [c, decl] of Object.entries(raw.columns))
        columns[c] = { type: decl.type, nullable: decl.nullable ?? false };
      tables[name] = { ...raw, columns };
    }
    return new MemoryTaskIo(tables, pageSize);
  }

  /** Inserts rows directly (no transaction, no failure injection). */
  seed(table: string, rows: readonly Row[]): this {
    for (const row of rows) putRow(this.tables, this.data, table, row);
    return this;
  }

  /** The rows of a table, ordered by primary key. */
  rows(table: string): Row[] {
    return sortedRows(this.tableData(this.data, table), this.config(table)).map((r) => ({ ...r }));
  }

  /** Every table's rows (for "state unchanged" assertions). */
  snapshot(): Record<string, Row[]> {
    return Object.fromEntries([...this.data.keys()].map((t) => [t, this.rows(t)]));
  }

  failNext(failure: InjectedFailure): this {
    this.failures.push({ failure, left: failure.times ?? 1 });
    return this;
  }

  async get(table: string, key: RowKey): Promise<Row | null> {
    this.take('get', table);
    const config = this.config(table);
    check(table, keyProblems(table, config, key));
    const row = this.tableData(this.data, table).get(pkOf(config, key));
    return row ? { ...row } : null;
  }

  async getMany(table: string, keys: readonly RowKey[]): Promise<(Row | null)[]> {
    this.take('getMany', table);
    const config = this.config(table);
    const data = this.tableData(this.data, table);
    return keys.map((key) => {
      check(table, keyProblems(table, config, key));
      const row = data.get(pkOf(config, key));
      return row ? { ...row } : null;
    });
  }

  /** The table's block columns as declared (TaskIo.blockColumns). */
  blockColumns(table: string): BlockColumns {
    const t = this.config(table);
    return {
      ...(t.blockColumn === undefined ? {} : { block: t.blockColumn }),
      ...(t.blockHashColumn === undefined ? {} : { hash: t.blockHashColumn }),
      ...(t.chainColumn === undefined ? {} : { chain: t.chainColumn }),
    };
  }

  scan(table: string, query: ScanQuery = {}): RowScan<Row> {
    return rowScan(() => this.scanRows(table, query));
  }

  /** The rows of `scan` as JSON text (encoded here), with `fields` beside each. */
  scanJson(table: string, query: ScanQuery = {}, fields: readonly string[] = []): RowScan<EncodedRow> {
    return rowScan(() => this.scanJsonRows(table, query, fields));
  }

  private async *scanJsonRows(
    table: string,
    query: ScanQuery,
    fields: readonly string[],
  ): AsyncGenerator<EncodedRow> {
    const columns = query.columns === undefined ? undefined : [...new Set([...query.columns, ...fields])];
    for await (const row of this.scanRows(table, { ...query, ...(columns ? { columns } : {}) }))
      yield encodeRow(project(row, query.columns), fields, row);
  }

  private async *scanRows(table: string, query: ScanQuery): AsyncGenerator<Row> {
    this.scans.push({ table, query });
    const failure = this.take('scan', table, true);
    const config = this.config(table);
    for (const option of Object.keys(query)) {
      if (!SCAN_OPTIONS.has(option)) throw badValue(table, `unknown scan option "${option}"`);
    }
    const { block, blockRange, where = {}, columns, limit } = query;
    checkColumns(table, config, [...Object.keys(where), ...(columns ?? [])]);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0))
      throw badValue(table, `limit must be a non-negative integer, got ${String(limit)}`);
    const filter: Record<string, unknown> = { ...where };
    if (typeof block === 'number') filter[requireColumn(table, config.blockColumn, 'blockColumn')] = block;
    if (typeof block === 'string')
      filter[requireColumn(table, config.blockHashColumn, 'blockHashColumn')] = block;
    if (blockRange) requireColumn(table, config.blockColumn, 'blockColumn');
    const matching = sortedRows(this.tableData(this.data, table), config).filter((row) =>
      matches(row, filter, config.blockColumn, blockRange),
    );
    const rows = limit === undefined ? matching : matching.slice(0, limit);
    for (let i = 0; i < rows.length; i++) {
      if (failure && i === (failure.afterRows ?? 0)) throw failure.error;
      if (i % this.pageSize === 0) await Promise.resolve(); // one "round trip" per page
      this.rowsRead++;
      yield project(rows[i] as Row, columns);
    }
    if (failure && rows.length <= (failure.afterRows ?? 0)) throw failure.error;
  }

  async transaction<T>(fn: (tx: TaskIoTransaction) => Promise<T>): Promise<T> {
    this.take('transaction');
    const staged: Tables = new Map([...this.data].map(([t, rows]) => [t, new Map(rows)]));
    let open = true;
    const tx = new MemoryTransaction(this, staged, () => open);
    try {
      const result = await fn(tx);
      this.take('commit');
      this.data = staged;
      this.commits++;
      return result;
    } finally {
      open = false;
    }
  }

  /** @internal */
  config(table: string): TableConfig {
    const config = this.tables[table];
    if (!config)
      throw new StorageError(StorageErrorCode.UNKNOWN_TABLE, `unknown table "${table}"`, { table });
    return config;
  }

  /** @internal */
  tableData(data: Tables, table: string): Map<string, Row> {
    this.config(table);
    return data.get(table) as Map<string, Row>;
  }

  private take(op: MemoryIoOp, table?: string, defer = false): InjectedFailure | undefined {
    const index = this.failures.findIndex(
      ({ failure }) => failure.op === op && (failure.table === undefined || failure.table === table),
    );
    const entry = this.failures[index];
    if (!entry) return undefined;
    if (--entry.left <= 0) this.failures.splice(index, 1);
    if (defer) return entry.failure;
    throw entry.failure.error;
  }
}

class MemoryTransaction implements TaskIoTransaction {
  constructor(
    private readonly io: MemoryTaskIo,
    private readonly staged: Tables,
    private readonly isOpen: () => boolean,
  ) {}

  async upsert(table: string, key: RowKey, values: Row): Promise<void> {
    const config = this.use(table);
    check(table, keyProblems(table, config, key));
    for (const [column, value] of Object.entries(key)) {
      if (column in values && values[column] !== value)
        throw badValue(table, `values.${column} contradicts the key`);
    }
    putRow(this.io.tables, this.staged, table, { ...values, ...key });
  }

  async insertRows(table: string, rows: readonly Row[]): Promise<void> {
    this.use(table);
    for (const row of rows) putRow(this.io.tables, this.staged, table, row);
  }

  async delete(table: string, key: RowKey): Promise<void> {
    const config = this.use(table);
    check(table, keyProblems(table, config, key));
    this.io.tableData(this.staged, table).delete(pkOf(config, key));
  }

  async checkFence(fence: WriteFence): Promise<void> {
    if (!this.isOpen()) throw new StorageError(StorageErrorCode.QUERY_FAILED, 'transaction already finished');
    if (this.io.terms.get(fence.jobId) !== fence.term)
      throw new StorageError(
        StorageErrorCode.FENCED,
        `job ${fence.jobId}: term ${fence.term} is not the newest`,
      );
  }

  async deleteWhere(table: string, where: RowFilter, blockRange?: BlockRange): Promise<number> {
    const config = this.use(table);
    checkColumns(table, config, Object.keys(where));
    if (blockRange) requireColumn(table, config.blockColumn, 'blockColumn');
    const data = this.io.tableData(this.staged, table);
    let count = 0;
    for (const [pk, row] of data) {
      if (matches(row, where, config.blockColumn, blockRange)) {
        data.delete(pk);
        count++;
      }
    }
    return count;
  }

  async replaceBlockRows(table: string, block: BlockSelector, rows: readonly Row[]): Promise<void> {
    await this.replaceBlockRangeRows(table, { from: block.number, to: block.number, ...chain(block) }, rows);
  }

  async replaceBlockRangeRows(
    table: string,
    range: BlockRange & { readonly chainId?: number },
    rows: readonly Row[],
  ): Promise<void> {
    const config = this.use(table);
    requireColumn(table, config.blockColumn, 'blockColumn');
    const where: Record<string, unknown> = {};
    if (range.chainId !== undefined)
      where[requireColumn(table, config.chainColumn, 'chainColumn')] = range.chainId;
    await this.deleteWhere(table, where, { from: range.from, to: range.to });
    await this.insertRows(table, rows);
  }

  private use(table: string): TableConfig {
    if (!this.isOpen()) throw badValue(table, 'transaction used after it ended');
    return this.io.config(table);
  }
}

interface RawTable extends Omit<TableConfig, 'columns'> {
  readonly columns: Record<string, { type: ColumnConfig['type']; nullable?: boolean }>;
}

function chain(block: BlockSelector): { chainId?: number } {
  return block.chainId === undefined ? {} : { chainId: block.chainId };
}

function putRow(tables: Readonly<Record<string, TableConfig>>, data: Tables, table: string, row: Row): void {
  const config = tables[table];
  if (!config) throw new StorageError(StorageErrorCode.UNKNOWN_TABLE, `unknown table "${table}"`, { table });
  check(table, rowProblems(table, config, row));
  // Stored with every declared column (an omitted nullable column is null), in declaration order.
  const stored = Object.fromEntries(
    Object.keys(config.columns).map((c) => [c, structuredClone(row[c] ?? null)]),
  );
  (data.get(table) as Map<string, Row>).set(pkOf(config, row), Object.freeze(stored));
}

function checkColumns(table: string, config: TableConfig, columns: readonly string[]): void {
  for (const column of columns) {
    if (!(column in config.columns))
      throw new StorageError(StorageErrorCode.UNKNOWN_COLUMN, `table "${table}" has no column "${column}"`, {
        table,
        column,
      });
  }
}

function requireColumn(table: string, column: string | undefined, role: string): string {
  if (column === undefined) throw badValue(table, `table "${table}" declares no ${role}`);
  return column;
}

function check(table: string, problems: readonly string[]): void {
  if (problems.length) throw badValue(table, problems.join('; '));
}

function badValue(table: string, message: string): StorageError {
  return new StorageError(StorageErrorCode.BAD_VALUE, message, { table });
}

/** Builder output with every call's arguments as values (encoded ones parsed), for assertions. */
export function withArgValues<C extends { readonly args: CallArgs }>(
  calls: readonly C[],
): (Omit<C, 'args'> & { readonly args: readonly unknown[] })[] {
  return calls.map((c) => ({ ...c, args: argsValuesOf(c.args) }));
}
