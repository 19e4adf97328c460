// Errors of the storage backends. `retryable` is what the task IO scope's retry scopes and the task's
// `retryable` flag are decided by: transient conditions (admission overload, a lost connection, a
// serialization failure or deadlock, a busy database) are retryable; everything about the request itself
// (unknown table or column, a bad key, a type mismatch, a schema mismatch) is not.

import { BlockxError, SharedErrorCode } from '../../kernel/errors.js';

export const StorageErrorCode = {
  /** No backend admission slot within storage.admissionWaitMs. Retryable. */
  OVERLOADED: 'OVERLOADED',
  /** Connection refused/reset/terminated, pool exhausted by a dead server. Retryable. */
  CONNECTION: 'CONNECTION',
  /** Serialization failure, deadlock, SQLITE_BUSY. Retryable. */
  CONFLICT: 'CONFLICT',
  /** The operation was cancelled by its signal (task converged). Not retryable. */
  CANCELLED: SharedErrorCode.CANCELLED,
  /** The backend is closed. Retryable (another worker's backend is fine). */
  CLOSED: 'CLOSED',
  /** Table not declared in the config. */
  UNKNOWN_TABLE: 'UNKNOWN_TABLE',
  /** Column not declared for the table (filter, projection, values). */
  UNKNOWN_COLUMN: 'UNKNOWN_COLUMN',
  /** A key that is not exactly the primary key columns, or a value of the wrong type. */
  BAD_VALUE: 'BAD_VALUE',
  /** Database tables differ from the config; lists every difference. */
  SCHEMA_MISMATCH: 'SCHEMA_MISMATCH',
  /** Unsupported or malformed storage URL. */
  BAD_URL: 'BAD_URL',
  /**
   * A task wrote (or tried to) a table not declared `writable: true`; nothing was written. Not
   * retryable. docs/storage.md, "Which tables tasks may write".
   */
  NOT_WRITABLE: 'NOT_WRITABLE',
  /**
   * A fenced write's term is no longer its job's newest: a newer runner holds the job, and nothing of the
   * transaction was written. Not retryable. docs/follow.md § Fencing. (src/contracts/write-fence.ts names it
   * for the clients that read it in a task's result.)
   */
  FENCED: 'FENCED',
  /** Any other database error (constraint violation, ...). Not retryable. */
  QUERY_FAILED: 'QUERY_FAILED',
} as const;
export type StorageErrorCode = (typeof StorageErrorCode)[keyof typeof StorageErrorCode];

const RETRYABLE: ReadonlySet<StorageErrorCode> = new Set([
  StorageErrorCode.OVERLOADED,
  StorageErrorCode.CONNECTION,
  StorageErrorCode.CONFLICT,
  StorageErrorCode.CLOSED,
]);

export class StorageError extends BlockxError {
  readonly retryable: boolean;
  constructor(
    override readonly code: StorageErrorCode,
    message: string,
    readonly details: {
      readonly table?: string;
      readonly column?: string;
      readonly backend?: string;
      /** SCHEMA_MISMATCH: one line per difference. */
      readonly differences?: readonly string[];
      readonly cause?: unknown;
    } = {},
  ) {
    super(code, message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'StorageError';
    this.retryable = RETRYABLE.has(code);
  }
}

/** Whether an error from storage may succeed when tried again (unknown errors: no). */
export function isRetryableStorageError(err: unknown): boolean {
  return err instanceof StorageError && err.retryable;
}
