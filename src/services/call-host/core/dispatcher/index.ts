// Public surface of the dispatcher core (Sans-IO). See README.md.
export { DispatcherCore } from './dispatcher-core.js';
export type { DispatcherCoreOptions } from './dispatcher-core.js';
export {
  DEFAULT_CALL_RETRY_POLICY,
  DEFAULT_DISPATCHER_CONFIG,
  resolveDispatcherConfig,
  validateDispatcherConfig,
} from './config.js';
export type { CallRetryPolicy, DispatcherConfig } from './config.js';
export { DispatcherConfigError, DispatcherError, DispatcherErrorCode } from './errors.js';
export type { DispatcherConfigIssue } from './errors.js';
export type {
  CancelCall,
  ConvergeTaskCalls,
  DispatcherCommand,
  ExecuteAttempt,
  ExecuteCalls,
  ResumeCall,
} from './commands.js';
export type { DispatcherInput } from './inputs.js';
export type { CallAtExecutor, DispatcherStats, TaskDispatchStats } from './stats.js';
export type {
  CallFailure,
  CallFailureKind,
  CallPhaseCounters,
  CallPhaseFailureCode,
  CallPhaseOptions,
  CallPage,
  CallSpec,
  CancelReason,
  CompletedAttempt,
  FailedCall,
  RetrySummary,
  SubcallError,
  TaskCancelReason,
  WaitId,
  WaitRequest,
} from './types.js';
export { callRetryRule, decideCallRetry, isRetryableFailure, retryBackoffMs } from './retry-policy.js';
export type { CallNotRetried, CallRetryDecision, CallRetryRule } from './retry-policy.js';
