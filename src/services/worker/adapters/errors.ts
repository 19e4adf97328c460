// Stable error codes of the Worker runtime (adapters and app). Admission errors and task failure codes
// belong to the core (../core/errors.ts); these are the errors the runtime's own parts throw.
// Each key equals its value; test/unit/services/worker/adapters/errors.test.ts pins that.

import { BlockxError } from '../../../kernel/errors.js';

export const WorkerRuntimeErrorCode = {
  /** The task IO scope has no storage behind it (standalone worker without the IO subsystem). */
  NO_STORAGE: 'NO_STORAGE',
  /** runWorker: the config declares no such deployment. */
  DEPLOYMENT_UNKNOWN: 'DEPLOYMENT_UNKNOWN',
} as const;
export type WorkerRuntimeErrorCode = (typeof WorkerRuntimeErrorCode)[keyof typeof WorkerRuntimeErrorCode];

/** A task IO operation on a worker that has no storage configured. Not retryable: nothing will change. */
export class NoStorageError extends BlockxError {
  declare readonly code: typeof WorkerRuntimeErrorCode.NO_STORAGE;
  readonly retryable = false;
  readonly operation: string;
  readonly taskId: string;
  constructor(taskId: string, operation: string) {
    super(
      WorkerRuntimeErrorCode.NO_STORAGE,
      `task ${taskId}: io.${operation} needs storage, but this worker runs without the IO subsystem`,
    );
    this.taskId = taskId;
    this.operation = operation;
  }
}

export class DeploymentUnknownError extends BlockxError {
  declare readonly code: typeof WorkerRuntimeErrorCode.DEPLOYMENT_UNKNOWN;
  readonly deployment: string;
  constructor(deployment: string, declared: readonly string[]) {
    super(
      WorkerRuntimeErrorCode.DEPLOYMENT_UNKNOWN,
      `unknown deployment "${deployment}" (declared: ${declared.join(', ') || 'none'})`,
    );
    this.deployment = deployment;
  }
}
