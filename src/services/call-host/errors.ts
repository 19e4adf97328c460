// Stable error codes of the call host's adapters. The dispatcher core's own are in
// core/dispatcher/errors.ts. The Worker throws NoStorageError too, from its default IO scope (a Worker
// without storage), and takes it from here through the call host's index.
// Each key equals its value; test/unit/error-codes.test.ts pins that.

import { BlockxError } from '../../kernel/errors.js';

export const CallHostErrorCode = {
  /** A task IO operation (a call's `ctx.io` read) on a Worker that runs without storage. */
  NO_STORAGE: 'NO_STORAGE',
} as const;
export type CallHostErrorCode = (typeof CallHostErrorCode)[keyof typeof CallHostErrorCode];

/** A task IO operation on a worker that has no storage configured. Not retryable: nothing will change. */
export class NoStorageError extends BlockxError {
  declare readonly code: typeof CallHostErrorCode.NO_STORAGE;
  readonly retryable = false;
  readonly operation: string;
  readonly taskId: string;
  constructor(taskId: string, operation: string) {
    super(
      CallHostErrorCode.NO_STORAGE,
      `task ${taskId}: io.${operation} needs storage, but this worker runs without the IO subsystem`,
    );
    this.taskId = taskId;
    this.operation = operation;
  }
}
