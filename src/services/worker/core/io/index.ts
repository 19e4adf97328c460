// The Sans-IO part of the task IO scope: retry decisions, the read cache, error classification.
export {
  TaskIoError,
  TaskIoErrorCode,
  classifyIoError,
  type IoErrorClass,
  type TaskIoErrorFields,
} from './io-errors.js';
export { ReadCache, readCacheKey, type CacheLookup, type ReadCacheStats } from './read-cache.js';
export {
  baseBackoffMs,
  decideRetry,
  exhaustedMessage,
  jitteredBackoffMs,
  maxAttemptsOf,
  type IoRetryConfig,
  type RetryDecision,
  type RetryInput,
} from './retry-policy.js';
