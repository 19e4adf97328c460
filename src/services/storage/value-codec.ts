// JSON values at the storage boundary ⇄ driver values, per column type and backend (see types.ts for the
// JSON side). Values are validated (row-check.ts) before they are encoded; decoding checks what the
// database holds, because a table may have been written by something else: a stored integer beyond 2^53,
// a boolean that is neither 0 nor 1, or unparsable JSON text is a BAD_VALUE naming the column, never a
// silently wrong number.
//
//            SQLite (better-sqlite3)                    PostgreSQL (pg)
//   integer  INTEGER ⇐ bigint, ⇒ number                   INTEGER ⇄ number
//   bigint   INTEGER ⇐ bigint, ⇒ number                   BIGINT ⇄ number (int8 parser, see pg-types.ts)
//   real     REAL ⇄ number                                DOUBLE PRECISION ⇄ number
//   text     TEXT ⇄ string                                TEXT ⇄ string
//   boolean  INTEGER 0/1                                  BOOLEAN ⇄ boolean
//   json     TEXT holding JSON                            JSONB (sent as JSON text, parsed by pg)
//   bytes    BLOB ⇄ Buffer                                BYTEA ⇄ Buffer

import type { ColumnType } from '../../kernel/config-types.js';
import { StorageError, StorageErrorCode } from './errors.js';
import { HEX_BYTES } from './row-check.js';
import type { BackendKind } from './types.js';

/** Where a value came from, for error details. */
export interface ValueSite {
  readonly table: string;
  readonly column: string;
  readonly backend: string;
}

/** A valid JSON-side value → the parameter the driver binds. `null` stays null. */
export function encodeValue(kind: BackendKind, type: ColumnType, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
    case 'bigint':
      // SQLite binds JS numbers as doubles; a BigInt binds as a 64-bit integer, exactly.
      return kind === 'sqlite' ? BigInt(value as number) : value;
    case 'real':
    case 'text':
      return value;
    case 'boolean':
      return kind === 'sqlite' ? (value === true ? 1 : 0) : value;
    case 'json':
      return JSON.stringify(value);
    case 'bytes':
      return Buffer.from((value as string).slice(2), 'hex');
    default: {
      const unreachable: never = type;
      throw new Error(`unknown column type ${String(unreachable)}`);
    }
  }
}

/** What a cell encoder returns for a value its column does not accept. */
export const INVALID: unique symbol = Symbol('invalid value');

/** JSON text of a json column's value; INVALID when JSON.stringify refuses it (a BigInt, a cycle). */
export function jsonText(value: unknown): string | typeof INVALID {
  try {
    const text = JSON.stringify(value);
    return typeof text === 'string' ? text : INVALID;
  } catch {
    return INVALID;
  }
}

/**
 * Check and encode in one step, for bulk writes (row-encoder.ts): a non-null JSON-side value → the
 * parameter encodeValue would bind, or INVALID where valueProblem (row-check.ts) finds a problem.
 */
export function paramCell(kind: BackendKind, type: ColumnType): (value: unknown) => unknown {
  switch (type) {
    case 'integer':
    case 'bigint':
      return kind === 'sqlite'
        ? (v) => (Number.isSafeInteger(v) ? BigInt(v as number) : INVALID)
        : (v) => (Number.isSafeInteger(v) ? v : INVALID);
    case 'real':
      return (v) => (typeof v === 'number' && Number.isFinite(v) ? v : INVALID);
    case 'text':
      return (v) => (typeof v === 'string' ? v : INVALID);
    case 'boolean':
      return kind === 'sqlite'
        ? (v) => (v === true ? 1 : v === false ? 0 : INVALID)
        : (v) => (typeof v === 'boolean' ? v : INVALID);
    case 'json':
      return jsonText;
    case 'bytes':
      return (v) => (typeof v === 'string' && HEX_BYTES.test(v) ? Buffer.from(v.slice(2), 'hex') : INVALID);
    default: {
      const unreachable: never = type;
      throw new Error(`unknown column type ${String(unreachable)}`);
    }
  }
}

