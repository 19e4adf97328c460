// How a finished attempt becomes a CallCompleted or CallFailed frame (serialised on the thread).
//
// Classification of a thrown error:
//  - the attempt was cancelled            → kind `deadline`, retryable (the Worker asked for it)
//  - a rejected ctx.io / ctx.call escaped → that request's kind (`io`, or the subcall's), its retryable
//  - anything else                        → kind `user`, retryable only if the error says `retryable: true`
//    (RetryableError, or any error object carrying that flag)

import type { CallFailedMessage, CallFailureKind } from './protocol.js';
import { CallWaitError } from './sdk.js';

export interface AttemptIdentity {
  readonly callId: string;
  readonly attempt: number;
}

export function classifyError(
  err: unknown,
  cancelReason: string | undefined,
): { kind: CallFailureKind; retryable: boolean; message: string; stack?: string; code?: string } {
  const e = err as { message?: unknown; stack?: unknown; retryable?: unknown; code?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const stack = typeof e?.stack === 'string' ? e.stack : undefined;
  if (cancelReason !== undefined) {
    return { kind: 'deadline', retryable: true, message: `cancelled (${cancelReason}): ${message}`, stack };
  }
  if (err instanceof CallWaitError) {
    return { kind: err.kind, retryable: err.retryable, message, stack, code: err.code };
  }
  const code = typeof e?.code === 'string' ? e.code : undefined;
  return { kind: 'user', retryable: e?.retryable === true, message, stack, code };
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
    return failedFrame(id, {
      kind: 'user',
      retryable: false,
      message: `the return value is not JSON-serialisable: ${(err as Error).message}`,
      durationMs,
      ioHits,
    });
  }
  // UTF-8 is at most 3 bytes per UTF-16 unit; only measure when it could be over.
  if (json.length * 3 > maxFrameBytes) {
    const bytes = Buffer.byteLength(json);
    if (bytes > maxFrameBytes) {
      return failedFrame(id, {
        kind: 'user',
        retryable: false,
        message: `the return value is too large: ${bytes} bytes serialised, the frame limit is ${maxFrameBytes}`,
        durationMs,
        ioHits,
      });
    }
  }
  return json;
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
