// Stable codes of the Worker core. Two families, kept apart on purpose (docs/task-lifecycle.md
// § Admission errors and terminal states):
//
//  - `WorkerErrorCode`: admission errors. Everything that fails before a submitted task exists is
//    thrown as a `WorkerAdmissionError` and becomes a gRPC status; it never enters a `TaskResult`.
//  - `FailureCode`: execution terminal states. Once `handleSubmitTask` created the task, every failure
//    converges into `TaskResult.executeResult.failureCode` with a `retryable` flag decided here.
//
// Each key equals its value; test/unit/services/worker/core/errors.test.ts pins that.

import { BlockxError, KernelErrorCode, SharedErrorCode } from '../../../kernel/errors.js';
import { idPreview } from '../../../kernel/input-bounds.js';

/** Admission error codes; the gRPC adapter maps them (NoSlot → RESOURCE_EXHAUSTED, ...). */
export const WorkerErrorCode = {
  InvalidArgument: 'InvalidArgument',
  NoSlot: 'NoSlot',
  InvalidSlot: 'InvalidSlot',
  Unavailable: 'Unavailable',
  NotFound: 'NotFound',
  /** The task id is held (reserved, running or retained) by another client (docs/security.md § Roles). */
  TaskIdTaken: 'TaskIdTaken',
} as const;
export type WorkerErrorCode = (typeof WorkerErrorCode)[keyof typeof WorkerErrorCode];

/** Why a slot id was refused by `SubmitTask`. */
export type InvalidSlotReason = 'SlotUnknown' | 'SlotNotAllocated' | 'SlotBoundToOtherTask';
/** Why the worker does not admit work right now. */
export type UnavailableReason = 'NotReady' | 'Draining';

/** Structured detail of an admission error, one shape per code. */
export type AdmissionErrorDetail =
  | { readonly code: typeof WorkerErrorCode.InvalidArgument; readonly field: string; readonly value: unknown }
  | { readonly code: typeof WorkerErrorCode.NoSlot; readonly taskSlots: number; readonly slotsInUse: number }
  // A client at its reservation limit (docs/security.md § Reservations per client).
  | {
      readonly code: typeof WorkerErrorCode.NoSlot;
      readonly client: string;
      readonly reserved: number;
      readonly limit: number;
    }
  // A RunTasks submission beyond the credits the stream granted (docs/batched-protocol.md).
  | { readonly code: typeof WorkerErrorCode.NoSlot; readonly creditWindow: number }
  | {
      readonly code: typeof WorkerErrorCode.InvalidSlot;
      readonly slotId: string;
      readonly reason: InvalidSlotReason;
    }
  | { readonly code: typeof WorkerErrorCode.Unavailable; readonly reason: UnavailableReason }
  | { readonly code: typeof WorkerErrorCode.NotFound }
  | { readonly code: typeof WorkerErrorCode.TaskIdTaken };

/** An admission was refused. Thrown by the core's admission inputs; the core state is left unchanged. */
export class WorkerAdmissionError extends BlockxError {
  declare readonly code: WorkerErrorCode;
  /** The task the request was about (may be empty when the request had none). */
  readonly taskId: string;
  readonly detail: AdmissionErrorDetail;

  constructor(taskId: string, detail: AdmissionErrorDetail, message: string) {
    super(detail.code, `${detail.code}: ${message}`);
    this.taskId = taskId;
    this.detail = detail;
  }

  static invalidArgument(taskId: string, field: string, value: unknown, why: string): WorkerAdmissionError {
    return new WorkerAdmissionError(
      taskId,
      { code: WorkerErrorCode.InvalidArgument, field, value },
      `${field} ${why}`,
    );
  }

  static noSlot(taskId: string, taskSlots: number, slotsInUse: number): WorkerAdmissionError {
    return new WorkerAdmissionError(
      taskId,
      { code: WorkerErrorCode.NoSlot, taskSlots, slotsInUse },
      `no free task slot (${slotsInUse}/${taskSlots} in use)`,
    );
  }

