// Rows as JSON text written by the database (StorageBackend.scanJson; docs/storage.md § Rows as JSON
// text). A scan page selects, beside the primary key, one expression that builds each row's JSON text in
// SQL (SQLite json_object, PostgreSQL json_build_object): on SQLite as plain text, which the backend
// writes into one buffer per page (utf8Views) so the rows travel as bytes, on PostgreSQL quoted as a
// JSON string literal. Either way the Worker never holds the row as values: the text goes into the
// ExecuteCalls frame as it came (docs/performance.md § Rows as bytes).
//
// The text must be the JSON of the very row `scan` yields (value-codec.ts decodeRow), value for value.
// The expressions below spell each column type's decoding in SQL; where SQL could not say what
// decodeRow says (a stored integer beyond ±2^53 is an error there, a REAL in an INTEGER column of SQLite
// is decoded if it is integral), a second expression flags the row, and the backend decodes that row
// the ordinary way instead (its error, or its value, is then exactly scan's). SQLite's json() fails the
// whole statement on text that is not JSON (checking every row first would cost as much as the text
// itself): the backend then goes on with the scan as values, which fails as scan does.
//
//   column type   SQLite                                   PostgreSQL                  flagged unless
//   integer       the value                                the value                   an integer within ±2^53
//   bigint        the value                                the value                   an integer within ±2^53
//   real          printf('%!.17g') (round-trips exactly)   the value                   finite
//   text          the value                                the value                   (SQLite) text
//   boolean       true / false                             the value                   (SQLite) 0 or 1
//   json          json(value)                              the value (jsonb)           (SQLite) text
//   bytes         '0x' || lower(hex(value))                '0x' || encode(value,'hex') (SQLite) a blob
//
// NULL is null in every type and never flagged.

import type { ColumnConfig, ColumnType, TableConfig } from '../../kernel/config-types.js';
import { quoteIdent } from './sql-dialect.js';
import type { BackendKind } from './types.js';

/** Columns one JSON expression may carry: json_object / json_build_object take two arguments each. */
export const MAX_JSON_COLUMNS = 50;

/** Result column names no declared column can have (declared names are lower-case identifiers). */
const JSON_COLUMN = 'BlockX row json';
const CLEAN_COLUMN = 'BlockX row clean';

const MAX_SAFE = '9007199254740991';

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function sqliteValue(col: string, type: ColumnType): string {
  switch (type) {
    case 'integer':
    case 'bigint':
    case 'text':
      return col;
    case 'real':
      return `CASE WHEN ${col} IS NULL THEN NULL ELSE json(printf('%!.17g', ${col})) END`;
    case 'boolean':
      return `CASE ${col} WHEN 1 THEN json('true') WHEN 0 THEN json('false') END`;
    case 'json':
      return `json(${col})`;
    case 'bytes':
      return `CASE WHEN ${col} IS NULL THEN NULL ELSE '0x' || lower(hex(${col})) END`;
    default: {
      const unreachable: never = type;
      throw new Error(`unknown column type ${String(unreachable)}`);
    }
  }
}

function sqliteClean(col: string, type: ColumnType): string {
  switch (type) {
    case 'integer':
    case 'bigint':
      return `(typeof(${col}) = 'integer' AND ${col} BETWEEN -${MAX_SAFE} AND ${MAX_SAFE})`;
    case 'real':
      return `(typeof(${col}) IN ('real', 'integer') AND ${col} BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308)`;
    case 'text':
      return `typeof(${col}) = 'text'`;
    case 'boolean':
      return `(typeof(${col}) = 'integer' AND ${col} IN (0, 1))`;
    case 'json':
      return `typeof(${col}) = 'text'`;
    case 'bytes':
      return `typeof(${col}) = 'blob'`;
    default: {
      const unreachable: never = type;
      throw new Error(`unknown column type ${String(unreachable)}`);
    }
  }
}

function postgresValue(col: string, type: ColumnType): string {
  return type === 'bytes' ? `'0x' || encode(${col}, 'hex')` : col;
}

function postgresClean(col: string, type: ColumnType): string | undefined {
  switch (type) {
    case 'bigint':
      return `${col} BETWEEN -${MAX_SAFE} AND ${MAX_SAFE}`;
    case 'real':
      return `${col} NOT IN ('NaN'::float8, 'Infinity'::float8, '-Infinity'::float8)`;
    case 'integer':
    case 'text':
    case 'boolean':
    case 'json':
    case 'bytes':
      return undefined;
    default: {
      const unreachable: never = type;
      throw new Error(`unknown column type ${String(unreachable)}`);
    }
  }
}

/**
 * The two select-list items of a JSON scan of `columns` (in this order, the row's keys): the row's
 * JSON text (as JSON_COLUMN: plain on SQLite, a JSON string literal on PostgreSQL), and
 * whether the row is clean (as CLEAN_COLUMN,
 * 1/true when the text is the row decodeRow would give). Undefined beyond MAX_JSON_COLUMNS columns.
 */
