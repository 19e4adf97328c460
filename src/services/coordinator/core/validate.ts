// Request validation done before anything else (docs/coordinator.md: an empty taskId is InvalidArgument and
// never reaches a Worker). The Coordinator does not interpret taskId beyond that: it neither generates nor
// deduplicates task ids. Both coordinator services (block and bundle) reserve through this check.
//
// The id is also bounded (docs/security.md § Input bounds): the Coordinator forwards it to Workers and
// logs it, and an unbounded one echoed in a status message can wedge a connection.

import { MAX_ID_BYTES, utf8ByteLength } from '../../../kernel/input-bounds.js';
import { CoordinatorError, CoordinatorErrorCode } from './errors.js';

/** Undefined when the request is acceptable, otherwise an InvalidArgument error. */
export function validateReserveRequest(taskId: string): CoordinatorError | undefined {
  if (typeof taskId !== 'string' || taskId.length === 0) {
    return new CoordinatorError(CoordinatorErrorCode.InvalidArgument, 'taskId must not be empty');
  }
  if (utf8ByteLength(taskId, MAX_ID_BYTES) > MAX_ID_BYTES) {
    return new CoordinatorError(
      CoordinatorErrorCode.InvalidArgument,
      `taskId must be at most ${MAX_ID_BYTES} bytes (UTF-8)`,
    );
  }
  return undefined;
}
