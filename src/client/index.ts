// Public surface of the TypeScript client.
export { BlockxClient } from './client.js';
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
  SubmitOutcome,
  TaskRunResult,
  TaskStatusView,
  WorkerCallOptions,
} from './types.js';
export type {
  ExecuteResult,
  PluginConfig,
  PluginResult,
  TaskInput,
  TaskResult,
  TaskState,
  TaskUpdate,
} from '../grpc/domain-types.js';
