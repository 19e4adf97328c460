// Convergence: the single way a task leaves the active table (docs/task-lifecycle.md § Results and
// retention). In one step it writes the terminal result, retains it for `resultRetentionMs`, returns the slot
// to FREE, drops the task's timers, and emits `[CancelTaskCalls?] ConvergeTask NotifyTerminal [Drained?]`.

import type { WorkerCommand } from './commands.js';
import { maybeDrained, type CoreState } from './core-state.js';
import { resolveRetryable, type FailureCode } from './errors.js';
import type { TaskRecord } from './task-table.js';
import { TaskPhase, TaskState, type PluginResult, type TaskResult, type TerminalTaskState } from './types.js';

export interface TerminalOutcome {
  readonly state: TerminalTaskState;
  readonly result: TaskResult;
}

export function succeeded(pluginResults: readonly PluginResult[]): TerminalOutcome {
  return {
    state: TaskState.SUCCEEDED,
    result: {
      success: true,
      executeResult: {
        failureCode: '',
        retryable: false,
        pluginResults: [...pluginResults],
        failureMessage: '',
      },
    },
  };
}

/** A FAILED outcome; `retryable` is decided by the code's rule (errors.ts), given the reported flag. */
export function failed(
  failureCode: FailureCode,
  message: string,
  options: { retryable?: boolean; pluginResults?: readonly PluginResult[] } = {},
): TerminalOutcome {
  return {
    state: TaskState.FAILED,
    result: {
      success: false,
      executeResult: {
        failureCode,
        retryable: resolveRetryable(failureCode, options.retryable),
        pluginResults: [...(options.pluginResults ?? [])],
        failureMessage: message,
      },
    },
  };
}

/**
 * Converges `task`. `forced` marks a convergence decided by the core (timeout, watch disconnect) rather
 * than by the phase finishing: if the task is in its Calls phase, its in-flight calls must be cancelled.
 */
export function convergeTask(
  s: CoreState,
  task: TaskRecord,
  outcome: TerminalOutcome,
  now: number,
  commands: WorkerCommand[],
  forced = false,
): void {
  if (forced && task.phase === TaskPhase.Calls) {
    const code = outcome.result.executeResult.failureCode;
    if (code !== '') commands.push({ type: 'CancelTaskCalls', taskId: task.taskId, reason: code });
  }
  const fromPhase = task.phase;
  // Every result says which code ran it (docs/functions-deploy.md): the epoch pinned at activation.
  const result: TaskResult =
    task.codeEpoch === undefined
      ? outcome.result
      : { ...outcome.result, codeVersion: String(task.codeEpoch) };
  s.tasks.delete(task.taskId);
  s.watches.clearGrace(task.taskId);
  s.slots.release(task.slotId);
  const retainedUntilMs = now + s.config.resultRetentionMs;
  s.results.put({
    taskId: task.taskId,
    state: outcome.state,
    result,
    convergedAtMs: now,
    retainedUntilMs,
    ...(task.client === undefined ? {} : { client: task.client }),
  });
  commands.push({
    type: 'ConvergeTask',
    taskId: task.taskId,
    slotId: task.slotId,
    state: outcome.state,
    result,
    fromPhase,
    slotReleased: true,
    retainedUntilMs,
  });
  commands.push({
    type: 'NotifyTerminal',
    taskId: task.taskId,
    state: outcome.state,
    result,
  });
  maybeDrained(s, commands);
}
