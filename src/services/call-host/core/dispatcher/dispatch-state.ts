// The whole state of one DispatcherCore as plain data, shared by the handler modules (pump.ts,
// convergence.ts, call-events.ts). Only `DispatcherCore` creates it; handlers are functions of
// (state, ..., now) that mutate it and append commands to `out`.

import { atExecutor, holdsSlot, isParked, type CallNode } from './call-node.js';
import type { DispatcherCommand } from './commands.js';
import type { DispatcherConfig } from './config.js';
import type { TaskDispatch } from './task-dispatch.js';
import { TimerHeap } from './timer-heap.js';

export interface DispatcherCounters {
  attempts: number;
  retries: number;
  subcalls: number;
  callsSucceeded: number;
  callsFailed: number;
  deadlinesExpired: number;
  staleEvents: number;
  tasksConverged: number;
  /** Pages that failed and were split into their calls (pages.ts). */
  pagesSplit: number;
}

export interface DispatcherState {
  readonly config: DispatcherConfig;
  readonly random: (() => number) | undefined;
  readonly tasks: Map<string, TaskDispatch>;
  /** Every live node of every task, by call id. */
  readonly calls: Map<string, CallNode>;
  readonly timers: TimerHeap<CallNode | TaskDispatch>;
  executorReady: boolean;
  inflightTotal: number;
  parkedTotal: number;
  readonly counters: DispatcherCounters;
  /** Commands produced by the input being handled. */
  out: DispatcherCommand[];
}

export function createDispatcherState(
  config: DispatcherConfig,
  random: (() => number) | undefined,
  executorReady: boolean,
): DispatcherState {
  return {
    config,
    random,
    tasks: new Map(),
    calls: new Map(),
    timers: new TimerHeap(),
    executorReady,
    inflightTotal: 0,
    parkedTotal: 0,
    counters: {
      attempts: 0,
      retries: 0,
      subcalls: 0,
      callsSucceeded: 0,
      callsFailed: 0,
      deadlinesExpired: 0,
      staleEvents: 0,
      tasksConverged: 0,
      pagesSplit: 0,
    },
    out: [],
  };
}

/**
 * The node an executor event is about, if the event is current: the call exists, the attempt is its
 * current one, and that attempt is at the executor. Anything else is stale (an old attempt, a call
 * already written off, a task already converged) and is counted and ignored.
 */
export function currentAttempt(s: DispatcherState, callId: string, attempt: number): CallNode | undefined {
  const node = s.calls.get(callId);
  if (node === undefined || node.attempt !== attempt || !atExecutor(node.state)) {
    s.counters.staleEvents += 1;
    return undefined;
  }
  return node;
}

/** Takes the current attempt out of the executor's accounting: slot or parking released, timer off.
 *  The caller sets the node's next state. */
export function leaveExecutor(s: DispatcherState, node: CallNode): void {
  const task = node.task;
  if (holdsSlot(node.state)) {
    task.inflight -= 1;
    s.inflightTotal -= 1;
  } else if (isParked(node.state)) {
    task.parked -= 1;
    s.parkedTotal -= 1;
    if (node.state === 'resumeQueued') task.urgent.invalidate(node);
  }
  s.timers.disarm(node);
  task.ioWaits -= node.ioWaits;
  node.ioWaits = 0;
  node.pendingResume = undefined;
}

/** Forgets a node that ended (or was written off): off the executor, out of every table, out of its
 *  parent's children. The caller has already emitted whatever its end means. */
export function dropNode(s: DispatcherState, node: CallNode): void {
  if (atExecutor(node.state)) leaveExecutor(s, node);
  else if (node.state === 'queued') node.task.urgent.invalidate(node);
  else if (node.state === 'backoff') s.timers.disarm(node);
  forgetNode(s, node);
}

/** Removes a node that holds nothing any more (already off the executor, queue and timers). */
export function forgetNode(s: DispatcherState, node: CallNode): void {
  if (node.state === 'done') return;
  if (node.index < 0) node.task.pendingSubcalls -= 1;
  node.state = 'done';
  node.task.live.delete(node);
  s.calls.delete(node.callId);
  node.parent?.children?.delete(node);
}

/**
 * Writes off every descendant of `node`: CancelCall for those at the executor (unless `silent`: the
 * executor is gone and took them with it), the rest are dropped.
 */
export function cancelDescendants(
  s: DispatcherState,
  node: CallNode,
  reason: 'parent_ended',
  silent = false,
): void {
  const children = node.children;
  if (children === undefined || children.size === 0) return;
  node.children = undefined;
  for (const child of children) {
    if (!silent && atExecutor(child.state)) {
      s.out.push({
        type: 'CancelCall',
        taskId: child.task.taskId,
        callId: child.callId,
        attempt: child.attempt,
        reason,
      });
    }
    cancelDescendants(s, child, reason, silent);
    dropNode(s, child);
  }
}

/** Budget left to the node's current attempt, not counting the stretch running since `startedAt`. */
export function remainingBudget(s: DispatcherState, node: CallNode): number {
  return Math.max(0, s.config.callDeadlineMs - node.usedMs);
}

/** Budget left to the node's current attempt at `now` (its clock runs only while it is running). */
export function budgetLeftAt(s: DispatcherState, node: CallNode, now: number): number {
  const running = node.state === 'running' ? now - node.startedAt : 0;
  return Math.max(0, s.config.callDeadlineMs - node.usedMs - running);
}
