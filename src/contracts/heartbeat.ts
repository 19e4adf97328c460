// The heartbeat value a Worker writes to etcd under `<prefix><workerAddr>` (docs/architecture.md § etcd
// keys), and its strict parser. The Coordinator trusts nothing it reads from etcd: a value that is not JSON,
// or whose fields have the wrong type or range, is rejected here and the watcher skips it with a warning, so
// a single garbage key can never poison candidate selection. Counts must be non-negative integers at most
// MAX_HEARTBEAT_SLOTS, fractions in [0, 1]. Whether lastHeartbeatMs is plausible depends on the clock and
// is decided by the Coordinator core (coordinator/core/freshness.ts). Pure: no IO, no clock.

import { HeartbeatParseError } from './errors.js';
import { workerAddrFromKey } from './registry-prefix.js';

export interface WorkerHeartbeat {
  /** The address Clients and the Coordinator dial, e.g. `10.0.0.7:9090`; also the etcd key suffix. */
  readonly workerAddr: string;
  /** Size of the Worker's unified slot pool. */
  readonly taskSlots: number;
  /** Slots reserved by `RequestTaskSlot` and not yet submitted or expired. */
  readonly reservedSlots: number;
  /** Tasks admitted and not yet terminal. */
  readonly runningTasks: number;
  /** Host CPU utilisation, a fraction 0..1. */
  readonly cpuPercent: number;
  /** Host memory utilisation, a fraction 0..1. */
  readonly memoryPercent: number;
  readonly memoryAvailableBytes: number;
  readonly memoryTotalBytes: number;
  /** Resident set size of the Worker process. */
  readonly processRssBytes: number;
  /** Share of recent tasks that failed, a fraction 0..1. */
  readonly errorRate: number;
  /** When the Worker produced this heartbeat, UTC milliseconds by the Worker's clock. */
  readonly lastHeartbeatMs: number;
  /**
   * Of `reservedSlots`, how many a client holding no reservation could still obtain through the
   * fair-share reclaim (docs/security.md § Reservations per client). Optional (absent = 0): a newer
   * field, so older Workers and Coordinators interoperate. At most `reservedSlots`.
   */
  readonly reclaimableSlots?: number;
  /**
   * The code version the Worker serves new tasks from (docs/functions-deploy.md): the content hash of
   * its function files (local folder or deployed bundle). Optional: older Workers do not send it.
   * At most MAX_CODE_VERSION_CHARS of [A-Za-z0-9._:-].
   */
  readonly codeVersion?: string;
  /**
   * Why the Worker is not on the cluster's current deployed version (a bundle it refused, a fetch that
   * failed), at most MAX_CODE_VERSION_ERROR_CHARS; absent when it is. Optional, newer field.
   */
  readonly codeVersionError?: string;
}

/** Longest accepted `codeVersion` (a version id is 16 hex digits; room for longer schemes). */
export const MAX_CODE_VERSION_CHARS = 64;
/** Longest accepted `codeVersionError`; a Worker truncates longer reasons. */
export const MAX_CODE_VERSION_ERROR_CHARS = 300;
const CODE_VERSION_PATTERN = /^[A-Za-z0-9._:-]+$/;

export type HeartbeatParseResult =
  | { readonly ok: true; readonly value: WorkerHeartbeat }
  | { readonly ok: false; readonly error: HeartbeatParseError };

type FieldKind = 'count' | 'fraction' | 'bytes' | 'timestamp';

/**
 * Upper bound on the slot counts (taskSlots, reservedSlots, runningTasks). A real Worker runs at most a
 * few hundred slots; a heartbeat claiming more is implausible (a forged key would claim 100,000 free
 * slots to rank first) and is rejected like any other malformed value.
 */
export const MAX_HEARTBEAT_SLOTS = 100_000;

/** The numeric fields in their canonical (encoding) order, with the rule each must satisfy. */
const NUMERIC_FIELDS: ReadonlyArray<
  readonly [
    Exclude<keyof WorkerHeartbeat, 'workerAddr' | 'reclaimableSlots' | 'codeVersion' | 'codeVersionError'>,
    FieldKind,
  ]
> = [
  ['taskSlots', 'count'],
  ['reservedSlots', 'count'],
  ['runningTasks', 'count'],
  ['cpuPercent', 'fraction'],
  ['memoryPercent', 'fraction'],
  ['memoryAvailableBytes', 'bytes'],
  ['memoryTotalBytes', 'bytes'],
  ['processRssBytes', 'bytes'],
  ['errorRate', 'fraction'],
  ['lastHeartbeatMs', 'timestamp'],
];

// An address is dialled and used as a key suffix: no whitespace or control characters.
// eslint-disable-next-line no-control-regex
const BAD_ADDR_CHARS = /[\s\u0000-\u001f\u007f]/;

const utf8 = new TextDecoder('utf-8', { fatal: true });

function fail(message: string, field?: string, cause?: unknown): HeartbeatParseResult {
  return {
    ok: false,
    error: new HeartbeatParseError(field === undefined ? { message } : { field, message }, { cause }),
  };
}