/** A value as the driver returned it → the JSON-side value. */
export function decodeValue(kind: BackendKind, type: ColumnType, raw: unknown, site: ValueSite): unknown {
  if (raw === null || raw === undefined) return null;
  switch (type) {
    case 'integer':
    case 'bigint':
      return decodeInteger(raw, site);
    case 'real':
      if (typeof raw === 'number') return raw;
      if (typeof raw === 'bigint') return Number(raw);
      return bad(site, `expected a number, found ${describeRaw(raw)}`);
    case 'text':
      return typeof raw === 'string' ? raw : bad(site, `expected text, found ${describeRaw(raw)}`);
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 0 || raw === 0n) return false;
      if (raw === 1 || raw === 1n) return true;
      return bad(site, `expected a boolean (0 or 1), found ${describeRaw(raw)}`);
    case 'json':
      if (kind === 'postgres') return raw;
      if (typeof raw !== 'string') return bad(site, `expected JSON text, found ${describeRaw(raw)}`);
      try {
        return JSON.parse(raw) as unknown;
      } catch (err) {
        return bad(site, `stored text is not valid JSON`, err);
      }
    case 'bytes':
      if (raw instanceof Uint8Array)
        return `0x${Buffer.from(raw.buffer, raw.byteOffset, raw.length).toString('hex')}`;
      return bad(site, `expected bytes, found ${describeRaw(raw)}`);
    default: {
      const unreachable: never = type;
      throw new Error(`unknown column type ${String(unreachable)}`);
    }
  }
}

/**
 * A value in the form two equal keys share: hex is case-insensitive on input but comes back lowercase.
 * Used to match rows to the keys a caller asked for, and to drop duplicate keys within one write.
 */
export function canonicalKeyPart(type: ColumnType, value: unknown): unknown {
  return type === 'bytes' && typeof value === 'string' ? value.toLowerCase() : value;
}

/** A string identifying one primary key value (canonical parts, in primary key order). */
export function keyId(types: readonly ColumnType[], values: readonly unknown[]): string {
  return JSON.stringify(values.map((v, i) => canonicalKeyPart(types[i] ?? 'text', v)));
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function decodeInteger(raw: unknown, site: ValueSite): number {
  if (typeof raw === 'bigint') {
    if (raw >= MIN_SAFE && raw <= MAX_SAFE) return Number(raw);
    return bad(site, `stored integer ${raw} is beyond ±2^53 and cannot be a JSON number exactly`);
  }
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return raw;
  // SQLite hands integers over as numbers: one beyond ±2^53 arrives rounded, hence "about".
  if (typeof raw === 'number' && Number.isInteger(raw))
    return bad(site, `stored integer (about ${raw}) is beyond ±2^53 and cannot be a JSON number exactly`);
  // pg hands an int8 it could not represent exactly over as its text (see pg-types.ts).
  if (typeof raw === 'string' && /^-?\d+$/.test(raw))
    return bad(site, `stored integer ${raw} is beyond ±2^53 and cannot be a JSON number exactly`);
  return bad(site, `expected an integer, found ${describeRaw(raw)}`);
}

function bad(site: ValueSite, problem: string, cause?: unknown): never {
  throw new StorageError(
    StorageErrorCode.BAD_VALUE,
    `table "${site.table}", column "${site.column}": ${problem}`,
    { ...site, cause },
  );
}

function describeRaw(raw: unknown): string {
  if (typeof raw === 'string') return `text "${raw.length > 40 ? `${raw.slice(0, 40)}…` : raw}"`;
  if (raw instanceof Uint8Array) return `${raw.length} bytes`;
  return `${typeof raw} ${String(raw)}`;
}

/** A result row → its JSON-side row with `columns`, in that order. */
export function decodeRow(
  kind: BackendKind,
  table: string,
  columnTypes: Readonly<Record<string, { readonly type: ColumnType }>>,
  raw: Readonly<Record<string, unknown>>,
  columns: readonly string[],
  backend: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of columns) {
    const decl = columnTypes[column];
    if (decl === undefined) throw new Error(`column "${column}" is not declared for table "${table}"`);
    out[column] = decodeValue(kind, decl.type, raw[column], { table, column, backend });
  }
  return out;
}
