// PostgreSQL's COPY text format, for bulk writes (row-encoder.ts → postgres-backend.ts copyFrom): one
// line per row, values separated by a tab, NULL as \N, and in every value a backslash, tab, newline or
// carriage return escaped with a backslash. Each cell encoder checks its value as valueProblem
// (row-check.ts) does and returns INVALID where it finds a problem, else the value's text:
//
//   integer, bigint, real → the number's JavaScript text (a safe integer has no exponent; PostgreSQL
//                           reads "1e+21" and "5e-324" as float8)
//   text → the string, escaped · boolean → t / f · json → JSON text, escaped
//   bytes → \\x and the hex digits (the bytea hex input, its backslash escaped)

import type { ColumnType } from '../../kernel/config-types.js';
import { HEX_BYTES } from './row-check.js';
import { INVALID, jsonText } from './value-codec.js';

/** A NULL in COPY text. */
export const COPY_NULL = '\\N';

const NEEDS_ESCAPE = /[\\\t\n\r]/;
const ESCAPED = /[\\\t\n\r]/g;
const ESCAPE: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** `text` as a COPY text value. */
export function copyEscape(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPED, (c) => ESCAPE[c] as string) : text;
}

/** The COPY text of a non-null JSON-side value of `type`, or INVALID. */
export function copyCell(type: ColumnType): (value: unknown) => string | typeof INVALID {
  switch (type) {
    case 'integer':
    case 'bigint':
      return (v) => (Number.isSafeInteger(v) ? String(v) : INVALID);
    case 'real':
      return (v) => (typeof v === 'number' && Number.isFinite(v) ? String(v) : INVALID);
    case 'text':
      return (v) => (typeof v === 'string' ? copyEscape(v) : INVALID);
    case 'boolean':
      return (v) => (v === true ? 't' : v === false ? 'f' : INVALID);
    case 'json':
      return (v) => {
        const text = jsonText(v);
        return text === INVALID ? INVALID : copyEscape(text);
      };
    case 'bytes':
      return (v) => (typeof v === 'string' && HEX_BYTES.test(v) ? `\\\\x${v.slice(2)}` : INVALID);
    default: {
      const unreachable: never = type;
      throw new Error(`unknown column type ${String(unreachable)}`);
    }
  }
}
