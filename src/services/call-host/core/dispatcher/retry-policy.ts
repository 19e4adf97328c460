// Retry decision and backoff (docs/retries.md § Call level, docs/task-lifecycle.md § Retry scopes). After an
// attempt failed, `decideCallRetry` says whether the call runs again, from the failure, the attempt number
// and the retry rule of the call's function (`callRetryRule`: the deployment's `worker.callRetry` with the
// function's `functions.retry.<name>` fields over it). In order:
//   1. an IO error or a thrown error the error itself does not mark retryable never runs again
//      (`not_retryable`): it is the function's or the data's fault, another attempt fails the same way;
//   2. a kind the rule's `retryOn` does not list does not run again (`kind_not_retried`). By default
//      `deadline` is not listed: a call that spent its budget (an endless loop, a slow function) would
//      most likely spend the next one too, holding the task's slot for as long again;
//   3. a call that has had `maxAttempts` attempts does not run again (`attempts_spent`).
// Otherwise it runs again after the backoff.
//
// `isRetryableFailure` is the failure's nature alone (a crash or a budget spent may pass; a marked error
// may pass): the window policy reads it as a load signal whatever the rule decides.
// Backoff before attempt n+1: min(maxBackoffMs, initialBackoffMs * 2^(n-1)), i.e. 50, 100, 200 ... 1000.
// No jitter by default, so virtual-time tests are exact; a driver may inject `random` for equal jitter
// (half fixed, half random) to spread retries of calls that failed together.

import type { CallRetryPolicy, DispatcherConfig } from './config.js';
import type { CallFailure, CallFailureKind } from './types.js';

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

/** How calls of one function are retried. */
export interface CallRetryRule {
  readonly maxAttempts: number;
  readonly retryOn: readonly CallFailureKind[];
}

/** Why a failed call does not run again. */
export type CallNotRetried = 'not_retryable' | 'kind_not_retried' | 'attempts_spent';

export type CallRetryDecision =
  { readonly retry: true } | { readonly retry: false; readonly why: CallNotRetried };

/** The rule of function `fn`: its own `functions.retry` fields over the worker's `callRetry`. */
export function callRetryRule(config: DispatcherConfig, fn: string): CallRetryRule {
  const own = Object.hasOwn(config.functionRetry, fn) ? config.functionRetry[fn] : undefined;
  return {
    maxAttempts: own?.maxAttempts ?? config.callRetry.maxAttempts,
    retryOn: own?.retryOn ?? config.callRetry.retryOn,
  };
}

/** Whether a call whose attempt number `attempt` (1-based) failed with `failure` runs again. */
export function decideCallRetry(
  failure: CallFailure,
  attempt: number,
  rule: CallRetryRule,
): CallRetryDecision {
  if ((failure.kind === 'io' || failure.kind === 'user') && !failure.retryable) {
    return { retry: false, why: 'not_retryable' };
  }
  if (!rule.retryOn.includes(failure.kind)) return { retry: false, why: 'kind_not_retried' };
  if (attempt >= rule.maxAttempts) return { retry: false, why: 'attempts_spent' };
  return { retry: true };
}

/** Backoff (ms) to wait after failed attempt number `attempt` (1-based). */
export function retryBackoffMs(
  policy: Pick<CallRetryPolicy, 'initialBackoffMs' | 'maxBackoffMs'>,
  attempt: number,
  random?: () => number,
): number {
  const exp = Math.min(attempt - 1, 30);
  const base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** exp);
  if (random === undefined) return base;
  const half = Math.floor(base / 2);
  return half + Math.floor(random() * (base - half + 1));
}