function checkNumber(kind: FieldKind, v: unknown): string | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a finite number';
  if (kind === 'fraction') return v >= 0 && v <= 1 ? undefined : 'must be a fraction in [0, 1]';
  if (!Number.isSafeInteger(v)) return 'must be an integer';
  if (v < 0) return 'must not be negative';
  if (kind === 'count' && v > MAX_HEARTBEAT_SLOTS) return `must be at most ${MAX_HEARTBEAT_SLOTS}`;
  return undefined;
}

/**
 * Parses and validates one heartbeat value (the raw etcd value, as bytes or text). Never throws.
 * Unknown extra fields are ignored (a newer Worker may add some); every documented field is required.
 */
export function parseWorkerHeartbeat(json: string | Uint8Array): HeartbeatParseResult {
  let text: string;
  if (typeof json === 'string') {
    text = json;
  } else {
    try {
      text = utf8.decode(json);
    } catch (cause) {
      return fail('value is not valid UTF-8', undefined, cause);
    }
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    return fail('value is not valid JSON', undefined, cause);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return fail('value must be a JSON object');
  }
  const obj = raw as Record<string, unknown>;

  const addr = obj['workerAddr'];
  if (typeof addr !== 'string' || addr.length === 0) return fail('must be a non-empty string', 'workerAddr');
  if (BAD_ADDR_CHARS.test(addr))
    return fail('must not contain whitespace or control characters', 'workerAddr');

  const out: Record<string, unknown> = { workerAddr: addr };
  for (const [field, kind] of NUMERIC_FIELDS) {
    if (!Object.hasOwn(obj, field)) return fail('is required', field);
    const v = obj[field];
    const problem = checkNumber(kind, v);
    if (problem !== undefined) return fail(problem, field);
    out[field] = v;
  }
  if (Object.hasOwn(obj, 'reclaimableSlots')) {
    const v = obj['reclaimableSlots'];
    const problem =
      checkNumber('count', v) ??
      ((v as number) > (out['reservedSlots'] as number) ? 'must be at most reservedSlots' : undefined);
    if (problem !== undefined) return fail(problem, 'reclaimableSlots');
    out['reclaimableSlots'] = v;
  }
  if (Object.hasOwn(obj, 'codeVersion')) {
    const v = obj['codeVersion'];
    if (
      typeof v !== 'string' ||
      v.length === 0 ||
      v.length > MAX_CODE_VERSION_CHARS ||
      !CODE_VERSION_PATTERN.test(v)
    )
      return fail(`must be 1..${MAX_CODE_VERSION_CHARS} characters of [A-Za-z0-9._:-]`, 'codeVersion');
    out['codeVersion'] = v;
  }
  if (Object.hasOwn(obj, 'codeVersionError')) {
    const v = obj['codeVersionError'];
    if (
      typeof v !== 'string' ||
      v.length > MAX_CODE_VERSION_ERROR_CHARS ||
      BAD_ADDR_CHARS.test(v.replace(/ /g, ''))
    )
      return fail(
        `must be a string of at most ${MAX_CODE_VERSION_ERROR_CHARS} characters without control characters`,
        'codeVersionError',
      );
    if (v.length > 0) out['codeVersionError'] = v;
  }
  return { ok: true, value: out as unknown as WorkerHeartbeat };
}

/** Encodes a heartbeat as the etcd value: exactly the documented fields, in canonical order. */
export function encodeWorkerHeartbeat(hb: WorkerHeartbeat): string {
  const out: Record<string, unknown> = { workerAddr: hb.workerAddr };
  for (const [field] of NUMERIC_FIELDS) out[field] = hb[field];
  if (hb.reclaimableSlots !== undefined && hb.reclaimableSlots > 0)
    out['reclaimableSlots'] = hb.reclaimableSlots;
  if (hb.codeVersion !== undefined && hb.codeVersion !== '') out['codeVersion'] = hb.codeVersion;
  if (hb.codeVersionError !== undefined && hb.codeVersionError !== '')
    out['codeVersionError'] = hb.codeVersionError.slice(0, MAX_CODE_VERSION_ERROR_CHARS);
  return JSON.stringify(out);
}

/**
 * Parses the value of etcd key `key` listed or watched under `prefix`: the key must be `<prefix><addr>`
 * and the value's workerAddr must equal that addr (a mismatch would make a later delete by key miss the
 * entry). Never throws.
 */
export function parseWorkerRegistration(
  prefix: string,
  key: string,
  value: string | Uint8Array,
): HeartbeatParseResult {
  const keyAddr = workerAddrFromKey(prefix, key);
  if (keyAddr === undefined) return fail(`key ${JSON.stringify(key)} is not a worker key under ${prefix}`);
  const r = parseWorkerHeartbeat(value);
  if (r.ok && r.value.workerAddr !== keyAddr) {
    return fail(
      `${JSON.stringify(r.value.workerAddr)} does not match the key suffix ${JSON.stringify(keyAddr)}`,
      'workerAddr',
    );
  }
  return r;
}
