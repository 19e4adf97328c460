// DispatcherCore: the Sans-IO dispatcher of the Calls phase (docs/task-lifecycle.md § The three phases;
// functions and subcalls: docs/architecture.md § Plugins and functions). It holds the dispatch state of
// many tasks at once and decides, for each, which call attempt goes to the executor next, when an attempt is
// written off, retried, or answered, and when the task's phase converges. No IO, no clock: every input
// carries `now`, timers are data (`nextDeadline`, `tick`), randomness (retry jitter) is injected. Every input
// returns the commands it produced, in order; illegal input from the driver throws a `DispatcherError` and
// leaves the state unchanged. README.md in this folder is the theory of operation.

import { atExecutor, type CallNode } from './call-node.js';
import * as calls from './call-events.js';
import type { DispatcherCommand } from './commands.js';
import { DEFAULT_DISPATCHER_CONFIG, validateDispatcherConfig, type DispatcherConfig } from './config.js';
import { convergeTask } from './convergence.js';
import { createDispatcherState, currentAttempt, type DispatcherState } from './dispatch-state.js';
import { DispatcherConfigError, DispatcherError, DispatcherErrorCode } from './errors.js';
import type { DispatcherInput } from './inputs.js';
import { packPages } from './pages.js';
import { pump } from './pump.js';
import { TaskDispatch } from './task-dispatch.js';
import type {
  CallFailure,
  CallPhaseOptions,
  CallSpec,
  CancelReason,
  CompletedAttempt,
  TaskCancelReason,
  WaitRequest,
} from './types.js';
import { initialWindowState } from './window-policy.js';
import {
  callsAtExecutor,
  dispatcherStats,
  taskDispatchStats,
  type CallAtExecutor,
  type DispatcherStats,
  type TaskDispatchStats,
} from './stats.js';
import { validateCalls } from './validate.js';

const NO_COMMANDS: readonly DispatcherCommand[] = Object.freeze([]);

/** How each owner-decided end converges; `retryable` matches WorkerCore's FAILURE_RETRYABLE_RULES. */
const TASK_CANCEL_RULES: Readonly<
  Record<TaskCancelReason, { retryable: boolean; message: string; cancelReason: CancelReason }>
> = Object.freeze({
  TIMED_OUT: {
    retryable: true,
    message: 'task timed out during the Calls phase',
    cancelReason: 'task_timed_out',
  },
  CANCELLED: {
    retryable: true,
    message: 'task cancelled during the Calls phase',
    cancelReason: 'task_cancelled',
  },
  WATCH_DISCONNECTED: {
    retryable: false,
    message: 'the client stopped watching the task during the Calls phase',
    cancelReason: 'watch_disconnected',
  },
});

export interface DispatcherCoreOptions {
  /** Uniform [0, 1) source for retry jitter; without it backoff is exact (deterministic tests). */
  readonly random?: () => number;
  /** Whether the executor is ready at construction; normally false until its first heartbeat. */
  readonly executorReady?: boolean;
}

export class DispatcherCore {
  readonly config: DispatcherConfig;
  private readonly s: DispatcherState;

  /** Throws DispatcherConfigError (listing every problem) on an invalid config. */
  constructor(config: DispatcherConfig = DEFAULT_DISPATCHER_CONFIG, options: DispatcherCoreOptions = {}) {
    const issues = validateDispatcherConfig(config);
    if (issues.length > 0) throw new DispatcherConfigError(issues);
    this.config = Object.freeze({ ...config, callRetry: Object.freeze({ ...config.callRetry }) });
    this.s = createDispatcherState(this.config, options.random, options.executorReady ?? false);
  }

  /** Dispatches one input value to the matching method. */
  apply(input: DispatcherInput): readonly DispatcherCommand[] {
    switch (input.type) {
      case 'startCallPhase':
        return this.startCallPhase(input.taskId, input.calls, input.opts, input.now);
      case 'appendCalls':
        return this.appendCalls(input.taskId, input.calls, input.now);
      case 'finishAppending':
        return this.finishAppending(input.taskId, input.now);
      case 'callStarted':
        return this.callStarted(input.callId, input.attempt, input.now);
      case 'callCompleted':
        return this.callCompleted(input.callId, input.attempt, input.value, input.outputBytes, input.now);
      case 'callsCompleted':
        return this.callsCompleted(input.results, input.outputBytesEach, input.now);
      case 'callFailed':
        return this.callFailed(input.callId, input.attempt, input.failure, input.now);
      case 'callWaiting':
        return this.callWaiting(input.callId, input.attempt, input.wait, input.now);
      case 'ioFinished':
        return this.ioFinished(input.callId, input.attempt, input.now);
      case 'cancelTask':
        return this.cancelTask(input.taskId, input.reason, input.now);
      case 'executorReady':
        return this.executorReady(input.now);
      case 'executorLost':
        return this.executorLost(input.now);
      case 'tick':
        return this.tick(input.now);
      default: {
        const _exhaustive: never = input;
        return _exhaustive;
      }
    }
  }

  // ---- task inputs (from the orchestrator) --------------------------------------------------------

