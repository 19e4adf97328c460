// One task run to a final outcome with task-level retries (docs/retries.md): each attempt is a full
// reserve → submit → watch under its own task id (`taskIdOf(attempt)`), and decideTaskRetry
// (./task-retry.ts) says after each whether to try again. The guarantee this gives: at-least-once
// execution (an attempt whose Worker was lost may have run, or still be running, when the next one
// starts); exactly-once table state comes from the writers, which replace a block's rows idempotently.
import { BlockxClientError, ClientErrorCode, toClientError } from './errors.js';
import {
  decideTaskRetry,
  type AttemptOutcome,
  type GiveUpReason,
  type TaskRetryDecision,
  type TaskRetryPolicy,
} from './task-retry.js';
import type { ClientTaskInput, TaskRunResult } from './types.js';

export type RunnableTask = ClientTaskInput & { readonly taskId: string };

/** What runs one attempt: BlockxClient#run or a fake. */
export interface TaskRunner {
  run(task: RunnableTask, opts?: { signal?: AbortSignal }): Promise<TaskRunResult>;
  /**
   * The result of `taskId` from the Worker that holds it, followed to its end if it still runs; undefined
   * when no Worker knows it (or it cannot be followed). Optional: a resumed backfill asks it before
   * placing a unit that may have run already (docs/backfill.md § Resuming).
   */
  resume?(taskId: string, opts?: { signal?: AbortSignal }): Promise<TaskRunResult | undefined>;
}

export interface AttemptReport {
  readonly attempt: number;
  readonly taskId: string;
  /** The attempt's result, or the error that stopped it. */
  readonly outcome: TaskRunResult | BlockxClientError;
  readonly decision: TaskRetryDecision;
}

export type RetriedOutcome =
  | {
      readonly ok: true;
      readonly result: TaskRunResult;
      readonly attempts: number;
    }
  | {
      readonly ok: false;
      /** The last attempt's FAILED result, when it produced one. */
      readonly result?: TaskRunResult;
      /** The last attempt's client error, when it produced no result. */
      readonly error?: BlockxClientError;
      readonly attempts: number;
      readonly reason: GiveUpReason;
    };

export interface RunWithRetriesOptions {
  readonly policy: TaskRetryPolicy;
  /** The task id of attempt `attempt` (1-based); must differ per attempt. */
  readonly taskIdOf: (attempt: number) => string;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  /** Cancels the attempt in flight: its outcome becomes CANCELLED unless it already succeeded. */
  readonly signal?: AbortSignal;
  /** Lets the attempt in flight finish, but gives up instead of starting another (a graceful stop). */
  readonly stopRetrying?: AbortSignal;
  readonly onAttempt?: (report: AttemptReport) => void;
}

/** The outcome of an attempt in the retry rules' terms. */
export function attemptOutcomeOf(outcome: TaskRunResult | BlockxClientError): AttemptOutcome {
  if (outcome instanceof BlockxClientError) {
    return { kind: 'error', code: outcome.code, rpc: outcome.rpc };
  }
  return { kind: 'result', success: outcome.success, retryable: outcome.retryable };
}

export async function runWithRetries(
  runner: TaskRunner,
  task: ClientTaskInput,
  opts: RunWithRetriesOptions,
): Promise<RetriedOutcome> {
  for (let attempt = 1; ; attempt++) {
    const taskId = opts.taskIdOf(attempt);
    let outcome: TaskRunResult | BlockxClientError;
    try {
      outcome = await runner.run({ ...task, taskId }, opts.signal ? { signal: opts.signal } : {});
    } catch (err) {
      outcome = toClientError(err, { taskId });
    }
    const succeeded = !(outcome instanceof BlockxClientError) && outcome.success;
    if (opts.signal?.aborted && !succeeded) {
      outcome = new BlockxClientError(ClientErrorCode.CANCELLED, `task ${taskId}: cancelled`, { taskId });
    }
    let decision = decideTaskRetry(attemptOutcomeOf(outcome), attempt, opts.policy, opts.random);
    if (decision.type === 'retry' && opts.stopRetrying?.aborted) {
      decision = { type: 'give_up', reason: 'cancelled' };
    }
    opts.onAttempt?.({ attempt, taskId, outcome, decision });
    switch (decision.type) {
      case 'done':
        return { ok: true, result: outcome as TaskRunResult, attempts: attempt };
      case 'give_up':
        return outcome instanceof BlockxClientError
          ? { ok: false, error: outcome, attempts: attempt, reason: decision.reason }
          : { ok: false, result: outcome, attempts: attempt, reason: decision.reason };
      case 'retry':
        if (decision.delayMs > 0) {
          // The wait ends early on either stop, and then the next attempt does not start.
          const { signal, stopRetrying } = opts;
          const wake =
            signal && stopRetrying ? AbortSignal.any([signal, stopRetrying]) : (signal ?? stopRetrying);
          await opts.sleep(decision.delayMs, wake);
        }
        if (opts.signal?.aborted) {
          const cancelled = new BlockxClientError(ClientErrorCode.CANCELLED, `task ${taskId}: cancelled`, {
            taskId,
          });
          return { ok: false, error: cancelled, attempts: attempt, reason: 'cancelled' };
        }
        if (opts.stopRetrying?.aborted) {
          return outcome instanceof BlockxClientError
            ? { ok: false, error: outcome, attempts: attempt, reason: 'cancelled' }
            : { ok: false, result: outcome, attempts: attempt, reason: 'cancelled' };
        }
        break;
      default: {
        const _exhaustive: never = decision;
        throw new Error(`unknown decision ${JSON.stringify(_exhaustive)}`);
      }
    }
  }
}

/** Whether a task failed with `code`, as the task's failure or one of its writers' (e.g. FENCED). */
export function failedWith(result: TaskRunResult | undefined, code: string): boolean {
  if (result === undefined) return false;
  return result.failureCode === code || result.pluginResults.some((r) => r.failureCode === code);
}
