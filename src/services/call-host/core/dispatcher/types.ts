// Domain values of the dispatcher: the calls a builder hands over, how an attempt can fail, what a
// running call can wait for, and the options of a Calls phase. Plain data, shared by inputs and commands.

import type { CallArgs } from '../../../../contracts/call-args.js';

/** One call as produced by a Call Builder: `function(ctx, ...args)`, optionally bound to a block. */
export interface CallSpec {
  readonly function: string;
  /** The values, or their JSON text (src/contracts/call-args.ts): carried, never looked into. */
  readonly args: CallArgs;
  /** The block the builder bound the call to; passed through to `ctx.block`. */
  readonly block?: unknown;
  /**
   * Set by the dispatcher only (pages.ts): this root is a page of consecutive calls of one function,
   * run as one attempt (README.md § Pages). A builder never sets it.
   */
  readonly page?: CallPage;
}

/**
 * A page (README.md § Pages): consecutive root calls of one function with encoded arguments, sent as
 * one attempt. Each row keeps its own arguments, block and call id, so a page that fails in any way is
 * split back into its calls, each run on its own with its own attempts and budget.
 */
export interface CallPage {
  /** The position of the page's first call in the task's call list as the builder handed it over. */
  readonly first: number;
  /** Each call's arguments (encoded: `args` of the page's spec is unused). */
  readonly args: readonly CallArgs[];
  /** Each call's block (undefined: none). */
  readonly blocks: readonly unknown[];
}

/**
 * Why an attempt failed, as the executor link reports it.
 * `user`: the function threw. `executor_crash`: the executor died or stopped heartbeating.
 * `deadline`: the attempt used up its budget (reported by the executor, or decided by `tick`).
 * `io`: an IO request of the call failed and the function did not handle it.
 */
export type CallFailureKind = 'user' | 'executor_crash' | 'deadline' | 'io';

export interface CallFailure {
  readonly kind: CallFailureKind;
  /** The error says a new attempt may succeed. `executor_crash` and `deadline` are retried regardless. */
  readonly retryable: boolean;
  readonly message: string;
  /** The user function's own stack frames, one per line (src/executor/call-outcome.ts userStackFrames). */
  readonly stack?: string;
}

/**
 * Why calls of a task ran a second attempt (ConvergeTaskCalls.retried): how many failed attempts were
 * retried, by failure kind, and the first of them. The Worker logs it once per task, so a retry is
 * never silent (an executor lost, a call's budget spent while the Worker was paused) and never noisy.
 */
export interface RetrySummary {
  /** Failed attempts that were retried. */
  readonly attempts: number;
  readonly byKind: Readonly<Partial<Record<CallFailureKind, number>>>;
  readonly first: {
    readonly callId: string;
    readonly function: string;
    readonly attempt: number;
    readonly failure: CallFailure;
  };
}

/** One success of a bulk report (`DispatcherCore.callsCompleted`): the executor's CallsCompleted entry. */
export interface CompletedAttempt {
  readonly callId: string;
  readonly attempt: number;
  /** The call's return value; absent reads as null (as a CallCompleted without `value`). */
  readonly value?: unknown;
}

/** Opaque id a call gives one of its waits, echoed in the `ResumeCall` that answers it. */
export type WaitId = string | number;

/**
 * What a running call waits for. A `subcall` is scheduled by the dispatcher as a child call and answered
 * with `ResumeCall`; an `io` wait is answered by the IO scope, the dispatcher only records it.
 */
export type WaitRequest =
  | {
      readonly kind: 'subcall';
      readonly function: string;
      readonly args: readonly unknown[];
      readonly waitId?: WaitId;
    }
  | { readonly kind: 'io'; readonly waitId?: WaitId; readonly request?: unknown };

/** Options of one task's Calls phase. */
export interface CallPhaseOptions {
  /** Absolute task deadline (ms, same clock as `now`); the phase converges TIMED_OUT when it passes. */
  readonly deadlineMs: number;
  /** `CallFailurePolicy`: fastFail is the only policy (docs/task-lifecycle.md), so the only accepted value. */
  readonly fastFail?: true;
  /** Calls arrive over time through `appendCalls`; the phase cannot end before `finishAppending`. */
  readonly streaming?: boolean;
}

/** Why the owner of the task (WorkerCore) ends a Calls phase early (its `CancelTaskCalls.reason`). */
export type TaskCancelReason = 'TIMED_OUT' | 'CANCELLED' | 'WATCH_DISCONNECTED';

/** Failure codes a Calls phase can converge with (a subset of the Worker's `FailureCode`). */
export type CallPhaseFailureCode =
  'CALL_FAILED' | 'OUTPUT_BYTES_EXCEEDED' | 'CALL_BUDGET_EXCEEDED' | TaskCancelReason;

/** Why an attempt at the executor is cancelled. */
export type CancelReason =
  | 'deadline'
  | 'fast_fail'
  | 'output_bytes_exceeded'
  | 'call_budget_exceeded'
  | 'task_timed_out'
  | 'task_cancelled'
  | 'watch_disconnected'
  | 'parent_ended';

/** The error a parent receives when its subcall failed terminally (or could not be scheduled). */
export interface SubcallError {
  readonly kind: CallFailureKind;
  readonly retryable: boolean;
  readonly message: string;
  readonly childCallId: string;
  readonly function: string;
  /** Attempts the child used (0 when it was refused before running, e.g. depth limit). */
  readonly attempts: number;
}

/** The root call that failed a task under fastFail. */
export interface FailedCall {
  readonly callId: string;
  readonly index: number;
  readonly function: string;
  readonly attempts: number;
  readonly failure: CallFailure;
}

/** Counters of one task's Calls phase, carried by its `ConvergeTaskCalls`. */
export interface CallPhaseCounters {
  readonly rootCalls: number;
  readonly rootsSucceeded: number;
  readonly attempts: number;
  readonly retries: number;
  readonly subcalls: number;
  readonly outputBytes: number;
}
