// The retry scopes of the task IO scope (docs/task-lifecycle.md § Retry scopes: the Builder, Calls and
// Result phases each have a bounded budget for retryable errors). One decision per
// failed attempt: retry after a delay, or give up.
//
// Rules, in order:
//   - CANCELLED is never retried (the scope closed; nobody is waiting for the answer).
//   - Only an error whose `retryable` is exactly true is retried; anything else fails at once.
//   - At most `maxAttempts` attempts in total (the first included); past that: exhausted.
//   - Delay before attempt n+1: base = min(maxBackoffMs, initialBackoffMs · 2^(n−1)), scaled by a jitter
//     factor in [0.5, 1] drawn from the injected `random` (so retries of operations that failed together
//     spread out), rounded up to whole ms and never above base. Pure: no clock, no timers.

import type { IoRetryConfig } from '../../../../kernel/config-types.js';
import { TaskIoErrorCode } from './io-errors.js';

export type { IoRetryConfig } from '../../../../kernel/config-types.js';

export interface RetryInput {
  /** The attempt that just failed, 1-based. */
  readonly attempt: number;
  /** The failed attempt's error was marked retryable (`retryable === true`). */
  readonly retryable: boolean;
  /** The error's code; CANCELLED is never retried. */
  readonly code?: string;
  readonly config: IoRetryConfig;
  /** Uniform in [0, 1); values outside are clamped. */
  readonly random: () => number;
}

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | { readonly retry: false; readonly reason: 'cancelled' | 'not_retryable' | 'exhausted' };

/** The un-jittered backoff after failed attempt `attempt` (1-based). */
export function baseBackoffMs(config: IoRetryConfig, attempt: number): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 30);
  return Math.max(0, Math.min(config.maxBackoffMs, config.initialBackoffMs * 2 ** exponent));
}

/** Backoff with jitter: in [base/2, base], whole ms. */
export function jitteredBackoffMs(config: IoRetryConfig, attempt: number, random: () => number): number {
  const base = baseBackoffMs(config, attempt);
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.min(base, Math.ceil(base * (0.5 + 0.5 * r)));
}

/** The attempt budget of a config (at least one attempt). */
export function maxAttemptsOf(config: IoRetryConfig): number {
  return Math.max(1, Math.floor(config.maxAttempts));
}

export function decideRetry(input: RetryInput): RetryDecision {
  if (input.code === TaskIoErrorCode.CANCELLED) return { retry: false, reason: 'cancelled' };
  if (!input.retryable) return { retry: false, reason: 'not_retryable' };
  if (input.attempt >= maxAttemptsOf(input.config)) return { retry: false, reason: 'exhausted' };
  return { retry: true, delayMs: jitteredBackoffMs(input.config, input.attempt, input.random) };
}

/** The message of an error re-raised after the scope gave up retrying it. */
export function exhaustedMessage(message: string, attempts: number, phase: string): string {
  return `${message} (gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} in the ${phase} retry scope)`;
}