  /**
   * Starts a task's Calls phase. Without `opts.streaming` the list is complete: an empty list converges
   * at once with success and no outputs. With it, calls follow through `appendCalls` and the phase can
   * end only after `finishAppending`. The list is used in place and must not be mutated afterwards.
   */
  startCallPhase(
    taskId: string,
    callList: readonly CallSpec[],
    opts: CallPhaseOptions,
    now: number,
  ): readonly DispatcherCommand[] {
    if (this.s.tasks.has(taskId)) {
      throw new DispatcherError(
        DispatcherErrorCode.TASK_ALREADY_DISPATCHING,
        `task ${taskId} is already in its Calls phase`,
        { taskId },
      );
    }
    if (typeof opts.deadlineMs !== 'number' || Number.isNaN(opts.deadlineMs)) {
      throw new DispatcherError(
        DispatcherErrorCode.INVALID_CALL,
        `deadlineMs must be a number, got ${String(opts.deadlineMs)}`,
        { taskId },
      );
    }
    validateCalls(taskId, callList, 0);
    const streaming = opts.streaming === true;
    const window = initialWindowState(this.config.initialWindow, this.config.taskMaxInflightCalls);
    const paged = packPages(callList, this.config.callPageRows, 0);
    const list = streaming || paged !== callList ? paged.slice() : (callList as CallSpec[]);
    const task = new TaskDispatch(taskId, opts.deadlineMs, streaming, list, window);
    task.callRows = callList.length;
    task.notePositions(0, 0);
    this.s.tasks.set(taskId, task);
    if (now >= task.deadlineMs) calls.taskTimerFired(this.s, task);
    else if (task.complete) convergeTask(this.s, task, undefined);
    else {
      this.s.timers.arm(task, task.deadlineMs);
      pump(this.s, task, now);
    }
    return this.flush();
  }

  /**
   * Appends calls to a streaming task; they are dispatched as slots allow. Calls for a task that is no
   * longer dispatching (it converged: failed, timed out) are ignored; the builder learns it from the
   * task's ConvergeTaskCalls or `isAppending` and should stop scanning.
   */
  appendCalls(taskId: string, callList: readonly CallSpec[], now: number): readonly DispatcherCommand[] {
    const task = this.appendable(taskId);
    if (task === undefined) return NO_COMMANDS;
    validateCalls(taskId, callList, task.callRows);
    task.append(packPages(callList, this.config.callPageRows, task.callRows), task.callRows);
    task.callRows += callList.length;
    pump(this.s, task, now);
    return this.flush();
  }

  /** No more calls will be appended: the task converges once every appended call has succeeded. */
  finishAppending(taskId: string, now: number): readonly DispatcherCommand[] {
    const task = this.appendable(taskId);
    if (task === undefined) return NO_COMMANDS;
    task.appendingDone = true;
    if (task.complete) convergeTask(this.s, task, undefined);
    else pump(this.s, task, now);
    return this.flush();
  }

  /** Whether `taskId` is in its Calls phase and still accepts `appendCalls`. */
  isAppending(taskId: string): boolean {
    const task = this.s.tasks.get(taskId);
    return task !== undefined && !task.appendingDone;
  }

  /**
   * Ends a task's phase on the owner's decision: the task timeout (TIMED_OUT), cancellation
   * (CANCELLED) or the client leaving (WATCH_DISCONNECTED). In-flight attempts get CancelCall, queued
   * calls are dropped, and the phase converges with that code (retryable as WorkerCore rules it). A task
   * not in its Calls phase (never started, already converged) → no-op.
   */
  cancelTask(taskId: string, reason: TaskCancelReason, _now: number): readonly DispatcherCommand[] {
    const task = this.s.tasks.get(taskId);
    if (task === undefined) return NO_COMMANDS;
    convergeTask(this.s, task, { code: reason, ...TASK_CANCEL_RULES[reason] });
    return this.flush();
  }

  // ---- executor link inputs -----------------------------------------------------------------------

  callStarted(callId: string, attempt: number, now: number): readonly DispatcherCommand[] {
    const node = currentAttempt(this.s, callId, attempt);
    if (node === undefined) return NO_COMMANDS;
    if (node.state !== 'dispatched') {
      this.s.counters.staleEvents += 1; // a duplicate start
      return NO_COMMANDS;
    }
    calls.startClock(this.s, node, now);
    return NO_COMMANDS;
  }

  /** `outputBytes`: size of the serialised value, counted against maxCollectedOutputBytes for roots. */
  callCompleted(
    callId: string,
    attempt: number,
    value: unknown,
    outputBytes: number,
    now: number,
  ): readonly DispatcherCommand[] {
    const node = currentAttempt(this.s, callId, attempt);
    if (node === undefined) return NO_COMMANDS;
    calls.callCompleted(this.s, node, value, outputBytes, now);
    return this.flush();
  }

