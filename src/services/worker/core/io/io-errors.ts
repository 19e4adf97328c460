// Stable codes of the task IO scope, and the classification every error leaving the scope goes through.
// Errors from storage already carry a `code` and a boolean `retryable` (StorageError); the scope adds its
// own conditions (closed scope, cancelled operation, a call's scan too large, a bad request) and wraps
// anything unclassified so every error that reaches a builder, writer or function has both fields.
// Each key equals its value; test/unit/services/worker/core/io/io-errors.test.ts pins that.

import { BlockxError, SharedErrorCode } from '../../../../kernel/errors.js';

export const TaskIoErrorCode = {
  /** The task has no open IO scope (never opened, closed, or the factory is shut down). */
  IO_SCOPE_CLOSED: 'IO_SCOPE_CLOSED',
  /** The operation was pending (retry backoff, admission, scan) when the scope closed. Never retried. */
  CANCELLED: SharedErrorCode.CANCELLED,
  /** A call's scan would return more rows than one socket answer may carry; pass a limit. */
  SCAN_TOO_LARGE: 'SCAN_TOO_LARGE',
  /** A scan option the IO scope does not know (named in the message and `option`). */
  UNKNOWN_OPTION: 'UNKNOWN_OPTION',
  /** A malformed executor IO request (keys not an array, an unknown op). */
  BAD_REQUEST: 'BAD_REQUEST',
  /** Storage threw an error that says nothing about itself; not retryable. */
  IO_FAILED: 'IO_FAILED',
} as const;
export type TaskIoErrorCode = (typeof TaskIoErrorCode)[keyof typeof TaskIoErrorCode];

/** Where an IO error happened; every field optional so the scope fills in what it knows. */
export interface TaskIoErrorFields {
  readonly retryable: boolean;
  readonly taskId?: string;
  /** The retry scope: builder, calls or result. */
  readonly phase?: string;
  /** get, getMany, scan, transaction, ... */
  readonly operation?: string;
  readonly table?: string;
  /** Attempts made before giving up (set when retries were exhausted). */
  readonly attempts?: number;
  /** UNKNOWN_OPTION: the offending option. */
  readonly option?: string;
  readonly cause?: unknown;
}

/**
 * An error raised by the IO scope itself, or a storage error it re-raises after exhausting its retries.
 * `code` is one of TaskIoErrorCode or, for a re-raised storage error, the storage code (OVERLOADED, ...).
 */
export class TaskIoError extends BlockxError {
  readonly retryable: boolean;
  readonly taskId: string | undefined;
  readonly phase: string | undefined;
  readonly operation: string | undefined;
  readonly table: string | undefined;
  readonly attempts: number | undefined;
  readonly option: string | undefined;
  constructor(code: string, message: string, fields: TaskIoErrorFields) {
    super(code, message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.retryable = fields.retryable;
    this.taskId = fields.taskId;
    this.phase = fields.phase;
    this.operation = fields.operation;
    this.table = fields.table;
    this.attempts = fields.attempts;
    this.option = fields.option;
  }
}

/** What the scope knows about an error: enough to decide a retry and to label the task failure. */
export interface IoErrorClass {
  readonly code: string;
  readonly retryable: boolean;
  readonly message: string;
  /** True when the error already has a string `code` and a boolean `retryable` (pass it on unchanged). */
  readonly classified: boolean;
}

/**
 * Reads `code` / `retryable` off any thrown value. An error without a boolean `retryable` is unknown to
 * the scope and is not retried (a bug or a driver error no retry will fix); its message is kept.
 */
export function classifyIoError(err: unknown): IoErrorClass {
  const record = typeof err === 'object' && err !== null ? (err as Record<string, unknown>) : undefined;
  const code = typeof record?.code === 'string' ? record.code : undefined;
  const retryable = typeof record?.retryable === 'boolean' ? record.retryable : undefined;
  const message =
    err instanceof Error ? err.message : typeof record?.message === 'string' ? record.message : String(err);
  return {
    code: code ?? TaskIoErrorCode.IO_FAILED,
    retryable: retryable ?? false,
    message,
    classified: code !== undefined && retryable !== undefined,
  };
}
