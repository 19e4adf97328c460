// gRPC status errors that carry a BlockX business code.
//
// The status code is the coarse class (the error tables of docs/task-lifecycle.md and docs/coordinator.md:
// NoSlot → ResourceExhausted, InvalidSlot → FailedPrecondition, SlotUncertain → Aborted, ...); the business
// code travels in the trailing metadata key `blockx-error-code`, so a caller can tell NoSlot from NoExecutableSlot without
// parsing the human message. Each service keeps its own single domain-error → status mapping and uses
// grpcStatusError() to build what it returns.
import * as grpc from '@grpc/grpc-js';
import { MAX_STATUS_MESSAGE_BYTES, cutText } from '../kernel/input-bounds.js';

/** Metadata key carrying the business error code (e.g. `NoSlot`, `SlotUncertain`). */
export const BLOCKX_ERROR_CODE_KEY = 'blockx-error-code';

/**
 * A ServiceError to hand to a unary callback (`callback(err)`) or to destroy a stream with.
 * `message` becomes the status details, cut to MAX_STATUS_MESSAGE_BYTES with "…" (docs/security.md
 * § Input bounds): grpc-js never sends a `grpc-message` trailer above the HTTP/2 header-block limit
 * (~64 KiB), and the call and its connection then hang. Each service's one status mapping
 * (`workerCodeToGRPC`, `toServiceError`) builds its statuses here, so no status escapes the cap.
 * `businessCode`, when given, goes into the trailers.
 */
export function grpcStatusError(
  code: grpc.status,
  message: string,
  businessCode?: string,
): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  if (businessCode !== undefined && businessCode !== '') metadata.set(BLOCKX_ERROR_CODE_KEY, businessCode);
  const details = cutText(message, MAX_STATUS_MESSAGE_BYTES);
  return Object.assign(new Error(details), { code, details, metadata });
}

/**
 * Ends a server stream (e.g. WatchTasks) with an error status. Do not use `call.destroy(err)`: grpc-js
 * sends the status when the stream ends, which a destroyed stream never does, so the client would hang.
 * The stream's own 'error' listener records the status and ends the call.
 */
export function failServerStream<Req, Res>(
  call: grpc.ServerWritableStream<Req, Res>,
  err: grpc.ServiceError,
): void {
  call.emit('error', err);
}

/** True for errors that carry a numeric gRPC status code (what grpc-js clients reject with). */
export function isServiceError(err: unknown): err is grpc.ServiceError {
  return (
    err instanceof Error &&
    typeof (err as Partial<grpc.ServiceError>).code === 'number' &&
    (err as Partial<grpc.ServiceError>).metadata instanceof grpc.Metadata
  );
}

/** The business code from a ServiceError's metadata, or undefined when the peer sent none. */
export function businessCodeOf(err: unknown): string | undefined {
  if (!isServiceError(err)) return undefined;
  const [value] = err.metadata.get(BLOCKX_ERROR_CODE_KEY);
  if (value === undefined) return undefined;
  const code = typeof value === 'string' ? value : value.toString('utf8');
  return code === '' ? undefined : code;
}

/** The gRPC status code of an error, or undefined when it is not a gRPC error. */
export function statusCodeOf(err: unknown): grpc.status | undefined {
  return isServiceError(err) ? err.code : undefined;
}

// Server and channel plumbing was first specified as part of this module; it lives in its own files and
// is re-exported here so either import path works.
export { listenAddress, bindServer, shutdownServer } from './server.js';
export {
  KEEPALIVE_TIME_MS,
  KEEPALIVE_TIMEOUT_MS,
  MAX_MESSAGE_BYTES,
  SERVER_OPTIONS,
  CLIENT_CHANNEL_OPTIONS,
} from './channel-options.js';
