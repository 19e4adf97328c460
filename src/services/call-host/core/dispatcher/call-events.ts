// What happens to a call when the executor link or a timer reports on it. Each handler receives a
// node already checked to be current (see `currentAttempt`) and leaves the task pumped or converged.
//
// Budget clock (CallDeadlineMs counts CPU + IO backend time, not queueing):
//   - starts at `callStarted` (or the first event of an attempt that never reported a start), never at
//     dispatch: time spent queued in the worker or the executor is free;
//   - keeps running during IO waits: IO backend time is part of the budget;
//   - pauses while the call has a subcall outstanding (each child has its own budget) and while it
//     waits for a slot to resume; it runs again from the ResumeCall that wakes it.
// The deadline timer is armed at `startedAt + remaining budget` while the call runs, so a tick is O(due).

import { CallNode, type ResumePayload } from './call-node.js';
import { convergeTask } from './convergence.js';
import {
  budgetLeftAt,
  cancelDescendants,
  forgetNode,
  leaveExecutor,
  remainingBudget,
  type DispatcherState,
} from './dispatch-state.js';
import { emitResume, pump } from './pump.js';
import { PageOutputs, pageRowCompleted, splitPage } from './pages.js';
import {
  callRetryRule,
  decideCallRetry,
  isRetryableFailure,
  retryBackoffMs,
  type CallNotRetried,
} from './retry-policy.js';
import type { TaskDispatch } from './task-dispatch.js';
import type { CallFailure, WaitRequest } from './types.js';
import { growWindow, shrinkWindow } from './window-policy.js';

/** The attempt began executing: its budget clock starts. An attempt reporting anything before its
 *  start is taken to have started at that moment. */
export function startClock(s: DispatcherState, node: CallNode, now: number): void {
  if (node.state !== 'dispatched') return;
  node.state = 'running';
  node.startedAt = now;
  s.timers.arm(node, now + remainingBudget(s, node));
}

export function callCompleted(
  s: DispatcherState,
  node: CallNode,
  value: unknown,
  outputBytes: number,
  now: number,
): void {
  const task = node.task;
  const page = node.page;
  if (page !== undefined && !(Array.isArray(value) && value.length === page.args.length)) {
    if (Array.isArray(value) && value.length > 0 && value.length < page.args.length) {
      // The executor stopped starting calls at half the page's budget: the rest run on their own.
      detachAttempt(s, node, false);
      if (countOutputBytes(s, node.task, outputBytes)) splitPage(s, node, now, value);
      return;
    }
    // Not one value per call: the page cannot be trusted, so its calls run on their own.
    const got = Array.isArray(value) ? `${value.length} values` : 'no list of values';
    failAttempt(
      s,
      node,
      { kind: 'user', retryable: false, message: `page of ${page.args.length} calls answered ${got}` },
      now,
    );
    return;
  }
  cancelDescendants(s, node, 'parent_ended'); // a parent that did not await its subcalls orphans them
  leaveExecutor(s, node);
  forgetNode(s, node);
  growWindow(task, s.config.taskMaxInflightCalls);
  if (node.index >= 0) {
    if (page !== undefined) {
      s.counters.callsSucceeded += page.args.length;
      task.rowsSucceeded += page.args.length;
      task.outputs[node.index] = new PageOutputs(value as unknown[]);
      task.rootsSucceeded += 1;
    } else {
      s.counters.callsSucceeded += 1;
      task.rowsSucceeded += 1;
      if (node.pageSlot === undefined) {
        task.outputs[node.index] = value;
        task.rootsSucceeded += 1;
      } else if (pageRowCompleted(task, node, value)) task.rootsSucceeded += 1;
    }
    if (!countOutputBytes(s, task, outputBytes)) return;
    if (task.complete) {
      convergeTask(s, task, undefined);
      return;
    }
  } else {
    s.counters.callsSucceeded += 1;
    resolveChild(s, node, { ok: true, value, waitId: node.waitId, childCallId: node.callId }, now);
  }
  pump(s, task, now);
}

/**
 * Adds a root's output bytes to its task's; over maxCollectedOutputBytes the task converges
 * OUTPUT_BYTES_EXCEEDED and this returns false.
 */
function countOutputBytes(s: DispatcherState, task: TaskDispatch, outputBytes: number): boolean {
  task.outputBytes += Number.isFinite(outputBytes) && outputBytes > 0 ? outputBytes : 0;
  if (task.outputBytes <= s.config.maxCollectedOutputBytes) return true;
  convergeTask(s, task, {
    code: 'OUTPUT_BYTES_EXCEEDED',
    retryable: false,
    message: `root call outputs reached ${task.outputBytes} bytes, above maxCollectedOutputBytes (${s.config.maxCollectedOutputBytes})`,
    cancelReason: 'output_bytes_exceeded',
  });
  return false;
}

