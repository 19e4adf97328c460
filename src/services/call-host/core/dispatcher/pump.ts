// The pump: fills a task's free execution slots. Order of service: the urgent queue first (resumes of
// parents whose subcalls ended, children, retries whose backoff is over: older work that other work
// waits on), then the next root call of the call list. A slot is free while
// `inflight < min(window, taskMaxInflightCalls)`; new root calls additionally wait while the task has
// `taskMaxInflightCalls` calls parked on subcalls, so parked executor contexts stay bounded.
// Nothing is dispatched while the executor is not ready. O(1) per command emitted.

import { CallNode } from './call-node.js';
import { convergeTask } from './convergence.js';
import type { ExecuteAttempt } from './commands.js';
import { remainingBudget, type DispatcherState } from './dispatch-state.js';
import { pageCallId } from './pages.js';
import type { TaskDispatch } from './task-dispatch.js';
import type { CallSpec } from './types.js';

/** Placeholder for a streaming task's root call that has been handed to its node. */
const DISPATCHED: CallSpec = Object.freeze({ function: '', args: Object.freeze([]) as readonly unknown[] });

export function pump(s: DispatcherState, task: TaskDispatch, now: number): void {
  if (!s.executorReady || task.converged) return;
  const cap = s.config.taskMaxInflightCalls;
  const limit = task.window < cap ? task.window : cap;
  while (task.inflight < limit) {
    const node = task.urgent.shift();
    if (node !== undefined) {
      if (node.state === 'resumeQueued') resumeNode(s, node, now);
      else if (overAttemptBudget(s, task)) return;
      else dispatchNode(s, node, now);
      continue;
    }
    if (task.nextRoot >= task.calls.length || task.parked >= cap) return;
    if (overAttemptBudget(s, task)) return;
    const index = task.nextRoot++;
    const spec = task.calls[index]!;
    // A streaming task owns its list: the node now carries the spec (retries reuse it), so the slot is
    // released and a long scan holds one pointer per call, not its arguments (bounded memory).
    if (task.streaming) task.calls[index] = DISPATCHED;
    const page = spec.page;
    const root = new CallNode(
      task,
      page === undefined
        ? `${task.taskId}/${task.positionOf(index)}`
        : pageCallId(task.taskId, page.first, page.args.length),
      index,
      undefined,
      undefined,
      0,
      spec.function,
      spec.args,
      spec.block,
    );
    root.page = page;
    task.live.add(root);
    s.calls.set(root.callId, root);
    dispatchNode(s, root, now);
  }
}

/**
 * The call budget (README.md, "Call budget"): one more attempt would exceed `taskMaxCallAttempts`, so
 * the task converges with CALL_BUDGET_EXCEEDED instead (and the caller stops pumping).
 */
function overAttemptBudget(s: DispatcherState, task: TaskDispatch): boolean {
  const max = s.config.taskMaxCallAttempts;
  if (task.attempts < max) return false;
  convergeTask(s, task, {
    code: 'CALL_BUDGET_EXCEEDED',
    retryable: false,
    message: `task ${task.taskId} used its call budget: ${task.attempts} call attempts (roots, subcalls and retries), the limit is worker.taskMaxCallAttempts (${max})`,
    cancelReason: 'call_budget_exceeded',
  });
  return true;
}

/** Sends the next attempt of a queued node. */
function dispatchNode(s: DispatcherState, node: CallNode, now: number): void {
  const task = node.task;
  node.attempt += 1;
  node.state = 'dispatched';
  node.usedMs = 0;
  node.dispatchSeq = ++task.dispatchSeq;
  task.inflight += 1;
  s.inflightTotal += 1;
  task.attempts += 1;
  s.counters.attempts += 1;
  if (node.attempt > 1) {
    task.retries += 1;
    s.counters.retries += 1;
  }
  // The executor enforces the budget too; never promise more than the task has left.
  const budgetMs = Math.max(1, Math.min(s.config.callDeadlineMs, task.deadlineMs - now));
  const attempt: ExecuteAttempt = {
    callId: node.callId,
    attempt: node.attempt,
    function: node.fn,
    args: node.args,
    block: node.block,
    parentCallId: node.parent?.callId,
    depth: node.depth,
    page: node.page,
  };
  // One command per task per pump (README.md § Calls in bulk): join the task's command if it is the
  // last one out (nothing else was decided since), else open a new one.
  const out = s.out;
  const last = out.length > 0 ? out[out.length - 1]! : undefined;
  if (last?.type === 'ExecuteCalls' && last.taskId === task.taskId && last.budgetMs === budgetMs)
    (last.attempts as ExecuteAttempt[]).push(attempt);
  else out.push({ type: 'ExecuteCalls', taskId: task.taskId, budgetMs, attempts: [attempt] });
}

/** Gives a parked parent its slot back and delivers the answer that unparked it; its clock runs again. */
function resumeNode(s: DispatcherState, node: CallNode, now: number): void {
  const task = node.task;
  const payload = node.pendingResume!;
  node.pendingResume = undefined;
  node.state = 'running';
  task.parked -= 1;
  s.parkedTotal -= 1;
  task.inflight += 1;
  s.inflightTotal += 1;
  node.startedAt = now;
  const budgetMs = remainingBudget(s, node);
  s.timers.arm(node, now + budgetMs);
  emitResume(s, node, payload, budgetMs);
}

/** Emits the ResumeCall carrying `payload` to `node`'s current attempt. */
export function emitResume(
  s: DispatcherState,
  node: CallNode,
  payload: NonNullable<CallNode['pendingResume']>,
  budgetMs: number,
): void {
  const base = {
    type: 'ResumeCall' as const,
    taskId: node.task.taskId,
    callId: node.callId,
    attempt: node.attempt,
    waitId: payload.waitId,
    childCallId: payload.childCallId,
    budgetMs,
  };
  s.out.push(
    payload.ok ? { ...base, ok: true, value: payload.value } : { ...base, ok: false, error: payload.error },
  );
}
