// Bulk rows → what the driver writes, in one pass per row: every value is checked against its column
// (the rules of row-check.ts) and encoded (the mapping of value-codec.ts, or PostgreSQL's COPY text
// format, pg-copy.ts) in the same step, into a flat parameter array or one COPY line. A row with any
// problem stops the pass and goes through encodeRow (request-check.ts), whose error names the column:
// the fast path decides nothing the checked path would not (a property test pins that both agree).
//
// A table's columns are compiled once per backend into a TableCodec (cached per TableConfig), so the
// per-row work is a key check (for…in over the row, no arrays) and one encoder call per column.

import type { ColumnConfig, ColumnType, TableConfig } from '../../kernel/config-types.js';
import { copyCell, COPY_NULL } from './pg-copy.js';
import { badValue, encodeRow } from './request-check.js';
import type { RequestContext } from './request-check.js';
import type { Row } from './types.js';
import { INVALID, paramCell } from './value-codec.js';
import type { BackendKind } from './types.js';

/** How a batch is written: bound parameters (multi-row INSERT) or COPY text lines. */
export type RowFormat = 'sqlite-params' | 'postgres-params' | 'copy-text';

interface ColumnCodec {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  /** The name is a property of Object.prototype (e.g. "constructor"): only an own property counts. */
  readonly inherited: boolean;
  /** The checked, encoded value, or INVALID. */
  readonly encode: (value: unknown) => unknown;
}

interface TableCodec {
  readonly known: ReadonlySet<string>;
  readonly columns: readonly ColumnCodec[];
  /** What a NULL is in this format. */
  readonly nullValue: unknown;
  /** Positions of the primary key columns in `columns`. */
  readonly keyPositions: readonly number[];
}

const codecs = new WeakMap<TableConfig, Map<RowFormat, TableCodec>>();

function codecOf(table: TableConfig, format: RowFormat): TableCodec {
  let byFormat = codecs.get(table);
  if (byFormat === undefined) codecs.set(table, (byFormat = new Map()));
  let codec = byFormat.get(format);
  if (codec === undefined) {
    const names = Object.keys(table.columns);
    const columns = names.map((name): ColumnCodec => {
      const decl = table.columns[name] as ColumnConfig;
      return {
        name,
        type: decl.type,
        nullable: decl.nullable,
        inherited: name in Object.prototype,
        encode: cellEncoder(format, decl.type),
      };
    });
    codec = {
      known: new Set(names),
      columns,
      nullValue: format === 'copy-text' ? COPY_NULL : null,
      keyPositions: table.primaryKey.map((c) => names.indexOf(c)),
    };
    byFormat.set(format, codec);
  }
  return codec;
}

function cellEncoder(format: RowFormat, type: ColumnType): (value: unknown) => unknown {
  const kind: BackendKind = format === 'sqlite-params' ? 'sqlite' : 'postgres';
  return format === 'copy-text' ? copyCell(type) : paramCell(kind, type);
}

/**
 * Checks `row` and writes its encoded values, in declaration order, to `out` from `offset`. False on
 * any problem (not an object, an undeclared column, a missing or null non-nullable value, a bad value).
 */
function encodeInto(codec: TableCodec, row: unknown, out: unknown[], offset: number): boolean {
  if (typeof row !== 'object' || row === null || Array.isArray(row)) return false;
  const record = row as Record<string, unknown>;
  for (const key in record) if (!codec.known.has(key)) return false;
  const { columns } = codec;
  for (let j = 0; j < columns.length; j++) {
    const c = columns[j] as ColumnCodec;
    const value = c.inherited && !Object.hasOwn(record, c.name) ? undefined : record[c.name];
    if (value === null || value === undefined) {
      if (!c.nullable) return false;
      out[offset + j] = codec.nullValue;
      continue;
    }
    const encoded = c.encode(value);
    if (encoded === INVALID) return false;
    out[offset + j] = encoded;
  }
  return true;
}

/** Throws the error of a row the fast path refused: encodeRow's BAD_VALUE / UNKNOWN_COLUMN naming it. */
function refuse(ctx: RequestContext, name: string, table: TableConfig, codec: TableCodec, row: Row): never {
  encodeRow(ctx, name, table, row);
  // encodeRow accepted it, so a value is valid but cannot be encoded (e.g. JSON.stringify refuses it).
  const bad = codec.columns.find((c) => {
    const v = row[c.name];
    return v !== null && v !== undefined && c.encode(v) === INVALID;
  });
  throw badValue(
    ctx,
    name,
    `bad row for table "${name}": column "${bad?.name ?? '?'}" (${bad?.type ?? '?'}): the value cannot be stored`,
    bad?.name,
  );
}

