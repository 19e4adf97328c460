// Task-level retries (docs/retries.md): what a client does after one attempt of a task ended. Pure — no
// clock, no IO; the caller passes the attempt's outcome, the attempt number and a random source, and
// runs the decision (runWithRetries in ./run-with-retries.ts).
//
// The task lifecycle makes a task id an idempotency key: resubmitting an id whose result is retained
// returns that result, so a retry that should run the task again must use a NEW id (the next attempt's).
// The rules, per outcome of attempt k (1-based) with R retries allowed (k ≤ R + 1 attempts in all):
//
//   SUCCEEDED                                  → done
//   FAILED, retryable = true                   → retry as attempt k+1 after the backoff
//   FAILED, retryable = false                  → give up at once (a user error: retrying cannot help)
//   client error UNAVAILABLE / NOT_FOUND from
//     WatchTasks or GetTaskResult              → the Worker was lost after it accepted the task: place
//                                                it again as attempt k+1 after the backoff
//   client error UNAVAILABLE / DEADLINE before
//     the Worker accepted it                   → the cluster was unreachable: retry after the backoff
//   client error SLOT_UNCERTAIN                → a Worker may hold a slot for attempt k until its TTL:
//                                                wait one slot TTL, then attempt k+1
//   client error NO_CAPACITY / INVALID_SLOT    → busy: retry after the backoff
//   client error INVALID_ARGUMENT / INTERNAL   → give up (the task or the cluster is wrong, not busy)
//   CANCELLED                                  → give up (the caller stopped)
//   k = R + 1 and a retry would follow         → give up: retries exhausted
//
// Backoff: attempt k waits a uniform time in [base/2, base] with base = min(initial · 2^(k−1), max).
import { ClientErrorCode } from './errors.js';

export interface TaskRetryPolicy {
  /** Attempts after the first (0 = never retry). */
  readonly retries: number;
  /** Base of the first backoff wait. */
  readonly initialBackoffMs: number;
  /** The base stops doubling here. */
  readonly maxBackoffMs: number;
  /** The Coordinator's slot TTL: the wait after SLOT_UNCERTAIN. */
  readonly slotTtlMs: number;
}

export const DEFAULT_TASK_RETRY_BACKOFF = { initialBackoffMs: 500, maxBackoffMs: 10_000 } as const;

/** How one attempt of a task ended. */
export type AttemptOutcome =
  | {
      readonly kind: 'result';
      readonly success: boolean;
      readonly retryable: boolean;
    }
  | {
      readonly kind: 'error';
      readonly code: ClientErrorCode;
      /** The RPC that failed last (WatchTasks, GetTaskResult: after the Worker accepted the task). */
      readonly rpc: string | undefined;
    };

export type RetryReason =
  'retryable_failure' | 'worker_lost' | 'unreachable' | 'slot_uncertain' | 'no_capacity';

export type GiveUpReason = 'non_retryable' | 'retries_exhausted' | 'cancelled';

export type TaskRetryDecision =
  | { readonly type: 'done' }
  | { readonly type: 'retry'; readonly reason: RetryReason; readonly delayMs: number }
  | { readonly type: 'give_up'; readonly reason: GiveUpReason };

/** RPCs that run after the Worker accepted the task: their failure means the Worker was lost. */
const FOLLOW_RPCS: ReadonlySet<string> = new Set(['WatchTasks', 'GetTaskResult']);

/** Why the outcome may be retried, or why not (undefined = success). */
export function retryReasonOf(
  outcome: AttemptOutcome,
): RetryReason | Exclude<GiveUpReason, 'retries_exhausted'> | undefined {
  if (outcome.kind === 'result') {
    if (outcome.success) return undefined;
    return outcome.retryable ? 'retryable_failure' : 'non_retryable';
  }
  const followed = outcome.rpc !== undefined && FOLLOW_RPCS.has(outcome.rpc);
  switch (outcome.code) {
    case ClientErrorCode.UNAVAILABLE:
      return followed ? 'worker_lost' : 'unreachable';
    case ClientErrorCode.NOT_FOUND:
      // The Worker forgot a task it had accepted (it restarted); anywhere else NOT_FOUND is final.
      return followed ? 'worker_lost' : 'non_retryable';
    case ClientErrorCode.DEADLINE:
      return followed ? 'worker_lost' : 'unreachable';
    case ClientErrorCode.SLOT_UNCERTAIN:
      return 'slot_uncertain';
    case ClientErrorCode.NO_CAPACITY:
    case ClientErrorCode.INVALID_SLOT:
      return 'no_capacity';
    case ClientErrorCode.CANCELLED:
      return 'cancelled';
    case ClientErrorCode.INVALID_ARGUMENT:
    case ClientErrorCode.INTERNAL:
      return 'non_retryable';
    default: {
      const _exhaustive: never = outcome.code;
      throw new Error(`unknown client error code ${String(_exhaustive)}`);
    }
  }
}

/**
 * What to do after attempt `attempt` (1-based) ended with `outcome`. `random` returns a number in [0, 1).
 */
export function decideTaskRetry(
  outcome: AttemptOutcome,
  attempt: number,
  policy: TaskRetryPolicy,
  random: () => number,
): TaskRetryDecision {
  const reason = retryReasonOf(outcome);
  if (reason === undefined) return { type: 'done' };
  if (reason === 'non_retryable' || reason === 'cancelled') return { type: 'give_up', reason };
  if (attempt > policy.retries) return { type: 'give_up', reason: 'retries_exhausted' };
  if (reason === 'slot_uncertain') return { type: 'retry', reason, delayMs: policy.slotTtlMs };
  return { type: 'retry', reason, delayMs: backoffMs(attempt, policy, random) };
}

/** The jittered wait before attempt `attempt + 1`. */
export function backoffMs(attempt: number, policy: TaskRetryPolicy, random: () => number): number {
  const doublings = Math.min(Math.max(0, attempt - 1), 30);
  const base = Math.min(policy.initialBackoffMs * 2 ** doublings, policy.maxBackoffMs);
  return Math.round(base / 2 + (random() * base) / 2);
}

/** Throws a RangeError naming the field when the policy is unusable. */
export function checkTaskRetryPolicy(policy: TaskRetryPolicy): TaskRetryPolicy {
  const whole = (name: string, v: number, max: number): void => {
    if (!Number.isInteger(v) || v < 0 || v > max) {
      throw new RangeError(`${name} must be an integer in 0..${max}, got ${v}`);
    }
  };
  whole('retries', policy.retries, 1_000);
  whole('initialBackoffMs', policy.initialBackoffMs, 3_600_000);
  whole('maxBackoffMs', policy.maxBackoffMs, 3_600_000);
  whole('slotTtlMs', policy.slotTtlMs, 3_600_000);
  if (policy.maxBackoffMs < policy.initialBackoffMs) {
    throw new RangeError(
      `maxBackoffMs (${policy.maxBackoffMs}) must not be below initialBackoffMs (${policy.initialBackoffMs})`,
    );
  }
  return policy;
}
