// Public surface of the TypeScript client (`blockx/client`). Importing it installs the lean
// AsyncResource#bind process-wide (src/grpc/lean-bind.ts): the entry points install it (this one,
// src/index.ts, bin/blockx.js), constructing a client does not.
import { installLeanAsyncResourceBind } from '../grpc/lean-bind.js';

installLeanAsyncResourceBind();

export { BlockxClient } from './client.js';
export type { BackfillOptions } from './client.js';
export {
  BackfillPlanError,
  bundleOf,
  bundleRange,
  DEFAULT_BUNDLE_SIZE,
  jobIdOf,
  planBackfill,
} from './backfill/plan.js';
export type {
  BackfillJob,
  BackfillPer,
  BackfillPlan,
  BackfillTemplate,
  BackfillUnit,
} from './backfill/plan.js';
export { FileJournal, readDone } from './backfill/journal.js';
export type { BackfillJournal, JournalEntry, JournalHeader } from './backfill/journal.js';
export { rowsOf, runBackfill } from './backfill/run-backfill.js';
export type {
  BackfillEvent,
  BackfillRunOptions,
  BackfillSummary,
  RetryReport,
  UnitReport,
  UnitState,
} from './backfill/run-backfill.js';
export { attemptOutcomeOf, runWithRetries } from './run-with-retries.js';
export type {
  AttemptReport,
  RetriedOutcome,
  RunnableTask,
  RunWithRetriesOptions,
  TaskRunner,
} from './run-with-retries.js';
export {
  backoffMs,
  checkTaskRetryPolicy,
  decideTaskRetry,
  DEFAULT_TASK_RETRY_BACKOFF,
  retryReasonOf,
} from './task-retry.js';
export type {
  AttemptOutcome,
  GiveUpReason,
  RetryReason,
  TaskRetryDecision,
  TaskRetryPolicy,
} from './task-retry.js';
export {
  BlockxClientError,
  ClientErrorCode,
  clientCodeOfStatus,
  isRetryableClientCode,
  toClientError,
} from './errors.js';
export type { ClientErrorFields } from './errors.js';
export { decideRetry, initialRetryState, placeTask } from './reserve.js';
export type {
  BackoffPolicy,
  Placement,
  PlacementPhase,
  PlacementPorts,
  Reservation,
  RetryDecision,
  RetryPolicy,
  RetryState,
} from './reserve.js';
export { watchTaskUpdates } from './watch.js';
export type { WatchSource } from './watch.js';
export { ChannelPool } from './channel-pool.js';
export { dialAddress } from './address.js';
export { runMany } from './run-many.js';
export type { RunManyOptions, RunManyOutcome } from './run-many.js';
export { isJsonLinesPath, readTaskSources, STDIN_NAME } from './task-files.js';
export type { ReadTaskSourcesOptions, SourcedTask, SourceProblem } from './task-files.js';
export { newTaskId, runTask } from './task-client.js';
export type { RunTaskOptions, TaskOutcome } from './task-client.js';
export type {
  BlockxClientOptions,
  CallOptions,
  ClientTaskInput,
  ClusterStatusView,
  CoordinatorLimitsView,
  SubmitOutcome,
  TaskRunResult,
  TaskStatusView,
  WorkerCallOptions,
  WorkerStatusView,
} from './types.js';
export type { ExecuteResult, TaskResult, TaskUpdate } from '../grpc/domain-types.js';
// The task vocabulary (src/contracts/task.ts): one definition for the client, the Worker and the wire.
export { TaskState, isTerminalState } from '../contracts/task.js';
export type { PluginConfig, PluginResult, TaskInput, TerminalTaskState } from '../contracts/task.js';
export { loadTlsMaterial as readTlsFiles } from '../kernel/tls-files.js';
export type { TlsFiles, TlsMaterial, TlsPem } from '../kernel/tls-files.js';
