// The shapes that go in and out of the core's inputs, apart from commands (commands.ts).
//
// Calling convention (one style everywhere):
//  - Every input method takes `now` (ms, non-decreasing) last and returns `Step<R>`: a result `R` and
//    the commands to apply, in order.
//  - Admission inputs (`handleRequestTaskSlot`, `handleSubmitTask`) and `handleGetTaskResult` throw
//    `WorkerAdmissionError` for a refusal, and a refusal never changes state (so nothing is lost by
//    throwing: there are no commands to return).
//  - Event inputs (activation, phase results, timers, watches) never throw for stale or out-of-order
//    events: they return `Step<Applied>` with `applied: false` and the reason, and change nothing.

import type { WorkerCommand } from './commands.js';
import type { FailureCode } from './errors.js';
import type { ExecutionPhase, PluginResult, TaskResult, TaskState } from './types.js';

export interface Step<R> {
  readonly result: R;
  readonly commands: readonly WorkerCommand[];
}

/** Why an event input was ignored. None of these is an error of the core; all are expected races. */
export const IgnoredReason = {
  /** No active task with this id (never submitted, or only ALLOCATED). */
  TaskNotActive: 'TaskNotActive',
  /** The task already converged (its result is retained); the event is late. */
  TaskTerminal: 'TaskTerminal',
  /** The task is active but in a different phase than the event is about. */
  PhaseMismatch: 'PhaseMismatch',
  /** A timer event arrived before its deadline (or for a timer that is not armed). */
  NotDue: 'NotDue',
  /** The slot is not ALLOCATED (unknown, already FREE, or RUNNING). */
  SlotNotAllocated: 'SlotNotAllocated',
  /** A watch detach without a matching attach. */
  WatchNotAttached: 'WatchNotAttached',
} as const;
export type IgnoredReason = (typeof IgnoredReason)[keyof typeof IgnoredReason];

export type Applied =
  | { readonly applied: true }
  | { readonly applied: false; readonly reason: IgnoredReason; readonly message: string };

export const APPLIED: Applied = Object.freeze({ applied: true });

export function ignored(reason: IgnoredReason, message: string): Applied {
  return { applied: false, reason, message };
}

/** What each execution phase hands back on success. */
export interface PhaseSuccessPayload {
  /** The Builder's call list, opaque to the core. */
  readonly Builder: { readonly calls: readonly unknown[] };
  /** Return values of the successful root calls (subcall values excluded). */
  readonly Calls: { readonly outputs: readonly unknown[] };
  /** Results of the Writer Plugin (empty when the task has no result handler). */
  readonly Plugin: { readonly pluginResults: readonly PluginResult[] };
}

export interface PhaseFailure {
  readonly ok: false;
  readonly failureCode: FailureCode;
  /** The flag of the underlying error, for codes whose rule is `reported` (see errors.ts). */
  readonly retryable?: boolean;
  readonly message: string;
  readonly pluginResults?: readonly PluginResult[];
}

/** The outcome of one execution phase, as fed to `handleTaskPhaseFinished`. */
export type PhaseOutcome<P extends ExecutionPhase = ExecutionPhase> =
  ({ readonly ok: true } & PhaseSuccessPayload[P]) | PhaseFailure;

export interface RequestTaskSlotResult {
  readonly taskId: string;
  /** The slot bound to the task; undefined when the task id answers with a retained terminal result. */
  readonly slotId: string | undefined;
  /** ALLOCATED for a reservation, RUNNING once submitted, SUCCEEDED/FAILED for a retained result. */
  readonly state: TaskState;
  /** Lease deadline of an ALLOCATED slot. */
  readonly leaseDeadlineMs: number | undefined;
}

export interface SubmitTaskResult {
  readonly taskId: string;
  /** RUNNING, or the terminal state of a retained result. */
  readonly state: TaskState;
  /** Present when `state` is terminal. */
  readonly result: TaskResult | undefined;
  /** True only for the call that created the task (and emitted `PrepareTaskActivation`). */
  readonly accepted: boolean;
}

export interface TaskStatus {
  readonly taskId: string;
  readonly state: TaskState;
  /** Present when `state` is terminal. */
  readonly result: TaskResult | undefined;
}

/** A WatchTasks snapshot: found with its state, or not found (the stream reports `not_found`). */
export type TaskSnapshot =
  | ({ readonly found: true; readonly terminal: boolean } & TaskStatus)
  | { readonly found: false; readonly taskId: string };

/** The slot-derived part of the worker heartbeat (docs/architecture.md § etcd keys). */
export interface HeartbeatCounts {
  readonly taskSlots: number;
  /** ALLOCATED slots (reserved, or submitted and still Preparing). */
  readonly reservedSlots: number;
  /** RUNNING slots. */
  readonly runningTasks: number;
  /** Present when > 0: unsubmitted reservations a newcomer could reclaim (`reclaimableSlots` of the heartbeat). */
  readonly reclaimableSlots?: number;
}

/** What one `tickTimers` did, for metrics and logs. */
export interface TickSummary {
  readonly slotsReclaimed: number;
  readonly slotsLost: number;
  readonly tasksTimedOut: number;
  readonly watchesDisconnected: number;
  readonly resultsPurged: number;
}
