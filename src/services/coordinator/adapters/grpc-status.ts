// The ONE mapping from the Coordinator's business codes to gRPC status codes (docs/coordinator.md
// § Errors; each service has exactly one domain-error → status function). The codes a Worker
// answers RequestTaskSlot with (NoSlot, InvalidSlot, NotFound, ...) map exactly as the Worker maps them,
// so `grpcErrToSlotError` (worker-rpc-client.ts) is this function's inverse on that subset; a table test
// pins both directions.

import * as grpc from '@grpc/grpc-js';
import { grpcStatusError } from '../../../grpc/status.js';
import { MAX_STATUS_MESSAGE_BYTES, cutText } from '../../../kernel/input-bounds.js';
import { CoordinatorError, CoordinatorErrorCode } from '../core/errors.js';

export function coordCodeToGRPC(code: CoordinatorErrorCode): grpc.status {
  switch (code) {
    case CoordinatorErrorCode.InvalidArgument:
      return grpc.status.INVALID_ARGUMENT;
    case CoordinatorErrorCode.Unavailable:
      return grpc.status.UNAVAILABLE;
    case CoordinatorErrorCode.NoExecutableSlot:
    case CoordinatorErrorCode.AllCandidatesRejected:
    case CoordinatorErrorCode.NoSlot:
      return grpc.status.RESOURCE_EXHAUSTED;
    case CoordinatorErrorCode.SlotUncertain:
      return grpc.status.ABORTED;
    case CoordinatorErrorCode.InvalidSlot:
      return grpc.status.FAILED_PRECONDITION;
    case CoordinatorErrorCode.NotFound:
      return grpc.status.NOT_FOUND;
    case CoordinatorErrorCode.Internal:
    case CoordinatorErrorCode.InvalidConfig:
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
  readonly code: CoordinatorErrorCode;
  /** Cut to MAX_STATUS_MESSAGE_BYTES (docs/security.md § Input bounds). */
  readonly message: string;
}

/**
 * The ONE mapping of an error to its status: CoordinatorErrors by their code; anything else is an
 * Internal error (never a leaked stack). The message is capped (docs/security.md § Input bounds): a
 * Worker's rejection text is relayed here and must not grow a status past what HTTP/2 trailers carry.
 * `toServiceError` builds a unary status from it; ReserveWorkerSlots puts the same parts in each failed
 * reservation's ReservationError (docs/batched-protocol.md), so both RPCs answer a task alike.
 */
export function statusPartsOf(err: unknown): StatusParts {
  if (err instanceof CoordinatorError) {
    return {
      status: coordCodeToGRPC(err.code),
      code: err.code,
      message: cutText(err.message, MAX_STATUS_MESSAGE_BYTES),
    };
  }
  return {
    status: grpc.status.INTERNAL,
    code: CoordinatorErrorCode.Internal,
    message: 'internal coordinator error',
  };
}

/** The status a unary handler returns for an error, business code in the `blockx-error-code` trailer. */
export function toServiceError(err: unknown): grpc.ServiceError {
  const { status, code, message } = statusPartsOf(err);
  return grpcStatusError(status, message, code);
}
