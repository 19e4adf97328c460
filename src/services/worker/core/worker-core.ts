// WorkerCore: the Sans-IO state machine of one Worker (see README.md for the theory of operation).
//
// This class is the facade a driver talks to. It owns the state and delegates each input to its
// handler module. It never awaits, never reads a clock, never calls back: a driver feeds inputs with
// `now`, applies the returned commands in order, and feeds the results of those commands back as new
// inputs. The calling convention is in step.ts: inputs return `Step<R>`; admission refusals throw
// `WorkerAdmissionError` and change nothing; stale events return `applied: false` and change nothing.
//
// A driver must serialise calls (the core is not re-entrant) and pass a non-decreasing `now`.

import { requestTaskSlot, requireTtlMs, submitTask } from './admission.js';
import { resolveWorkerCoreConfig, effectiveTaskDeadlineMs, type WorkerCoreConfig } from './config.js';
import type { WorkerCommand } from './commands.js';
import { createCoreState, isServing, setServingFlags, type CoreState } from './core-state.js';
import { checkInvariants } from './invariants.js';
import { getTaskResult, heartbeatCounts, taskSnapshot } from './queries.js';
import {
  APPLIED,
  type Applied,
  type HeartbeatCounts,
  type PhaseOutcome,
  type RequestTaskSlotResult,
  type Step,
  type SubmitTaskResult,
  type TaskSnapshot,
  type TaskStatus,
  type TickSummary,
} from './step.js';
import {
  activationFailed,
  activationPrepared,
  phaseFinished,
  type ActivationFailureCode,
} from './task-events.js';
import { nextDeadline, slotLeaseExpired, taskTimedOut, tickTimers } from './timer-events.js';
import type { CodeEpoch, ExecutionPhase, TaskInput } from './types.js';
import { watchAttached, watchDetached, watchDisconnected } from './watch-events.js';

export interface WorkerCoreOptions {
  /** Overrides of `DEFAULT_WORKER_CORE_CONFIG`; validated (throws `WorkerCoreConfigError`). */
  readonly config?: Partial<WorkerCoreConfig>;
  /** Returns a fresh, unique, non-empty slot id per allocation (e.g. `() => randomUUID()`). */
  readonly newSlotId: () => string;
}

export class WorkerCore {
  readonly config: WorkerCoreConfig;
  private readonly s: CoreState;

  constructor(options: WorkerCoreOptions) {
    this.config = resolveWorkerCoreConfig(options.config);
    this.s = createCoreState(this.config, options.newSlotId);
  }

  // ---- Readiness and draining --------------------------------------------------------------------

  /** The executor is up (its first heartbeat, or any later one: idempotent). Opens admissions. */
  handleExecutorReady(_now: number): Step<Applied> {
    return this.flags({ ready: true });
  }

  /** The executor went away; admissions answer Unavailable until it is ready again. Tasks in flight
   *  are not touched here: their calls fail or time out through the normal paths. */
  handleExecutorLost(_now: number): Step<Applied> {
    return this.flags({ ready: false });
  }

  /** Stop admitting (Unavailable) for good; running tasks go on. Emits `Drained` once no slot is in use. */
  handleStartDraining(_now: number): Step<Applied> {
    return this.flags({ draining: true });
  }

  /** Admissions are open: ready and not draining (grpc.health.v1 SERVING). */
  get serving(): boolean {
    return isServing(this.s);
  }
  get ready(): boolean {
    return this.s.ready;
  }
  get draining(): boolean {
    return this.s.draining;
  }
  /** Draining and no slot in use. */
  get drained(): boolean {
    return this.s.draining && this.s.slots.inUse === 0;
  }

  // ---- Admission (throw WorkerAdmissionError) -----------------------------------------------------

  /** RequestTaskSlot: reserve a slot for `taskId` for `ttlMs` (> 0). The same id while ALLOCATED or
   *  RUNNING gets the same slot (lease renewed); an id with a retained result gets its terminal state
   *  and no slot. Errors: InvalidArgument, Unavailable, NoSlot. */
  handleRequestTaskSlot(
    taskId: string,
    ttlMs: number,
    now: number,
    client?: string,
  ): Step<RequestTaskSlotResult> {
    return requestTaskSlot(this.s, taskId, ttlMs, now, client);
  }

  /** The RequestTaskSlot check of `ttlMs` alone (RequestTaskSlots checks its one TTL once per call);
   *  throws InvalidArgument. */
  checkSlotTtl(ttlMs: number): void {
    requireTtlMs(this.config, '', ttlMs);
  }

