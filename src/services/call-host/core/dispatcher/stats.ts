// Figures for metrics and debugging (`blockx status`, prom-client gauges and counters in the adapter).

import { atExecutor, isParked } from './call-node.js';
import type { DispatcherState } from './dispatch-state.js';
import type { TaskDispatch } from './task-dispatch.js';

/** Dispatcher-wide figures. Counters (`*` below) only grow; the rest are current values. */
export interface DispatcherStats {
  /** Tasks in their Calls phase. */
  readonly tasks: number;
  readonly executorReady: boolean;
  /** Attempts holding an execution slot (dispatched or running), over all tasks. */
  readonly inflight: number;
  /** Attempts parked on subcalls, over all tasks. */
  readonly parked: number;
  /** Calls with a node (dispatched at least once or requested as a subcall) and not ended. */
  readonly liveCalls: number;
  /** * Attempts sent (entries of ExecuteCalls commands). */
  readonly attempts: number;
  /** * Attempts after the first of a call. */
  readonly retries: number;
  /** * Child calls requested. */
  readonly subcalls: number;
  /** * Calls (roots and children) that completed successfully. */
  readonly callsSucceeded: number;
  /** * Calls that failed terminally (retries exhausted or not retryable). */
  readonly callsFailed: number;
  /** * Attempts cut off by the dispatcher's deadline timer. */
  readonly deadlinesExpired: number;
  /** * Executor events ignored as stale (old attempt, unknown or written-off call). */
  readonly staleEvents: number;
  /** * Tasks whose Calls phase converged. */
  readonly tasksConverged: number;
  /** Pages that failed and were split into their calls (README.md § Pages). */
  readonly pagesSplit: number;
}

export interface TaskDispatchStats {
  readonly taskId: string;
  readonly inflight: number;
  readonly parked: number;
  readonly window: number;
  /** Root calls handed over so far. */
  readonly rootCalls: number;
  /** Root calls never dispatched yet. */
  readonly rootsPending: number;
  readonly rootsSucceeded: number;
  /** Children, retries and resumes waiting for a slot. */
  readonly urgentQueued: number;
  readonly liveCalls: number;
  readonly attempts: number;
  readonly retries: number;
  readonly subcalls: number;
  readonly outputBytes: number;
  /** IO waits of running calls not finished yet (their budget clock runs). */
  readonly ioWaits: number;
  /** Streaming and `finishAppending` not called yet. */
  readonly appending: boolean;
}

export interface CallAtExecutor {
  readonly callId: string;
  readonly attempt: number;
  /** Parked on subcalls (holds no slot). */
  readonly parked: boolean;
}

export function dispatcherStats(s: DispatcherState): DispatcherStats {
  return {
    tasks: s.tasks.size,
    executorReady: s.executorReady,
    inflight: s.inflightTotal,
    parked: s.parkedTotal,
    liveCalls: s.calls.size,
    ...s.counters,
  };
}

export function taskDispatchStats(t: TaskDispatch): TaskDispatchStats {
  return {
    taskId: t.taskId,
    inflight: t.inflight,
    parked: t.parked,
    window: t.window,
    rootCalls: t.calls.length,
    rootsPending: t.calls.length - t.nextRoot,
    rootsSucceeded: t.rootsSucceeded,
    urgentQueued: t.urgent.size,
    liveCalls: t.live.size,
    attempts: t.attempts,
    retries: t.retries,
    subcalls: t.subcalls,
    outputBytes: t.outputBytes,
    ioWaits: t.ioWaits,
    appending: !t.appendingDone,
  };
}

export function callsAtExecutor(t: TaskDispatch): CallAtExecutor[] {
  const result: CallAtExecutor[] = [];
  for (const n of t.live) {
    if (atExecutor(n.state)) result.push({ callId: n.callId, attempt: n.attempt, parked: isParked(n.state) });
  }
  return result;
}
