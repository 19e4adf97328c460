// Stable error codes of the Worker runtime (adapters and app). Admission errors and task failure codes
// belong to the core (../core/errors.ts); these are the errors the runtime's own parts throw.
// Each key equals its value; test/unit/services/worker/adapters/errors.test.ts pins that.

import { BlockxError } from '../../../kernel/errors.js';

export const WorkerRuntimeErrorCode = {
  /** The task IO scope has no storage behind it (standalone worker without the IO subsystem). */
  NO_STORAGE: 'NO_STORAGE',
  /** LocalCallRunner: no `functions/<name>.{js,mjs,ts}`. */
  FUNCTION_NOT_FOUND: 'FUNCTION_NOT_FOUND',
  /** LocalCallRunner: the module does not default-export a function. */
  FUNCTION_INVALID: 'FUNCTION_INVALID',
  /** LocalCallRunner: a call ran past its per-call budget (`callDeadlineMs`). */
  CALL_DEADLINE_EXCEEDED: 'CALL_DEADLINE_EXCEEDED',
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

/** A function a call names cannot be loaded. Not retryable. */
export class FunctionLoadError extends BlockxError {
  declare readonly code:
    typeof WorkerRuntimeErrorCode.FUNCTION_NOT_FOUND | typeof WorkerRuntimeErrorCode.FUNCTION_INVALID;
  readonly retryable = false;
  readonly functionName: string;
  readonly functionsDir: string;
  constructor(
    code: typeof WorkerRuntimeErrorCode.FUNCTION_NOT_FOUND | typeof WorkerRuntimeErrorCode.FUNCTION_INVALID,
    fields: { functionName: string; functionsDir: string; message: string },
    options?: { cause?: unknown },
  ) {
    super(code, `function ${fields.functionName} (in ${fields.functionsDir}): ${fields.message}`, options);
    this.functionName = fields.functionName;
    this.functionsDir = fields.functionsDir;
  }
}

/** A call ran past its budget. */
export class CallDeadlineError extends BlockxError {
  declare readonly code: typeof WorkerRuntimeErrorCode.CALL_DEADLINE_EXCEEDED;
  readonly budgetMs: number;
  constructor(functionName: string, budgetMs: number) {
    super(
      WorkerRuntimeErrorCode.CALL_DEADLINE_EXCEEDED,
      `call of ${functionName} exceeded its ${budgetMs} ms budget`,
    );
    this.budgetMs = budgetMs;
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