/** The current attempt failed: it leaves the executor (with its subcall tree), then its outcome is settled. */
export function failAttempt(s: DispatcherState, node: CallNode, failure: CallFailure, now: number): void {
  detachAttempt(s, node, false);
  settleFailure(s, node, failure, now);
}

/**
 * Takes a failed attempt off the executor: its subcalls are written off (a retry re-issues them) with
 * CancelCall, or silently when the executor is gone. The node stays `detached` until settled.
 */
export function detachAttempt(s: DispatcherState, node: CallNode, executorGone: boolean): void {
  cancelDescendants(s, node, 'parent_ended', executorGone);
  leaveExecutor(s, node);
  node.state = 'detached';
}

/**
 * Decides what a detached failed attempt leads to. Retryable with attempts left → backoff timer, then
 * the urgent queue. Otherwise the call failed terminally: a root fails the task (fastFail), a child
 * answers its parent with the error.
 */
export function settleFailure(s: DispatcherState, node: CallNode, failure: CallFailure, now: number): void {
  const task = node.task;
  const config = s.config;
  node.lastFailure = failure;
  if (isRetryableFailure(failure)) shrinkWindow(task, node.dispatchSeq, task.dispatchSeq, config.minWindow);
  if (node.page !== undefined) {
    // A page is never retried as a page: its calls run on their own (pages.ts).
    splitPage(s, node, now);
    return;
  }
  const decision = decideCallRetry(failure, node.attempt, callRetryRule(config, node.fn));
  if (decision.retry) {
    noteRetry(task, node, failure);
    node.state = 'backoff';
    s.timers.arm(node, now + retryBackoffMs(config.callRetry, node.attempt, s.random));
    pump(s, task, now);
    return;
  }
  s.counters.callsFailed += 1;
  forgetNode(s, node);
  if (node.index >= 0) {
    convergeTask(s, task, {
      code: 'CALL_FAILED',
      retryable: false,
      // The user's stack frames, when the function threw, follow on lines of their own.
      message: `call ${node.callId} (${node.fn}) failed after ${node.attempt} attempt(s): ${failure.kind}: ${failure.message}${notRetriedNote(decision.why, failure)}${failure.stack ? `\n${failure.stack}` : ''}`,
      cancelReason: 'fast_fail',
      failedCall: {
        callId: node.callId,
        index: node.pageSlot === undefined ? task.positionOf(node.index) : node.pageSlot.first + node.pageRow,
        function: node.fn,
        attempts: node.attempt,
        failure,
      },
    });
    return;
  }
  const error = {
    kind: failure.kind,
    retryable: failure.retryable,
    message: failure.message,
    childCallId: node.callId,
    function: node.fn,
    attempts: node.attempt,
  };
  resolveChild(s, node, { ok: false, error, waitId: node.waitId, childCallId: node.callId }, now);
  pump(s, task, now);
}

/** Says why a kind the rule does not retry ended the call (docs/retries.md § Call level); else nothing. */
function notRetriedNote(why: CallNotRetried, failure: CallFailure): string {
  if (why !== 'kind_not_retried') return '';
  return ` (not retried: retryOn does not list ${failure.kind}; worker.callRetry.retryOn or functions.retry.<name>.retryOn, docs/retries.md)`;
}

/** A child ended (already forgotten): answer its parent now if the parent still waits on other
 *  children, else park the answer until the parent gets a slot back. */
function resolveChild(s: DispatcherState, child: CallNode, payload: ResumePayload, now: number): void {
  const parent = child.parent!;
  if (parent.children !== undefined && parent.children.size > 0) {
    emitResume(s, parent, payload, budgetLeftAt(s, parent, now));
    return;
  }
  parent.state = 'resumeQueued';
  parent.pendingResume = payload;
  parent.task.urgent.push(parent);
}