/** Rows as bound parameters: `values` holds `rows` rows, row after row, each in declaration order. */
export interface EncodedParams {
  readonly values: unknown[];
  readonly rows: number;
}

/**
 * Every row checked and encoded for multi-row INSERTs. With `dedupe`, rows with equal primary keys are
 * reduced to the last (as row-by-row upserts would leave them; PostgreSQL refuses to upsert one row twice
 * in a statement, SQLite applies a statement's rows in order and needs none). Throws before returning if
 * any row is bad, so nothing is written for a batch with a bad row.
 */
export function encodeParams(
  ctx: RequestContext,
  name: string,
  table: TableConfig,
  rows: readonly Row[],
  dedupe: boolean,
): EncodedParams {
  const codec = codecOf(table, ctx.kind === 'sqlite' ? 'sqlite-params' : 'postgres-params');
  const width = codec.columns.length;
  const values = new Array<unknown>(rows.length * width);
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Row;
    if (!encodeInto(codec, row, values, i * width)) refuse(ctx, name, table, codec, row);
  }
  if (!dedupe) return { values, rows: rows.length };
  const keys = rows.map((row) => keyOf(codec, row));
  const lastOf = new Map<unknown, number>();
  keys.forEach((key, i) => lastOf.set(key, i));
  if (lastOf.size === rows.length) return { values, rows: rows.length };
  let kept = 0;
  for (let i = 0; i < rows.length; i++) {
    if (lastOf.get(keys[i]) !== i) continue;
    for (let j = 0; j < width; j++) values[kept * width + j] = values[i * width + j];
    kept++;
  }
  values.length = kept * width;
  return { values, rows: kept };
}

/** Rows as COPY text: `text` holds the lines (tab-separated, newline-terminated), `rows` their count. */
export interface CopyText {
  readonly text: readonly string[];
  readonly rows: number;
}

/** About this many characters per COPY data chunk. */
const COPY_CHUNK_CHARS = 1 << 18;

/**
 * Every row checked and encoded as a COPY text line, rows with equal primary keys reduced to the last
 * (as row-by-row upserts would leave them; PostgreSQL refuses to upsert one row twice in a statement).
 * Throws before returning if any row is bad.
 */
export function encodeCopyText(
  ctx: RequestContext,
  name: string,
  table: TableConfig,
  rows: readonly Row[],
): CopyText {
  const codec = codecOf(table, 'copy-text');
  const width = codec.columns.length;
  const cells = new Array<unknown>(width);
  const lines = new Array<string>(rows.length);
  const keys = new Array<unknown>(rows.length);
  const lastOf = new Map<unknown, number>();
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as Row;
    if (!encodeInto(codec, row, cells, 0)) refuse(ctx, name, table, codec, row);
    lines[i] = `${cells.join('\t')}\n`;
    const key = keyOf(codec, row);
    keys[i] = key;
    lastOf.set(key, i);
  }
  const kept = lastOf.size === rows.length ? lines : lines.filter((_, i) => lastOf.get(keys[i]) === i);
  const text: string[] = [];
  let chunk = '';
  for (const line of kept) {
    chunk += line;
    if (chunk.length >= COPY_CHUNK_CHARS) {
      text.push(chunk);
      chunk = '';
    }
  }
  if (chunk !== '') text.push(chunk);
  return { text, rows: kept.length };
}

/**
 * A value identifying a row's primary key (equal keys, equal values): the canonical value itself for a
 * one-column key, else the canonical parts joined, each string prefixed with its length (no two keys
 * can join to the same text). Hex is case-insensitive (value-codec.ts canonicalKeyPart).
 */
function keyOf(codec: TableCodec, row: Row): unknown {
  const { keyPositions, columns } = codec;
  if (keyPositions.length === 1) return keyPart(columns[keyPositions[0] as number] as ColumnCodec, row);
  let id = '';
  for (const p of keyPositions) {
    const part = keyPart(columns[p] as ColumnCodec, row);
    id += typeof part === 'string' ? `${part.length}:${part}|` : `${JSON.stringify(part)}|`;
  }
  return id;
}

function keyPart(c: ColumnCodec, row: Row): unknown {
  const v = row[c.name];
  if (c.type === 'bytes') return (v as string).toLowerCase();
  // A json key: its text, so the string "{}" and the object {} stay apart.
  return c.type === 'json' ? JSON.stringify(v) : v;
}
