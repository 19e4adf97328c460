// Public surface of the Worker core. Adapters import from here, not from individual files.

export { WorkerCore, type WorkerCoreOptions } from './worker-core.js';
export {
  DEFAULT_WORKER_CORE_CONFIG,
  effectiveTaskDeadlineMs,
  resolveWorkerCoreConfig,
  validateWorkerCoreConfig,
  type WorkerCoreConfig,
} from './config.js';
export {
  FAILURE_RETRYABLE_RULES,
  FailureCode,
  RunStreamInputError,
  WorkerAdmissionError,
  WorkerCoreConfigError,
  WorkerErrorCode,
  isFailureCode,
  resolveRetryable,
  type AdmissionErrorDetail,
  type InvalidSlotReason,
  type RetryableRule,
  type UnavailableReason,
  type WorkerConfigIssue,
} from './errors.js';
export type * from './commands.js';
export {
  IgnoredReason,
  type Applied,
  type HeartbeatCounts,
  type PhaseFailure,
  type PhaseOutcome,
  type PhaseSuccessPayload,
  type RequestTaskSlotResult,
  type Step,
  type SubmitTaskResult,
  type TaskSnapshot,
  type TaskStatus,
  type TickSummary,
} from './step.js';
export type { ActivationFailureCode } from './task-events.js';
export type { AcceptedTaskInput } from './task-table.js';
export {
  TaskPhase,
  TaskState,
  isTerminalState,
  type ActivePhase,
  type CodeEpoch,
  type ExecuteResult,
  type ExecutionPhase,
  type PluginConfig,
  type PluginResult,
  type TaskInput,
  type TaskResult,
  type TerminalTaskState,
} from './types.js';
export { MAX_WATCH_TASK_IDS, acceptWatchTaskIds } from './watch-request.js';
export {
  RunStream,
  type AdmissionOutcome,
  type AdmissionVerdict,
  type FailStream,
  type RequestVerdict,
  type RunStreamFailure,
  type RunStreamMessage,
  type RunStreamOptions,
  type RunStreamState,
  type RunStreamStats,
  type SubmissionVerdict,
} from './run-stream.js';
export { requireBatchSize } from './batch-request.js';
