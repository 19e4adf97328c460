// The call host's public surface: what the Worker (src/services/worker/) and the app layer
// (src/app/) use of it. Everything else in this package is internal; test/unit/layers.test.ts fails
// when a module outside it imports past this file. What each part does is README.md.

export {
  ManualExecutorReadiness,
  codeEpochsFromView,
  type CallPhaseOutcome,
  type CallPhaseOutcomeFailureCode,
  type CallPhaseRunner,
  type CallPhaseTask,
  type CodeEpochPin,
  type CodeEpochSource,
  type ExecutorReadiness,
  type ExecutorReadinessEvent,
  type PinnableCodeView,
} from './ports.js';
export { CallHostErrorCode, NoStorageError } from './errors.js';
export type { CallIoHandler, CallIoRequest } from './adapters/executor-call-io.js';
export { dispatcherConfigFromWorker } from './adapters/executor-call-mapping.js';
export {
  createExecutorPorts,
  type ExecutorPorts,
  type ExecutorPortsOptions,
} from './adapters/executor-ports.js';
export { tsxExecutorCommand } from './adapters/executor-supervisor.js';
// The restart backoff of a supervised child, shared with `blockx up`'s Worker children (src/app/worker-child/).
export { RestartBackoff, type BackoffOptions } from './adapters/executor-backoff.js';
export {
  createInProcessCallRunner,
  type InProcessCallRunner,
  type InProcessCallRunnerOptions,
} from './adapters/in-process-link.js';
