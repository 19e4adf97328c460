// How a finished attempt becomes a CallCompleted or CallFailed frame (serialised on the thread).
//
// Classification of a thrown error:
//  - the attempt was cancelled            → kind `deadline`, retryable (the Worker asked for it)
//  - a rejected ctx.io / ctx.call escaped → that request's kind (`io`, or the subcall's), its retryable
//  - anything else                        → kind `user`, retryable only if the error says `retryable: true`
//    (RetryableError, or any error object carrying that flag)
//
// The stack a failure carries is the user's part of it (userStackFrames): the frames in the function's
// own files, not the executor's, Node's or a dependency's, at most USER_STACK_MAX_FRAMES of them. The
// Worker appends them to the task's failure message (docs/functions.md § When a function throws).

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { types } from 'node:util';
import { completedResultJson } from './frame-codec.js';
import type { CallFailedMessage, CallFailureKind } from './protocol.js';
import { CallWaitError } from './sdk.js';

const isProxy = types.isProxy;

export interface AttemptIdentity {
  readonly callId: string;
  readonly attempt: number;
}

/** Frames of a user stack kept in a failure, and the characters kept of one frame. */
export const USER_STACK_MAX_FRAMES = 12;
const USER_FRAME_MAX_CHARS = 300;

/** The package root (…/dist/executor/call-outcome.js or …/src/executor/call-outcome.ts → …). */
const PACKAGE_ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
const INTERNAL_DIRS = [`${PACKAGE_ROOT}/dist/`, `${PACKAGE_ROOT}/src/`];

/**
 * The frames of `stack` that are the user's code, one per line (`    at inner (/srv/functions/f.ts:2:9)`),
 * or undefined when there is none. Dropped: Node's internals (`node:`), dependencies (`node_modules`),
 * BlockX's own files (the executor, the SDK) and frames without a location. File URLs become paths and
 * the code epoch's query (`?blockx-epoch=…`) is removed, so the line points at the file the user edits.
 */
export function userStackFrames(stack: string | undefined): string | undefined {
  if (stack === undefined) return undefined;
  const kept: string[] = [];
  for (const raw of stack.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('at ')) continue;
    const frame = line
      .replace(/file:\/\/(\/[^\s):?]+)/g, (_m, path: string) => {
        try {
          return fileURLToPath(`file://${path}`);
        } catch {
          return path;
        }
      })
      .replace(/\?blockx-epoch=[^\s):]*/g, '');
    if (/\(node:|\bat node:|node_modules|<anonymous>|\(native\)/.test(frame)) continue;
    if (!/[/\\][^\s]*:\d+(:\d+)?\)?$/.test(frame)) continue;
    if (INTERNAL_DIRS.some((d) => frame.includes(d))) continue;
    kept.push(
      `    ${frame.length > USER_FRAME_MAX_CHARS ? `${frame.slice(0, USER_FRAME_MAX_CHARS - 1)}…` : frame}`,
    );
    if (kept.length === USER_STACK_MAX_FRAMES) break;
  }
  return kept.length === 0 ? undefined : kept.join('\n');
}

export function classifyError(
  err: unknown,
  cancelReason: string | undefined,
): { kind: CallFailureKind; retryable: boolean; message: string; stack?: string; code?: string } {
  const thrown = readThrown(err);
  // Only the user's frames travel (userStackFrames): the executor's own are noise to a function author.
  const t = { ...thrown, stack: userStackFrames(thrown.stack) };
  if (cancelReason !== undefined) {
    return {
      kind: 'deadline',
      retryable: true,
      message: `cancelled (${cancelReason}): ${t.message}`,
      ...(t.stack !== undefined ? { stack: t.stack } : {}),
    };
  }
  if (t.waitError !== undefined) {
    const w = t.waitError;
    return {
      kind: w.kind,
      retryable: w.retryable,
      message: t.message,
      ...(t.stack !== undefined ? { stack: t.stack } : {}),
      ...(w.code !== undefined ? { code: w.code } : {}),
    };
  }
  return {
    kind: 'user',
    retryable: t.retryable,
    message: t.message,
    ...(t.stack !== undefined ? { stack: t.stack } : {}),
    ...(t.code !== undefined ? { code: t.code } : {}),
  };
}

/** What a thrown value says about itself, read without letting it run code that could throw. */
export interface ThrownFields {
  readonly message: string;
  readonly stack: string | undefined;
  readonly code: string | undefined;
  readonly retryable: boolean;
  readonly waitError: CallWaitError | undefined;
}

/**
 * Reads `message`, `stack`, `code` and `retryable` of anything a function may throw. A function can
 * throw any value, and reading one can run its code: a Proxy's traps, getters, a `toString` that throws,
 * an object without a prototype (`String(Object.create(null))` throws). Before this, such a throw made
 * the failure frame itself throw, the call never ended and hung to its budget (docs/security.md, "Task
 * isolation"). So: a Proxy is never touched (its traps are the function's code), every other read is
 * guarded, and whatever cannot be read is described by its type.
 */