  /**
   * Many successes at once (the executor's CallsCompleted frame, README.md § Calls in bulk): each is
   * `callCompleted` of its attempt, stale ones ignored, and the attempts they free slots for leave as one
   * ExecuteCalls per task. `outputBytesEach` is what each counts against maxCollectedOutputBytes (the
   * frame's size shared out over its entries).
   */
  callsCompleted(
    results: readonly CompletedAttempt[],
    outputBytesEach: number,
    now: number,
  ): readonly DispatcherCommand[] {
    const s = this.s;
    for (let i = 0; i < results.length; i++) {
      const r = results[i]!;
      const node = currentAttempt(s, r.callId, r.attempt);
      if (node === undefined) continue;
      calls.callCompleted(s, node, r.value === undefined ? null : r.value, outputBytesEach, now);
    }
    return this.flush();
  }

  callFailed(
    callId: string,
    attempt: number,
    failure: CallFailure,
    now: number,
  ): readonly DispatcherCommand[] {
    const node = currentAttempt(this.s, callId, attempt);
    if (node === undefined) return NO_COMMANDS;
    calls.failAttempt(this.s, node, failure, now);
    return this.flush();
  }

  /** The call waits: a `subcall` is scheduled as a child call; an `io` wait is only recorded. */
  callWaiting(callId: string, attempt: number, wait: WaitRequest, now: number): readonly DispatcherCommand[] {
    const node = currentAttempt(this.s, callId, attempt);
    if (node === undefined) return NO_COMMANDS;
    calls.callWaiting(this.s, node, wait, now);
    return this.flush();
  }

  /** An IO wait of the call ended (answered by the IO scope). The budget clock ran throughout. */
  ioFinished(callId: string, attempt: number, _now: number): readonly DispatcherCommand[] {
    const node = currentAttempt(this.s, callId, attempt);
    if (node !== undefined) calls.ioFinished(node);
    return NO_COMMANDS;
  }

  /** The executor is up (first heartbeat, or restarted): dispatching resumes for every task. */
  executorReady(now: number): readonly DispatcherCommand[] {
    this.s.executorReady = true;
    for (const task of this.s.tasks.values()) pump(this.s, task, now);
    return this.flush();
  }

  /**
   * The executor crashed or missed its heartbeats: every attempt at it failed with `executor_crash`
   * (retryable, per policy), and nothing is dispatched until `executorReady`. No CancelCall is sent:
   * the attempts died with the executor. Failing a root also writes off its subcall tree.
   */
  executorLost(now: number): readonly DispatcherCommand[] {
    this.s.executorReady = false;
    const failure: CallFailure = { kind: 'executor_crash', retryable: true, message: 'executor lost' };
    // Two passes per task: first every attempt leaves the executor silently, then outcomes are settled,
    // so a fastFail decided by the first root does not "cancel" attempts that are already dead.
    for (const task of [...this.s.tasks.values()]) {
      const roots: CallNode[] = [];
      for (const node of task.live) if (node.parent === undefined && atExecutor(node.state)) roots.push(node);
      for (const root of roots) calls.detachAttempt(this.s, root, true);
      for (const root of roots) {
        if (task.converged) break;
        calls.settleFailure(this.s, root, failure, now);
      }
    }
    return this.flush();
  }

  // ---- timers ---------------------------------------------------------------------------------------

  /** The earliest pending deadline (call budget, retry backoff, task deadline), if any. */
  nextDeadline(): number | undefined {
    return this.s.timers.peek()?.timerAt;
  }

  /** Fires every timer due at `now`. */
  tick(now: number): readonly DispatcherCommand[] {
    for (;;) {
      const due = this.s.timers.popDue(now);
      if (due === undefined) break;
      if (due.timerKind === 'task') calls.taskTimerFired(this.s, due);
      else calls.callTimerFired(this.s, due, now);
    }
    return this.flush();
  }

  // ---- queries --------------------------------------------------------------------------------------

  stats(): DispatcherStats {
    return dispatcherStats(this.s);
  }

  /** Per-task figures; undefined when the task is not in its Calls phase. */
  taskStats(taskId: string): TaskDispatchStats | undefined {
    const task = this.s.tasks.get(taskId);
    return task === undefined ? undefined : taskDispatchStats(task);
  }

  /** The task's calls with an attempt at the executor (parked ones included), for debugging. */
  callsAtExecutor(taskId: string): CallAtExecutor[] {
    const task = this.s.tasks.get(taskId);
    return task === undefined ? [] : callsAtExecutor(task);
  }

  // ---- internals ------------------------------------------------------------------------------------

  private appendable(taskId: string): TaskDispatch | undefined {
    const task = this.s.tasks.get(taskId);
    if (task === undefined) return undefined;
    if (task.appendingDone) {
      const why = task.streaming ? 'finishAppending was already called' : 'it was not started with streaming';
      throw new DispatcherError(
        DispatcherErrorCode.NOT_APPENDING,
        `task ${taskId} does not accept calls: ${why}`,
        { taskId },
      );
    }
    return task;
  }

  private flush(): readonly DispatcherCommand[] {
    const out = this.s.out;
    if (out.length === 0) return NO_COMMANDS;
    this.s.out = [];
    return out;
  }
}
