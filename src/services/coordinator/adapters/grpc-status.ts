// The ONE mapping from the Coordinator's business codes to gRPC status codes (seeds/coordinator.md
// § Public error codes; STYLE.md: one domain-error → status function per service). The codes a Worker
// answers RequestTaskSlot with (NoSlot, InvalidSlot, NotFound, ...) map exactly as the Worker maps them,
// so `grpcErrToSlotError` (worker-rpc-client.ts) is this function's inverse on that subset; a table test
// pins both directions.

import * as grpc from '@grpc/grpc-js';
import { grpcStatusError } from '../../../grpc/status.js';
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

/**
 * The status a handler returns for an error: CoordinatorErrors by their code, with the business code in
 * the `blockx-error-code` trailer; anything else is an Internal error (never a leaked stack). The
 * message is capped by `grpcStatusError` (docs/security.md § Input bounds): a Worker's rejection text
 * is relayed here and must not grow a status past what HTTP/2 trailers can carry.
 */
export function toServiceError(err: unknown): grpc.ServiceError {
  if (err instanceof CoordinatorError) {
    return grpcStatusError(coordCodeToGRPC(err.code), err.message, err.code);
  }
  return grpcStatusError(grpc.status.INTERNAL, 'internal coordinator error', CoordinatorErrorCode.Internal);
}
