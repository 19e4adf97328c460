// Public API of the `blockx` package: types for function and plugin authors, the kernel, and errors.
// Every runtime name is listed (the wildcards re-export types only), so nothing internal becomes public
// by accident. Narrower entry points: `blockx/function`, `blockx/plugin`, `blockx/client` (README,
// "Package entry points"). Importing it installs the lean AsyncResource#bind (src/grpc/lean-bind.ts), as
// every entry point that makes gRPC calls does.
import { installLeanAsyncResourceBind } from './grpc/lean-bind.js';

installLeanAsyncResourceBind();

export {
  BlockxError,
  ConfigError,
  ConfigNotFoundError,
  KernelErrorCode,
  PluginError,
  PluginLoadError,
  TaskConfigError,
  formatConfigIssue,
  outcomeError,
} from './kernel/errors.js';
export type { ConfigIssue, SchemaIssue } from './kernel/errors.js';
// The plugin contract (also `blockx/plugin`): its names are listed once, in src/plugin.ts.
export type * from './plugin.js';
export { defineBuilder, defineWriter, isRetryableWriterFailure } from './plugin.js';
export type { KernelHooks } from './kernel/hooks.js';
export type { BlockxConfig, DeploymentConfig } from './kernel/config-types.js';
export { loadConfig, resolveConfig, type LoadConfigOptions } from './kernel/config.js';
export { bootKernel, type Kernel } from './kernel/kernel.js';
// The function SDK (also `blockx/function`): its names are listed once, in src/function.ts.
export type * from './function.js';
export { CallWaitError, RetryableError } from './function.js';
export type {
  BlockxFunction,
  CallBlock,
  CallContext,
  CallFailureKind,
  CallIo,
  CallLogger,
  IoScanOptions,
  LogFields,
} from './executor/sdk.js';
// The TypeScript client: reserve → submit → watch with the retry semantics of docs/retries.md (src/client/).
export {
  BlockxClient,
  BlockxClientError,
  ClientErrorCode,
  TaskState,
  isTerminalState,
  newTaskId,
  runTask,
} from './client/index.js';
// Backfills and task-level retries (docs/backfill.md, docs/retries.md).
export {
  BackfillPlanError,
  FileJournal,
  planBackfill,
  runBackfill,
  runWithRetries,
  decideTaskRetry,
} from './client/index.js';
export type {
  BackfillEvent,
  BackfillJob,
  BackfillJournal,
  BackfillOptions,
  BackfillPer,
  BackfillPlan,
  BackfillSummary,
  BackfillTemplate,
  TaskRetryPolicy,
  UnitReport,
} from './client/index.js';
export type {
  BlockxClientOptions,
  CallOptions,
  ClientTaskInput,
  ClusterStatusView,
  CoordinatorLimitsView,
  SubmitOutcome,
  TaskResult,
  TaskRunResult,
  TaskStatusView,
  TaskUpdate,
  WorkerCallOptions,
  WorkerStatusView,
} from './client/index.js';
