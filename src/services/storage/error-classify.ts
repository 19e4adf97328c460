// Driver errors → StorageError codes. Retryable: transient conditions (a serialization failure or
// deadlock, a busy or locked SQLite database, a lost connection). Data exceptions (a number out of a
// column's range, a NUL in text) are BAD_VALUE. Everything else is QUERY_FAILED with the driver's error
// as `cause`. Pure: no IO.

import { StorageError, StorageErrorCode } from './errors.js';

// Transient conflicts: the transaction was rolled back and running it again may well succeed.
// 40000 transaction_rollback, 40001 serialization_failure, 40P01 deadlock_detected, 55P03
// lock_not_available. Not 40002 (an integrity violation at commit) nor 40003 (completion unknown).
const PG_CONFLICT_STATES = new Set(['40000', '40001', '40P01', '55P03']);
const PG_CONNECTION_STATES = new Set(['57P01', '57P02', '57P03', '53300']);
const NODE_CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'EAI_AGAIN',
]);
// pg and pg-pool report a dead or unreachable server with these messages and no code.
const PG_CONNECTION_MESSAGES =
  /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Client was closed and is not queryable|Connection timeout/i;

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The storage code of an error from `pg` / `pg-pool` / the socket under them. */
export function classifyPostgresError(err: unknown): StorageErrorCode {
  const code = codeOf(err);
  if (code !== undefined && PG_CONFLICT_STATES.has(code)) return StorageErrorCode.CONFLICT;
  if (code !== undefined && (code.startsWith('08') || PG_CONNECTION_STATES.has(code)))
    return StorageErrorCode.CONNECTION;
  if (code !== undefined && NODE_CONNECTION_CODES.has(code)) return StorageErrorCode.CONNECTION;
  if (code !== undefined && code.startsWith('22')) return StorageErrorCode.BAD_VALUE;
  if (PG_CONNECTION_MESSAGES.test(messageOf(err))) return StorageErrorCode.CONNECTION;
  return StorageErrorCode.QUERY_FAILED;
}

/** The storage code of an error from better-sqlite3 (SqliteError codes are SQLITE_* strings). */
export function classifySqliteError(err: unknown): StorageErrorCode {
  const code = codeOf(err);
  if (code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')))
    return StorageErrorCode.CONFLICT;
  if (code === 'SQLITE_TOOBIG' || code === 'SQLITE_MISMATCH') return StorageErrorCode.BAD_VALUE;
  return StorageErrorCode.QUERY_FAILED;
}

/** A driver error as a StorageError of `code`, naming the backend and table, with the error as cause. */
export function storageErrorFrom(
  code: StorageErrorCode,
  err: unknown,
  backend: string,
  table: string | undefined,
): StorageError {
  const driverCode = codeOf(err);
  const where = table === undefined ? '' : ` (table "${table}")`;
  return new StorageError(
    code,
    `${backend}${where}: ${messageOf(err)}${driverCode === undefined ? '' : ` [${driverCode}]`}`,
    { backend, cause: err, ...(table === undefined ? {} : { table }) },
  );
}
