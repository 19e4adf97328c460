// The ONE mapping from the Coordinator's domain errors to gRPC statuses (docs/coordinator.md § Errors),
// for every service it serves: reservations (CoordinatorError), the functions store behind
// CoordinatorAdminService (FunctionsStoreError) and backfill job reports (BackfillReportError). The
// business code travels in the `blockx-error-code` trailer. The codes a Worker answers RequestTaskSlot
// with (NoSlot, InvalidSlot, NotFound, ...) map exactly as the Worker maps them, so `grpcErrToSlotError`
// (worker-rpc-client.ts) is this function's inverse on that subset; a table test pins both directions.

import * as grpc from '@grpc/grpc-js';
import { grpcStatusError } from '../../../grpc/status.js';
import { MAX_STATUS_MESSAGE_BYTES, cutText } from '../../../kernel/input-bounds.js';
import { FunctionsStoreError, type FunctionsStoreErrorCode } from '../../functions-store/errors.js';
import {
  BackfillReportError,
  type BackfillReportErrorCode,
  CoordinatorError,
  CoordinatorErrorCode,
} from '../core/errors.js';

/** Every business code a Coordinator status carries. */
export type CoordinatorStatusCode = CoordinatorErrorCode | FunctionsStoreErrorCode | BackfillReportErrorCode;

export function coordCodeToGRPC(code: CoordinatorStatusCode): grpc.status {
  switch (code) {
    case 'InvalidArgument':
    case 'BUNDLE_EMPTY':
    case 'BUNDLE_TOO_LARGE':
    case 'BUNDLE_CORRUPT':
    case 'BUNDLE_TAMPERED':
    case 'VERSION_AMBIGUOUS':
      return grpc.status.INVALID_ARGUMENT;
    case 'Unavailable':
      return grpc.status.UNAVAILABLE;
    case 'NoExecutableSlot':
    case 'AllCandidatesRejected':
    case 'NoSlot':
    case 'TooManyJobs':
      return grpc.status.RESOURCE_EXHAUSTED;
    case 'SlotUncertain':
    case 'STORE_CONFLICT':
      return grpc.status.ABORTED;
    case 'InvalidSlot':
    case 'NO_DEPLOYMENT':
      return grpc.status.FAILED_PRECONDITION;
    case 'NotFound':
    case 'VERSION_UNKNOWN':
      return grpc.status.NOT_FOUND;
    case 'NotOwner':
      return grpc.status.PERMISSION_DENIED;
    // BUNDLE_UNTRUSTED is the Workers' check of a stored bundle and FOLDER_UNREADABLE the CLI's folder
    // read: neither is a caller's mistake when a Coordinator meets it.
    case 'Internal':
    case 'InvalidConfig':
    case 'BUNDLE_UNTRUSTED':
    case 'FOLDER_UNREADABLE':
      return grpc.status.INTERNAL;
    default: {
      const _exhaustive: never = code;
      return _exhaustive;
    }
  }
}

/** A status as its three parts: what a unary call returns, and what a batched call carries per id. */
export interface StatusParts {
  readonly status: grpc.status;
  /** The business code (`blockx-error-code` of a unary call). */
  readonly code: CoordinatorStatusCode;
  /** Cut to MAX_STATUS_MESSAGE_BYTES (docs/security.md § Input bounds). */
  readonly message: string;
}

/**
 * The status of a domain error of any Coordinator service; undefined for anything else (a bug, an IO
 * failure), which each handler answers as INTERNAL without leaking its text. The message is capped
 * (docs/security.md § Input bounds): a Worker's rejection text is relayed here and must not grow a status
 * past what HTTP/2 trailers carry.
 */
export function domainStatusOf(err: unknown): StatusParts | undefined {
  if (
    err instanceof CoordinatorError ||
    err instanceof FunctionsStoreError ||
    err instanceof BackfillReportError
  ) {
    return {
      status: coordCodeToGRPC(err.code),
      code: err.code,
      message: cutText(err.message, MAX_STATUS_MESSAGE_BYTES),
    };
  }
  return undefined;
}

/**
 * A domain error's status, anything else an Internal one (never a leaked stack). `toServiceError` builds
 * a unary status from it; ReserveWorkerSlots puts the same parts in each failed reservation's
 * ReservationError (docs/batched-protocol.md), so both RPCs answer a task alike.
 */
export function statusPartsOf(err: unknown): StatusParts {
  return (
    domainStatusOf(err) ?? {
      status: grpc.status.INTERNAL,
      code: CoordinatorErrorCode.Internal,
      message: 'internal coordinator error',
    }
  );
}

/** The status a unary handler returns for an error, business code in the `blockx-error-code` trailer. */
export function toServiceError(err: unknown): grpc.ServiceError {
  const { status, code, message } = statusPartsOf(err);
  return grpcStatusError(status, message, code);
}