export function callWaiting(s: DispatcherState, node: CallNode, wait: WaitRequest, now: number): void {
  startClock(s, node, now);
  if (wait.kind === 'io') {
    node.ioWaits += 1;
    node.task.ioWaits += 1;
    return;
  }
  const task = node.task;
  const childCallId = `${node.callId}.${++node.childCounter}`;
  const refusal = refuseSubcall(s, node, wait);
  if (refusal !== undefined) {
    const error = {
      kind: 'user' as const,
      retryable: false,
      message: refusal,
      childCallId,
      function: String(wait.function),
      attempts: 0,
    };
    emitResume(s, node, { ok: false, error, waitId: wait.waitId, childCallId }, budgetLeftAt(s, node, now));
    return;
  }
  const maxPending = s.config.taskMaxPendingSubcalls;
  if (task.pendingSubcalls >= maxPending) {
    convergeTask(s, task, {
      code: 'CALL_BUDGET_EXCEEDED',
      retryable: false,
      message: `task ${task.taskId} used its call budget: call ${node.callId} (${node.fn}) asked for subcall ${wait.function} with ${task.pendingSubcalls} subcalls already in flight, the limit is worker.taskMaxPendingSubcalls (${maxPending})`,
      cancelReason: 'call_budget_exceeded',
    });
    return;
  }
  parkForSubcall(s, node, now);
  const child = new CallNode(
    task,
    childCallId,
    -1,
    node,
    wait.waitId,
    node.depth + 1,
    wait.function,
    wait.args,
    node.block,
  );
  (node.children ??= new Set()).add(child);
  task.live.add(child);
  s.calls.set(childCallId, child);
  task.subcalls += 1;
  task.pendingSubcalls += 1;
  s.counters.subcalls += 1;
  task.urgent.push(child);
  pump(s, task, now);
}

function refuseSubcall(
  s: DispatcherState,
  node: CallNode,
  wait: WaitRequest & { kind: 'subcall' },
): string | undefined {
  if (typeof wait.function !== 'string' || wait.function === '' || !Array.isArray(wait.args)) {
    return 'invalid subcall request: function must be a non-empty string and args an array';
  }
  if (node.depth >= s.config.maxSubcallDepth) {
    return `subcall depth limit reached (maxSubcallDepth ${s.config.maxSubcallDepth}) calling ${wait.function} from ${node.callId}`;
  }
  return undefined;
}

/** The node now waits on a subcall: it gives up its slot and its clock pauses. */
function parkForSubcall(s: DispatcherState, node: CallNode, now: number): void {
  const task = node.task;
  switch (node.state) {
    case 'running':
      node.usedMs += now - node.startedAt;
      s.timers.disarm(node);
      task.inflight -= 1;
      s.inflightTotal -= 1;
      task.parked += 1;
      s.parkedTotal += 1;
      node.state = 'suspended';
      return;
    case 'resumeQueued': {
      // It asked for another subcall before its previous answer could be delivered: deliver it now.
      task.urgent.invalidate(node);
      node.state = 'suspended';
      const payload = node.pendingResume!;
      node.pendingResume = undefined;
      emitResume(s, node, payload, remainingBudget(s, node));
      return;
    }
    case 'suspended':
      return;
    case 'dispatched':
    case 'queued':
    case 'backoff':
    case 'detached':
    case 'done':
      throw new Error(`dispatcher: parkForSubcall in state ${node.state}`); // unreachable: checked by callers
    default: {
      const _exhaustive: never = node.state;
      return _exhaustive;
    }
  }
}

/** Adds one retried attempt to its task's RetrySummary (rare: a new object each time is fine). */
function noteRetry(task: TaskDispatch, node: CallNode, failure: CallFailure): void {
  const prev = task.retried;
  task.retried = {
    attempts: (prev?.attempts ?? 0) + 1,
    byKind: { ...prev?.byKind, [failure.kind]: (prev?.byKind[failure.kind] ?? 0) + 1 },
    first: prev?.first ?? { callId: node.callId, function: node.fn, attempt: node.attempt, failure },
  };
}

export function ioFinished(node: CallNode): void {
  if (node.ioWaits > 0) {
    node.ioWaits -= 1;
    node.task.ioWaits -= 1;
  }
}

/** A node's timer fired: the running attempt's budget is spent, or its retry backoff is over. */
export function callTimerFired(s: DispatcherState, node: CallNode, now: number): void {
  if (node.state === 'running') {
    s.counters.deadlinesExpired += 1;
    s.out.push({
      type: 'CancelCall',
      taskId: node.task.taskId,
      callId: node.callId,
      attempt: node.attempt,
      reason: 'deadline',
    });
    const failure: CallFailure = {
      kind: 'deadline',
      retryable: true,
      message: `call ${node.callId} (${node.fn}) exceeded its execution budget of ${s.config.callDeadlineMs} ms`,
    };
    failAttempt(s, node, failure, now);
  } else if (node.state === 'backoff') {
    node.state = 'queued';
    node.task.urgent.push(node);
    pump(s, node.task, now);
  }
}

/** The task's own deadline passed (a backstop to WorkerCore's timeout, which arrives as cancelTask). */
export function taskTimerFired(s: DispatcherState, task: TaskDispatch): void {
  convergeTask(s, task, {
    code: 'TIMED_OUT',
    retryable: true,
    message: `task deadline (${task.deadlineMs}) passed during the Calls phase`,
    cancelReason: 'task_timed_out',
  });
}
