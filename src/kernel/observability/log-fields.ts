// What a log line may carry of a value (docs/security.md § Logs). Every service's pino logger passes each
// line's fields, its bindings and its message through here (createLogger in logger.ts):
//
//   - Secrets are masked with the one helper BlockX prints everything through (src/kernel/redact.ts):
//     a field NAMED like a secret (password, token, secret, apiKey, …) becomes `***` whatever it holds,
//     and every string has URL passwords and secret query parameters masked (a storage URL, an error
//     message quoting one).
//   - Strings are bounded: an id field (`task_id`, `slot_id`, `callId`, … — names ending in id) is cut to
//     MAX_ID_BYTES, any other string to MAX_LOG_STRING_BYTES, each with `…` appended. A refused request
//     may carry an id of any size, and logging it verbatim let 600 requests with a 1 MiB id write 717 MB.
//   - Shapes are bounded: nesting past MAX_LOG_DEPTH, arrays past MAX_LOG_ARRAY_ITEMS entries and objects
//     past MAX_LOG_OBJECT_KEYS keys are summarised, so a logged request cannot make a line of any size.
//
// Pure and total: never throws (a throwing getter costs the line its fields), never mutates its input.

import { MAX_ID_BYTES, MAX_STATUS_MESSAGE_BYTES, cutText } from '../input-bounds.js';
import { REDACTED, isSecretName, redactText } from '../redact.js';

/** Longest string (other than an id) a log field or message carries, in UTF-8 bytes, before `…`. */
export const MAX_LOG_STRING_BYTES = MAX_STATUS_MESSAGE_BYTES;
/** Deepest nesting of objects/arrays kept in a log field. */
export const MAX_LOG_DEPTH = 8;
/** Most array entries kept in a log field; the rest are counted. */
export const MAX_LOG_ARRAY_ITEMS = 100;
/** Most keys kept of one object in a log field; the rest are counted. */
export const MAX_LOG_OBJECT_KEYS = 100;

// Redaction runs on a prefix a little longer than what is kept: the masking regexes are not built for
// megabytes, and a password that began inside the kept part but ended beyond this window would be an
// improbable 16 KiB long.
const REDACT_WINDOW_BYTES = 4 * MAX_LOG_STRING_BYTES;

/** A stack trace (with its causes) keeps more: it is what explains a crash. */
const MAX_LOG_STACK_BYTES = 4 * MAX_LOG_STRING_BYTES;

/** `task_id`, `slot-id`, `callId`, `id`, `ids`, `taskIds`… but not `paid` or `valid`. */
const ID_NAME = /^ids?$|[_-]ids?$|[a-z0-9](Id|ID|Ids|IDs)$/;
/** Header-like names redact.ts does not cover: their values are credentials. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$/i;

/** How an Error becomes plain fields; logger.ts passes pino's own err serializer. */
export type ErrorFields = (err: Error) => Record<string, unknown>;

function maxBytesFor(key: string): number {
  if (ID_NAME.test(key)) return MAX_ID_BYTES;
  return key === 'stack' ? MAX_LOG_STACK_BYTES : MAX_LOG_STRING_BYTES;
}

/** `s` as a log line may carry it: secrets masked, then cut to `maxBytes` with `…`. */
export function logString(s: string, maxBytes = MAX_LOG_STRING_BYTES): string {
  const window = cutText(s, Math.max(maxBytes, REDACT_WINDOW_BYTES));
  return cutText(redactText(window), maxBytes);
}

/** The fields of one log line, as it may carry them. Errors (at any depth) become plain fields. */
export function logFields(
  obj: Record<string, unknown>,
  errorFields: ErrorFields = plainErrorFields,
): Record<string, unknown> {
  try {
    return boundObject(obj, 0, { seen: new WeakSet(), errorFields });
  } catch (err) {
    // A getter or toJSON that throws: the line still goes out, without the fields.
    return { log_fields_error: logString(err instanceof Error ? err.message : String(err)) };
  }
}

interface Walk {
  readonly seen: WeakSet<object>;
  readonly errorFields: ErrorFields;
}

function bound(value: unknown, key: string, depth: number, walk: Walk): unknown {
  if (typeof value === 'string') return logString(value, maxBytesFor(key));
  if (value === null || typeof value !== 'object') return value;
  if (walk.seen.has(value)) return '[circular]';
  if (depth >= MAX_LOG_DEPTH) return Array.isArray(value) ? '[array]' : '[object]';
  if (value instanceof Error) return boundObject(walk.errorFields(value), depth, walk);
  if (Array.isArray(value)) {
    walk.seen.add(value);
    const kept = value.slice(0, MAX_LOG_ARRAY_ITEMS).map((v) => bound(v, key, depth + 1, walk));
    if (value.length > MAX_LOG_ARRAY_ITEMS) kept.push(`… ${value.length - MAX_LOG_ARRAY_ITEMS} more`);
    walk.seen.delete(value);
    return kept;
  }
  if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
  // Dates, Maps, class instances: their JSON (toJSON) is theirs to decide, but never walked.
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON !== 'function') return Object.prototype.toString.call(value);
    walk.seen.add(value);
    try {
      return bound((toJSON as () => unknown).call(value), key, depth + 1, walk);
    } finally {
      walk.seen.delete(value);
    }
  }
  return boundObject(value as Record<string, unknown>, depth, walk);
}

function boundObject(obj: Record<string, unknown>, depth: number, walk: Walk): Record<string, unknown> {
  const { seen } = walk;
  seen.add(obj);
  const out: Record<string, unknown> = {};
  let keys = 0;
  let dropped = 0;
  for (const key in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    if (keys >= MAX_LOG_OBJECT_KEYS) {
      dropped++;
      continue;
    }
    keys++;
    const v = obj[key];
    const name = cutText(key, MAX_ID_BYTES);
    const secret = isSecretName(key) || CREDENTIAL_HEADER.test(key);
    out[name] =
      secret && v !== undefined && v !== null && v !== '' ? REDACTED : bound(v, key, depth + 1, walk);
  }
  if (dropped > 0) out['…'] = `${dropped} more keys`;
  seen.delete(obj);
  return out;
}

/** An Error as plain fields (type, message, stack, its own fields, cause). */
function plainErrorFields(err: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { type: err.constructor?.name ?? 'Error', message: err.message };
  if (err.stack !== undefined) fields['stack'] = err.stack;
  for (const key of Object.keys(err))
    if (!(key in fields)) fields[key] = (err as unknown as Record<string, unknown>)[key];
  if (err.cause !== undefined && !('cause' in fields)) fields['cause'] = err.cause;
  return fields;
}