export function rowJsonSelect(
  kind: BackendKind,
  table: TableConfig,
  columns: readonly string[],
): readonly string[] | undefined {
  if (columns.length === 0 || columns.length > MAX_JSON_COLUMNS) return undefined;
  const pairs: string[] = [];
  const clean: string[] = [];
  for (const name of columns) {
    const col = quoteIdent(name);
    const { type } = table.columns[name] as ColumnConfig;
    const isClean = kind === 'sqlite' ? sqliteClean(col, type) : postgresClean(col, type);
    pairs.push(`${literal(name)}, ${kind === 'sqlite' ? sqliteValue(col, type) : postgresValue(col, type)}`);
    if (isClean !== undefined) clean.push(`(${col} IS NULL OR ${isClean})`);
  }
  const json =
    kind === 'sqlite'
      ? // The row's JSON text, unquoted: the backend writes a page's texts into one buffer
        // (utf8Views), and the rows travel as those bytes (docs/performance.md § Rows as bytes).
        `json_object(${pairs.join(', ')})`
      : `to_json(json_build_object(${pairs.join(', ')})::text)::text`;
  const ok = clean.length === 0 ? (kind === 'sqlite' ? '1' : 'true') : clean.join(' AND ');
  return [`${json} AS ${quoteIdent(JSON_COLUMN)}`, `(${ok}) AS ${quoteIdent(CLEAN_COLUMN)}`];
}

/**
 * The UTF-8 of each text, written into one buffer for all of them (one allocation per page rather than
 * one per row: measured 3.5 against 3.9 µs a row with the scan, docs/performance.md § Rows as bytes);
 * each view covers its text. `undefined` entries stay undefined.
 */
export function utf8Views(texts: readonly (string | undefined)[]): (Uint8Array | undefined)[] {
  // Exactly the bytes needed: the views keep the page's buffer alive until their rows are sent, so
  // a bound of 3 bytes a character would hold three times the memory (UTF-8 byte counts are cheap).
  let size = 0;
  for (const t of texts) if (t !== undefined) size += Buffer.byteLength(t, 'utf8');
  const buf = Buffer.allocUnsafeSlow(size);
  const out = new Array<Uint8Array | undefined>(texts.length);
  let at = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i];
    if (t === undefined) continue;
    const n = buf.write(t, at, 'utf8');
    out[i] = buf.subarray(at, at + n);
    at += n;
  }
  return out;
}

/** A cell's JSON text from its driver value, or undefined where only decodeValue may say what it is. */
type CellText = (raw: unknown) => string | undefined;

function cellText(type: ColumnType): CellText {
  switch (type) {
    case 'integer':
    case 'bigint':
      // pg hands over an int8 beyond ±2^53 as text (pg-types.ts): decodeValue's error.
      return (v) => (typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : undefined);
    case 'real':
      // What JSON.stringify makes of decodeValue's number: NaN and ±Infinity are null.
      return (v) => (typeof v === 'number' ? (Number.isFinite(v) ? String(v) : 'null') : undefined);
    case 'text':
      return (v) => (typeof v === 'string' ? JSON.stringify(v) : undefined);
    case 'boolean':
      return (v) => (v === true ? 'true' : v === false ? 'false' : undefined);
    case 'json':
      // The server's own text of a json/jsonb value (PG_TYPES_JSON_TEXT): valid JSON, used as it is.
      return (v) => (typeof v === 'string' ? v : undefined);
    case 'bytes':
      return (v) =>
        v instanceof Uint8Array
          ? `"0x${Buffer.from(v.buffer, v.byteOffset, v.length).toString('hex')}"`
          : undefined;
    default: {
      const unreachable: never = type;
      throw new Error(`unknown column type ${String(unreachable)}`);
    }
  }
}

/**
 * PostgreSQL's rows as JSON text, written here from the driver's values (json and jsonb as their text,
 * PG_TYPES_JSON_TEXT) rather than through a row object and JSON.stringify (docs/performance.md § Rows as
 * bytes): `columns` are the row's keys in order, `at` where each is in a result row. The text is the
 * JSON of the row decodeRow gives; a row with a cell only decodeValue can judge (an int8 beyond ±2^53, a
 * value of an unexpected type) gives undefined, and the caller decodes that row the ordinary way (its
 * error, or its value, is then exactly scan's).
 */
export function driverRowText(
  table: TableConfig,
  columns: readonly string[],
  at: readonly number[],
): (row: readonly unknown[]) => string | undefined {
  const heads = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c)}:`);
  const cells = columns.map((c) => cellText((table.columns[c] as ColumnConfig).type));
  return (row) => {
    let text = '';
    for (let i = 0; i < cells.length; i++) {
      const v = row[at[i] as number];
      const cell = v === null || v === undefined ? 'null' : (cells[i] as CellText)(v);
      if (cell === undefined) return undefined;
      text += (heads[i] as string) + cell;
    }
    return columns.length === 0 ? '{}' : `${text}}`;
  };
}