  /**
   * `client` already holds `limit` unsubmitted reservations (`maxReservedSlotsPerClient`). NoSlot, so a
   * Coordinator tries the next Worker, as for a full one.
   */
  static clientQuota(taskId: string, client: string, reserved: number, limit: number): WorkerAdmissionError {
    return new WorkerAdmissionError(
      taskId,
      { code: WorkerErrorCode.NoSlot, client, reserved, limit },
      `client ${idPreview(client)} holds ${reserved} unsubmitted reservations (maxReservedSlotsPerClient ${limit})`,
    );
  }

  /** A RunTasks submission arrived while the client held no credit of its stream's `creditWindow`. */
  static noCredit(taskId: string, creditWindow: number): WorkerAdmissionError {
    return new WorkerAdmissionError(
      taskId,
      { code: WorkerErrorCode.NoSlot, creditWindow },
      `no credit left on this RunTasks stream (credit window ${creditWindow}): wait for credits to come back`,
    );
  }

  static invalidSlot(taskId: string, slotId: string, reason: InvalidSlotReason): WorkerAdmissionError {
    const why: Record<InvalidSlotReason, string> = {
      SlotUnknown: 'does not exist',
      SlotNotAllocated: 'is not ALLOCATED',
      SlotBoundToOtherTask: 'is bound to a different task',
    };
    return new WorkerAdmissionError(
      taskId,
      { code: WorkerErrorCode.InvalidSlot, slotId, reason },
      `slot ${slotId} ${why[reason]}`,
    );
  }

  static unavailable(taskId: string, reason: UnavailableReason): WorkerAdmissionError {
    const why =
      reason === 'NotReady'
        ? 'worker is not ready (its executor is starting or restarting)'
        : 'worker is draining';
    return new WorkerAdmissionError(taskId, { code: WorkerErrorCode.Unavailable, reason }, why);
  }

  /** `taskId` is held by another client: ids are per client, and nobody gets another's task. */
  static taskIdTaken(taskId: string): WorkerAdmissionError {
    return new WorkerAdmissionError(
      taskId,
      { code: WorkerErrorCode.TaskIdTaken },
      `task id ${idPreview(taskId)} is in use by another client on this worker: choose another id (task ids belong to their submitter, docs/security.md § Roles)`,
    );
  }

  static notFound(taskId: string): WorkerAdmissionError {
    return new WorkerAdmissionError(taskId, { code: WorkerErrorCode.NotFound }, `task ${taskId} not found`);
  }
}

/** Failure codes of a terminal FAILED task (`TaskResult.executeResult.failureCode`). */
export const FailureCode = {
  ACTIVATION_FAILED: 'ACTIVATION_FAILED',
  IO_SCOPE_FAILED: 'IO_SCOPE_FAILED',
  SLOT_LOST: 'SLOT_LOST',
  BUILDER_NOT_FOUND: 'BUILDER_NOT_FOUND',
  BUILDER_FAILED: 'BUILDER_FAILED',
  CALL_FAILED: 'CALL_FAILED',
  OUTPUT_BYTES_EXCEEDED: 'OUTPUT_BYTES_EXCEEDED',
  CALL_BUDGET_EXCEEDED: 'CALL_BUDGET_EXCEEDED',
  PLUGIN_NOT_FOUND: 'PLUGIN_NOT_FOUND',
  PLUGIN_FAILED: 'PLUGIN_FAILED',
  CANCELLED: SharedErrorCode.CANCELLED,
  TIMED_OUT: 'TIMED_OUT',
  WATCH_DISCONNECTED: 'WATCH_DISCONNECTED',
} as const;
export type FailureCode = (typeof FailureCode)[keyof typeof FailureCode];

export function isFailureCode(value: unknown): value is FailureCode {
  return typeof value === 'string' && Object.hasOwn(FailureCode, value);
}

