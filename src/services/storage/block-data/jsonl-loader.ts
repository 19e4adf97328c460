// Loading JSON lines into a declared table: one JSON object per line, validated against the table's
// columns (row-check.ts) before anything is written.
//
// Rules:
//   - lines are numbered from 1 as they are in the file, blank lines included (and skipped);
//   - every bad line is reported (`SOURCE:LINE: problem; problem`), never just the first;
//   - without skipInvalid, one bad line means nothing is loaded; with it, the valid lines are loaded and
//     the bad ones listed;
//   - the valid rows go in ONE transaction, inserted in chunks: all of them commit or none does.
// The input is streamed: memory holds one chunk of rows and the first `printCap` problem messages, so a
// file of any size loads (the transaction stays open while it is read).

import type { TableConfig } from '../../../kernel/config-types.js';
import { StorageError, StorageErrorCode } from '../errors.js';
import { rowProblems } from '../row-check.js';
import type { Row, StorageBackend } from '../types.js';

export type JsonlLine =
  | { readonly kind: 'blank'; readonly line: number }
  | { readonly kind: 'row'; readonly line: number; readonly row: Row }
  | { readonly kind: 'bad'; readonly line: number; readonly problems: readonly string[] };

/** Parses and validates one line (`line` is its 1-based number) as a row of `tableName`. */
export function checkJsonlLine(line: number, text: string, tableName: string, table: TableConfig): JsonlLine {
  const body = text.trim(); // also drops a byte-order mark (U+FEFF) and the \r of CRLF files
  if (body === '') return { kind: 'blank', line };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    return { kind: 'bad', line, problems: [`invalid JSON: ${(err as Error).message}`] };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { kind: 'bad', line, problems: [`expected a JSON object, got ${jsonKind(value)}`] };
  const problems = compactMissing(rowProblems(tableName, table, value));
  return problems.length > 0 ? { kind: 'bad', line, problems } : { kind: 'row', line, row: value as Row };
}

const MISSING = /^column "(.*)" is missing$/;