  /** SubmitTask: accept the task on its ALLOCATED slot (`slotId`), or on a slot requested inline with
   *  `defaultTtlMs` when `slotId` is undefined or empty; emits `PrepareTaskActivation` and answers
   *  RUNNING. A running task answers RUNNING, a retained one its terminal state, neither runs again.
   *  Errors: InvalidArgument, Unavailable, NoSlot (inline only), InvalidSlot. */
  handleSubmitTask(
    input: TaskInput,
    slotId: string | undefined,
    now: number,
    client?: string,
  ): Step<SubmitTaskResult> {
    return submitTask(this.s, input, slotId, now, client);
  }

  /** The effective timeout (ms) of `taskTimeoutMs` (0 → `taskDeadlineMs`); throws InvalidArgument. */
  effectiveTaskDeadlineMs(taskTimeoutMs: number, taskId = ''): number {
    return effectiveTaskDeadlineMs(this.config, taskTimeoutMs, taskId);
  }

  // ---- Task progress (never throw for stale events) -----------------------------------------------

  /** Activation pinned `codeEpoch`: slot ALLOCATED → RUNNING, phase Builder, emits StartBuilderPhase. */
  handleTaskActivationPrepared(taskId: string, codeEpoch: CodeEpoch, now: number): Step<Applied> {
    return activationPrepared(this.s, taskId, codeEpoch, now);
  }

  /** Activation failed (Preparing, or Builder before the builder ran): converges FAILED with `code`. */
  handleTaskActivationFailed(
    taskId: string,
    code: ActivationFailureCode,
    message: string,
    now: number,
  ): Step<Applied> {
    return activationFailed(this.s, taskId, code, message, now);
  }

  /** An execution phase finished. Builder ok → StartCallPhase (or TIMED_OUT if the deadline already
   *  passed); Calls ok → StartWriterPhase; Plugin ok → SUCCEEDED; any failure → FAILED with its code. */
  handleTaskPhaseFinished<P extends ExecutionPhase>(
    taskId: string,
    phase: P,
    outcome: PhaseOutcome<P>,
    now: number,
  ): Step<Applied> {
    return phaseFinished(this.s, taskId, phase, outcome, now);
  }

  // ---- Timers --------------------------------------------------------------------------------------

  /** Fires everything due at `now`: slot leases, task timeouts, watch grace, result retention. */
  tickTimers(now: number): Step<TickSummary> {
    return tickTimers(this.s, now);
  }

  /** The earliest armed deadline (absolute ms), or undefined when nothing is scheduled. */
  nextDeadline(): number | undefined {
    return nextDeadline(this.s);
  }

  /** One ALLOCATED slot's lease expired: reclaim it (a task still Preparing on it → SLOT_LOST). */
  handleSlotLeaseExpired(slotId: string, now: number): Step<Applied> {
    return slotLeaseExpired(this.s, slotId, now);
  }

  /** One task's deadline passed: converge TIMED_OUT (retryable), cancelling calls in flight. */
  handleTaskTimedOut(taskId: string, now: number): Step<Applied> {
    return taskTimedOut(this.s, taskId, now);
  }

  // ---- Watches -------------------------------------------------------------------------------------

  /** A WatchTasks stream subscribed to `taskId` (one call per stream and id). */
  handleWatchAttached(taskId: string, now: number): Step<Applied> {
    return watchAttached(this.s, taskId, now);
  }

  /** A WatchTasks stream of `taskId` is confirmed gone; the last one starts the disconnect grace. */
  handleWatchDetached(taskId: string, now: number): Step<Applied> {
    return watchDetached(this.s, taskId, now);
  }

  /** The disconnect grace of `taskId` expired: converge WATCH_DISCONNECTED (not retryable). */
  handleWatchDisconnected(taskId: string, now: number): Step<Applied> {
    return watchDisconnected(this.s, taskId, now);
  }

  // ---- Queries -------------------------------------------------------------------------------------

  /**
   * GetTaskResult: ALLOCATED / RUNNING / terminal + result; throws NotFound (InvalidArgument if empty),
   * also for a task of another client than `client` when given.
   */
  handleGetTaskResult(taskId: string, now: number, client?: string): TaskStatus {
    return getTaskResult(this.s, taskId, now, client);
  }

  /**
   * WatchTasks snapshot of one id; `found: false` for an unknown id (the stream says `not_found`), or
   * one of another client than `client` when given.
   */
  taskSnapshot(taskId: string, now: number, client?: string): TaskSnapshot {
    return taskSnapshot(this.s, taskId, now, client);
  }

  /** Slot-derived heartbeat counts (the publisher adds addresses and resource figures). */
  deriveHeartbeat(_now: number): HeartbeatCounts {
    return heartbeatCounts(this.s);
  }

  /** Violations of the core's internal invariants (empty when consistent). For tests and debugging. */
  checkInvariants(): string[] {
    return checkInvariants(this.s);
  }

  private flags(flags: { ready?: boolean; draining?: boolean }): Step<Applied> {
    const commands: WorkerCommand[] = [];
    setServingFlags(this.s, flags, commands);
    return { result: APPLIED, commands };
  }
}