/**
 * How `retryable` is decided for a failure code:
 * `fixed` — the code alone decides; a flag reported by the adapter is ignored.
 * `reported` — the adapter reports it from the underlying error; `default` applies when it cannot tell.
 */
export type RetryableRule =
  | { readonly kind: 'fixed'; readonly retryable: boolean }
  | { readonly kind: 'reported'; readonly default: boolean };

/**
 * The retryable rule per failure code. `retryable=true` tells the client that resubmitting (after the
 * retained result expires, or under a new task id) may succeed; the worker itself never retries a task.
 */
export const FAILURE_RETRYABLE_RULES: Readonly<Record<FailureCode, RetryableRule>> = Object.freeze({
  // Activation is infrastructure (code epoch resolution, IO scope creation): transient by nature.
  ACTIVATION_FAILED: { kind: 'fixed', retryable: true },
  IO_SCOPE_FAILED: { kind: 'fixed', retryable: true },
  // The slot lease ran out while the task was still Preparing: nothing ran, so it is safe to retry.
  SLOT_LOST: { kind: 'fixed', retryable: true },
  // An unknown builder/plugin type will be just as unknown next time.
  BUILDER_NOT_FOUND: { kind: 'fixed', retryable: false },
  // Taken from the IO error that failed the Builder; unclassified errors count as transient, the same
  // rule as PluginError (docs/task-lifecycle.md § Failure codes).
  BUILDER_FAILED: { kind: 'reported', default: true },
  // fastFail: a root call failed terminally after its bounded attempt retries.
  CALL_FAILED: { kind: 'fixed', retryable: false },
  // The same input produces the same outputs, so the limit would be exceeded again.
  OUTPUT_BYTES_EXCEEDED: { kind: 'fixed', retryable: false },
  // The task's calls asked for more attempts or pending subcalls than worker.taskMaxCallAttempts /
  // taskMaxPendingSubcalls allow; the same input does the same again.
  CALL_BUDGET_EXCEEDED: { kind: 'fixed', retryable: false },
  PLUGIN_NOT_FOUND: { kind: 'fixed', retryable: false },
  // PluginError.retryable; unclassified errors default to retryable (docs/task-lifecycle.md).
  PLUGIN_FAILED: { kind: 'reported', default: true },
  // A phase was cancelled while waiting for admission (e.g. the task already converged elsewhere).
  CANCELLED: { kind: 'fixed', retryable: true },
  TIMED_OUT: { kind: 'fixed', retryable: true },
  // The client gave up watching; it does not want the task any more.
  WATCH_DISCONNECTED: { kind: 'fixed', retryable: false },
});

/** The `retryable` flag a task failing with `code` gets, given the flag the adapter reported (if any). */
export function resolveRetryable(code: FailureCode, reported?: boolean): boolean {
  const rule = FAILURE_RETRYABLE_RULES[code] as RetryableRule | undefined;
  // Only reachable if an untyped caller passes an unknown code; do not crash the core over it.
  if (rule === undefined) return reported ?? false;
  return rule.kind === 'fixed' ? rule.retryable : (reported ?? rule.default);
}

/** One problem of a `WorkerCoreConfig`. */
export interface WorkerConfigIssue {
  readonly path: string;
  readonly message: string;
}

/** A `WorkerCoreConfig` was invalid; carries every problem, not just the first. */
export class WorkerCoreConfigError extends BlockxError {
  readonly issues: readonly WorkerConfigIssue[];
  constructor(issues: readonly WorkerConfigIssue[]) {
    super(
      KernelErrorCode.CONFIG_INVALID,
      `invalid worker core config: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
    );
    this.issues = issues;
  }
}

/** An input a RunTasks stream core cannot take in its state (an adapter bug, never a client's fault). */
export class RunStreamInputError extends BlockxError {
  static readonly CODE = 'RUN_STREAM_ILLEGAL_INPUT';
  constructor(message: string) {
    super(RunStreamInputError.CODE, message);
  }
}