/** Several "column X is missing" problems read better as one: `missing columns "a", "b"`. */
function compactMissing(problems: string[]): string[] {
  const missing = problems.flatMap((p) => MISSING.exec(p)?.[1] ?? []);
  if (missing.length < 2) return problems;
  return [
    ...problems.filter((p) => !MISSING.test(p)),
    `missing columns ${missing.map((c) => `"${c}"`).join(', ')}`,
  ];
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Numbers and checks each line of `lines` (as node:readline yields them, without line endings). */
export async function* checkJsonlLines(
  lines: AsyncIterable<string> | Iterable<string>,
  tableName: string,
  table: TableConfig,
): AsyncGenerator<JsonlLine, void, undefined> {
  let n = 0;
  for await (const text of lines) yield checkJsonlLine(++n, text, tableName, table);
}

/** The bad lines of one input: every line number, the first `printCap` messages. */
export class BadLines {
  private readonly kept: string[] = [];
  private readonly ranges: [number, number][] = [];
  private total = 0;

  constructor(
    readonly source: string,
    readonly printCap = 100,
  ) {}

  add(line: number, problems: readonly string[]): void {
    this.total++;
    if (this.kept.length < this.printCap) this.kept.push(`${this.source}:${line}: ${problems.join('; ')}`);
    const last = this.ranges[this.ranges.length - 1];
    if (last !== undefined && last[1] === line - 1) last[1] = line;
    else this.ranges.push([line, line]);
  }

  get count(): number {
    return this.total;
  }

  /** One line per bad line, capped at printCap, then how many more there were. */
  messages(): string[] {
    const more = this.total - this.kept.length;
    return more > 0 ? [...this.kept, `… and ${more} more bad line${more === 1 ? '' : 's'}`] : [...this.kept];
  }

  /** The bad line numbers as ranges: "3, 7, 10-12". */
  lineList(): string {
    return this.ranges.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(', ');
  }
}

/** The declared table `name`, or an UNKNOWN_TABLE error listing the declared ones. */
export function declaredTable(tables: Readonly<Record<string, TableConfig>>, name: string): TableConfig {
  const table = Object.hasOwn(tables, name) ? tables[name] : undefined;
  if (table === undefined) {
    const names = Object.keys(tables);
    throw new StorageError(
      StorageErrorCode.UNKNOWN_TABLE,
      `table "${name}" is not declared in the config (declared: ${names.length > 0 ? names.join(', ') : 'none'})`,
      { table: name },
    );
  }
  return table;
}

export interface LoadJsonlOptions {
  readonly backend: Pick<StorageBackend, 'transaction'>;
  readonly table: string;
  readonly tableConfig: TableConfig;
  readonly lines: AsyncIterable<string> | Iterable<string>;
  /** How the input is named in problems: the file path, or "stdin". */
  readonly source: string;
  readonly skipInvalid?: boolean;
  /** Rows per insertRows call (default 500). */
  readonly chunkRows?: number;
  readonly printCap?: number;
}

export interface LoadJsonlReport {
  readonly table: string;
  readonly source: string;
  /** Lines read, blank ones included. */
  readonly lines: number;
  readonly validRows: number;
  /** Rows committed: validRows, or 0 when a bad line stopped the load. */
  readonly loadedRows: number;
  readonly bad: BadLines;
}

/** Thrown inside the transaction to roll it back when a bad line forbids the load. */
class RollBack extends Error {}

/**
 * Streams `lines` into `table` in one transaction. Bad lines (see the file comment) are collected; when
 * there are some and skipInvalid is off, the transaction is rolled back and loadedRows is 0. A database
 * error while inserting rolls everything back and is rethrown naming the lines of the failed chunk.
 */
export async function loadJsonl(opts: LoadJsonlOptions): Promise<LoadJsonlReport> {
  const chunkRows = opts.chunkRows ?? 500;
  const bad = new BadLines(opts.source, opts.printCap);
  let lines = 0;
  let validRows = 0;
  let chunk: Row[] = [];
  let chunkLines: [number, number] = [0, 0];
  const committed = await opts.backend
    .transaction(async (tx) => {
      const flush = async () => {
        if (chunk.length === 0) return;
        try {
          await tx.insertRows(opts.table, chunk);
        } catch (err) {
          throw withLines(err, opts.source, chunkLines);
        }
        chunk = [];
      };
      for await (const result of checkJsonlLines(opts.lines, opts.table, opts.tableConfig)) {
        lines = result.line;
        if (result.kind === 'blank') continue;
        if (result.kind === 'bad') {
          bad.add(result.line, result.problems);
          if (!opts.skipInvalid) chunk = []; // nothing will be loaded: stop inserting, keep checking
          continue;
        }
        validRows++;
        if (bad.count > 0 && !opts.skipInvalid) continue;
        if (chunk.length === 0) chunkLines = [result.line, result.line];
        chunk.push(result.row);
        chunkLines[1] = result.line;
        if (chunk.length >= chunkRows) await flush();
      }
      if (bad.count > 0 && !opts.skipInvalid) throw new RollBack();
      await flush();
      return true;
    })
    .catch((err: unknown) => {
      if (err instanceof RollBack || (err as { cause?: unknown })?.cause instanceof RollBack) return false;
      throw err;
    });
  return {
    table: opts.table,
    source: opts.source,
    lines,
    validRows,
    loadedRows: committed ? validRows : 0,
    bad,
  };
}

function withLines(err: unknown, source: string, [from, to]: [number, number]): unknown {
  const where = from === to ? `${source}:${from}` : `${source}:${from}-${to}`;
  if (err instanceof StorageError)
    return new StorageError(err.code, `rows of ${where}: ${err.message}`, { ...err.details, cause: err });
  return err;
}
