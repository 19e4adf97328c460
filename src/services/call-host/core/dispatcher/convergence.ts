// Convergence: the single way a task's Calls phase ends. In one step it writes off every attempt still
// at the executor (CancelCall each, parents before children), drops every node and timer of the task,
// forgets the task, and emits `ConvergeTaskCalls` last. After it, events about the task's calls are
// stale and its id is free for a new phase.

import { atExecutor } from './call-node.js';
import { dropNode, type DispatcherState } from './dispatch-state.js';
import { flattenOutputs } from './pages.js';
import type { TaskDispatch } from './task-dispatch.js';
import type { CallPhaseFailureCode, CancelReason, FailedCall } from './types.js';

export interface PhaseFailure {
  readonly code: CallPhaseFailureCode;
  readonly retryable: boolean;
  readonly message: string;
  /** Reason given to the attempts cancelled by this convergence. */
  readonly cancelReason: CancelReason;
  readonly failedCall?: FailedCall;
}

const NO_OUTPUTS: readonly unknown[] = Object.freeze([]);

/** Ends the task's phase: `failure` undefined means success (every root call succeeded). */
export function convergeTask(
  s: DispatcherState,
  task: TaskDispatch,
  failure: PhaseFailure | undefined,
): void {
  task.converged = true;
  if (failure !== undefined) {
    for (const node of task.live) {
      if (atExecutor(node.state)) {
        s.out.push({
          type: 'CancelCall',
          taskId: task.taskId,
          callId: node.callId,
          attempt: node.attempt,
          reason: failure.cancelReason,
        });
      }
    }
    for (const node of task.live) dropNode(s, node);
  }
  s.timers.disarm(task);
  s.tasks.delete(task.taskId);
  s.counters.tasksConverged += 1;
  const counters = {
    rootCalls: task.callRows,
    rootsSucceeded: task.rowsSucceeded,
    attempts: task.attempts,
    retries: task.retries,
    subcalls: task.subcalls,
    outputBytes: task.outputBytes,
  };
  s.out.push(
    failure === undefined
      ? {
          type: 'ConvergeTaskCalls',
          taskId: task.taskId,
          success: true,
          failureCode: undefined,
          retryable: false,
          message: undefined,
          outputs: flattenOutputs(task.outputs),
          failedCall: undefined,
          counters,
          retried: task.retried,
        }
      : {
          type: 'ConvergeTaskCalls',
          taskId: task.taskId,
          success: false,
          failureCode: failure.code,
          retryable: failure.retryable,
          message: failure.message,
          outputs: NO_OUTPUTS,
          failedCall: failure.failedCall,
          counters,
          retried: task.retried,
        },
  );
}
