// Request validation done before anything else (seeds: an empty taskId is InvalidArgument and never
// reaches a Worker). The Coordinator does not interpret taskId beyond that: it neither generates nor
// deduplicates task ids.

import { CoordinatorError, CoordinatorErrorCode } from './errors.js';

/** Undefined when the request is acceptable, otherwise an InvalidArgument error. */
export function validateReserveRequest(taskId: string): CoordinatorError | undefined {
  if (typeof taskId !== 'string' || taskId.length === 0) {
    return new CoordinatorError(CoordinatorErrorCode.InvalidArgument, 'taskId must not be empty');
  }
  return undefined;
}
