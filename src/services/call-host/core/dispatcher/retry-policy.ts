// Retry classification and backoff (docs/task-lifecycle.md § Retry scopes, call attempts). An attempt that
// failed is retried when the failure is retryable and the call has attempts left; otherwise the call fails
// terminally.
//
// Retryable: an executor crash and a blown deadline always (the call itself may be fine: the executor
// died under it, or it ran on a busy executor); an IO error or a thrown user error only when marked
// retryable (the IO scope classifies backend errors; a function marks its own errors).
// Backoff before attempt n+1: min(maxBackoffMs, initialBackoffMs * 2^(n-1)), i.e. 50, 100, 200 ... 1000.
// No jitter by default, so virtual-time tests are exact; a driver may inject `random` for equal jitter
// (half fixed, half random) to spread retries of calls that failed together.

import type { CallRetryPolicy } from './config.js';
import type { CallFailure } from './types.js';

export function isRetryableFailure(failure: CallFailure): boolean {
  switch (failure.kind) {
    case 'executor_crash':
    case 'deadline':
      return true;
    case 'io':
    case 'user':
      return failure.retryable;
    default: {
      const _exhaustive: never = failure.kind;
      return _exhaustive;
    }
  }
}

/** Backoff (ms) to wait after failed attempt number `attempt` (1-based). */
export function retryBackoffMs(policy: CallRetryPolicy, attempt: number, random?: () => number): number {
  const exp = Math.min(attempt - 1, 30);
  const base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** exp);
  if (random === undefined) return base;
  const half = Math.floor(base / 2);
  return half + Math.floor(random() * (base - half + 1));
}