export function readThrown(err: unknown): ThrownFields {
  const none = { stack: undefined, code: undefined, retryable: false, waitError: undefined };
  if (err === null || (typeof err !== 'object' && typeof err !== 'function')) {
    return { ...none, message: primitiveText(err) };
  }
  if (isProxy(err)) {
    return { ...none, message: 'the function threw a Proxy (not an Error); its contents are not read' };
  }
  let waitError: CallWaitError | undefined;
  try {
    if (err instanceof CallWaitError) waitError = err;
  } catch {
    // a hostile Symbol.hasInstance cannot be ours; fall through
  }
  const message = guardedString(err, 'message');
  const stack = guardedString(err, 'stack');
  return {
    message: message ?? objectText(err),
    stack,
    code: guardedString(err, 'code'),
    retryable: guarded(err, 'retryable') === true,
    waitError,
  };
}

function guarded(obj: object, key: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function guardedString(obj: object, key: string): string | undefined {
  const v = guarded(obj, key);
  return typeof v === 'string' ? v : undefined;
}

function primitiveText(v: unknown): string {
  try {
    return String(v);
  } catch {
    return `a thrown ${typeof v}`;
  }
}

/** `String(err)` when that works and says more than the tag, else the object's tag. */
function objectText(err: object): string {
  let tag = '[object Object]';
  try {
    tag = Object.prototype.toString.call(err);
  } catch {
    // keep the default
  }
  try {
    const text = String(err);
    if (typeof text === 'string' && text !== tag) return text;
  } catch {
    // no usable toString (e.g. Object.create(null)), or it threw
  }
  return `the function threw a non-Error value (${tag})`;
}

/** CallCompleted JSON, or a CallFailed JSON when the value cannot travel (not JSON, or too large). */
export function completedFrame(
  id: AttemptIdentity,
  value: unknown,
  durationMs: number,
  maxFrameBytes: number,
  ioHits = 0,
): string {
  let json: string;
  try {
    json = JSON.stringify({
      type: 'CallCompleted',
      callId: id.callId,
      attempt: id.attempt,
      value,
      durationMs,
      ...(ioHits > 0 ? { ioHits } : {}),
    });
  } catch (err) {
    return notJsonFrame(id, err, durationMs, ioHits);
  }
  return tooLargeFrame(id, json, 0, durationMs, maxFrameBytes, ioHits) ?? json;
}

/** What a CallCompleted frame has that its CallsCompleted entry does not: `"type":"CallCompleted",`. */
const COMPLETED_TYPE_CHARS = '"type":"CallCompleted",'.length;

/**
 * The CallsCompleted entry of an attempt that returned `value` (`ok`), or its CallFailed JSON when the
 * value cannot travel, exactly when its CallCompleted frame could not (not JSON, or over the limit).
 */
export function completedEntry(
  id: AttemptIdentity,
  value: unknown,
  durationMs: number,
  maxFrameBytes: number,
  ioHits = 0,
): { readonly ok: boolean; readonly json: string } {
  let json: string;
  try {
    json = completedResultJson(id.callId, id.attempt, value, durationMs, ioHits);
  } catch (err) {
    return { ok: false, json: notJsonFrame(id, err, durationMs, ioHits) };
  }
  const failed = tooLargeFrame(id, json, COMPLETED_TYPE_CHARS, durationMs, maxFrameBytes, ioHits);
  return failed === undefined ? { ok: true, json } : { ok: false, json: failed };
}

function notJsonFrame(id: AttemptIdentity, err: unknown, durationMs: number, ioHits: number): string {
  return failedFrame(id, {
    kind: 'user',
    retryable: false,
    message: `the return value is not JSON-serialisable: ${readThrown(err).message}`,
    durationMs,
    ioHits,
  });
}

/** The CallFailed JSON when `json` plus `extraChars` ASCII characters is over the frame limit. */
function tooLargeFrame(
  id: AttemptIdentity,
  json: string,
  extraChars: number,
  durationMs: number,
  maxFrameBytes: number,
  ioHits: number,
): string | undefined {
  // UTF-8 is at most 3 bytes per UTF-16 unit; only measure when it could be over.
  if ((json.length + extraChars) * 3 <= maxFrameBytes) return undefined;
  const bytes = Buffer.byteLength(json) + extraChars;
  if (bytes <= maxFrameBytes) return undefined;
  return failedFrame(id, {
    kind: 'user',
    retryable: false,
    message: `the return value is too large: ${bytes} bytes serialised, the frame limit is ${maxFrameBytes}`,
    durationMs,
    ioHits,
  });
}

export function failedFrame(
  id: AttemptIdentity,
  f: {
    kind: CallFailureKind;
    retryable: boolean;
    message: string;
    stack?: string;
    code?: string;
    durationMs?: number;
    /** Reads answered from read copies (sent when positive). */
    ioHits?: number;
  },
): string {
  const msg: CallFailedMessage = {
    type: 'CallFailed',
    callId: id.callId,
    attempt: id.attempt,
    kind: f.kind,
    retryable: f.retryable,
    message: truncate(f.message),
    ...(f.stack !== undefined ? { stack: truncate(f.stack) } : {}),
    ...(f.code !== undefined ? { code: f.code } : {}),
    ...(f.durationMs !== undefined ? { durationMs: f.durationMs } : {}),
    ...(f.ioHits !== undefined && f.ioHits > 0 ? { ioHits: f.ioHits } : {}),
  };
  return JSON.stringify(msg);
}

const MAX_TEXT = 16 * 1024;
function truncate(text: string): string {
  return text.length <= MAX_TEXT
    ? text
    : `${text.slice(0, MAX_TEXT)}… (${text.length - MAX_TEXT} more characters)`;
}
