// Task progress events fed back by the orchestrator: activation prepared / failed, and the end of each
// execution phase. The core decides the next phase or the terminal state; the adapter only executes.
//
//   Preparing --activation prepared--> Builder --ok--> Calls --ok--> Plugin --ok--> SUCCEEDED
//       |  (slot ALLOCATED → RUNNING)      |             |               |
//       +--activation failed--+           fail          fail            fail --> FAILED
//   (Builder also accepts activation failed: the IO scope is created after the epoch is pinned.)
//
// Late or out-of-order events (the task already converged, or moved on) are ignored and reported.

import type { WorkerCommand } from './commands.js';
import { convergeTask, failed, succeeded } from './convergence.js';
import type { CoreState } from './core-state.js';
import { FailureCode } from './errors.js';
import { SlotState } from './slot-table.js';
import { APPLIED, IgnoredReason, ignored, type Applied, type PhaseOutcome, type Step } from './step.js';
import type { TaskRecord } from './task-table.js';
import { TaskPhase, type CodeEpoch, type ExecutionPhase, type PluginResult } from './types.js';

export type ActivationFailureCode = typeof FailureCode.ACTIVATION_FAILED | typeof FailureCode.IO_SCOPE_FAILED;

/** The active task `taskId`, or why an event about it is ignored. */
export function activeTaskOrIgnored(s: CoreState, taskId: string, now: number): TaskRecord | Applied {
  const task = s.tasks.get(taskId);
  if (task !== undefined) return task;
  if (s.results.get(taskId, now) !== undefined) {
    return ignored(IgnoredReason.TaskTerminal, `task ${taskId} already converged`);
  }
  return ignored(IgnoredReason.TaskNotActive, `task ${taskId} is not active`);
}

function skip(result: Applied): Step<Applied> {
  return { result, commands: [] };
}

function phaseMismatch(task: TaskRecord, expected: string): Step<Applied> {
  return skip(
    ignored(IgnoredReason.PhaseMismatch, `task ${task.taskId} is in phase ${task.phase}, not ${expected}`),
  );
}

export function activationPrepared(
  s: CoreState,
  taskId: string,
  codeEpoch: CodeEpoch,
  now: number,
): Step<Applied> {
  const task = activeTaskOrIgnored(s, taskId, now);
  if ('applied' in task) return skip(task);
  if (task.phase !== TaskPhase.Preparing) return phaseMismatch(task, TaskPhase.Preparing);
  const slot = s.slots.get(task.slotId);
  if (slot === undefined || slot.state !== SlotState.ALLOCATED) {
    throw new Error(
      `activationPrepared: task ${taskId} is Preparing but its slot ${task.slotId} is not ALLOCATED`,
    );
  }
  s.slots.markRunning(slot);
  task.phase = TaskPhase.Builder;
  task.codeEpoch = codeEpoch;
  const commands: WorkerCommand[] = [
    {
      type: 'StartBuilderPhase',
      taskId,
      codeEpoch,
      functionCallConfig: task.input.functionCallConfig,
      deadlineMs: task.deadlineMs,
    },
  ];
  return { result: APPLIED, commands };
}

export function activationFailed(
  s: CoreState,
  taskId: string,
  code: ActivationFailureCode,
  message: string,
  now: number,
): Step<Applied> {
  const task = activeTaskOrIgnored(s, taskId, now);
  if ('applied' in task) return skip(task);
  if (task.phase !== TaskPhase.Preparing && task.phase !== TaskPhase.Builder) {
    return phaseMismatch(task, 'Preparing or Builder');
  }
  const commands: WorkerCommand[] = [];
  convergeTask(s, task, failed(code, message), now, commands);
  return { result: APPLIED, commands };
}

function isExecutionPhase(phase: unknown): phase is ExecutionPhase {
  return phase === TaskPhase.Builder || phase === TaskPhase.Calls || phase === TaskPhase.Plugin;
}

function firstFailedPlugin(results: readonly PluginResult[]): PluginResult | undefined {
  return results.find((r) => !r.success);
}

export function phaseFinished<P extends ExecutionPhase>(
  s: CoreState,
  taskId: string,
  phase: P,
  outcome: PhaseOutcome<P>,
  now: number,
): Step<Applied> {
  const task = activeTaskOrIgnored(s, taskId, now);
  if ('applied' in task) return skip(task);
  if (!isExecutionPhase(phase)) return phaseMismatch(task, `an execution phase (got ${String(phase)})`);
  if (task.phase !== phase) return phaseMismatch(task, phase);
  const commands: WorkerCommand[] = [];

  if (!outcome.ok) {
    const { failureCode, message, retryable, pluginResults } = outcome;
    convergeTask(s, task, failed(failureCode, message, { retryable, pluginResults }), now, commands);
    return { result: APPLIED, commands };
  }

  const executed: ExecutionPhase = phase;
  switch (executed) {
    case TaskPhase.Builder: {
      const { calls } = outcome as PhaseOutcome<'Builder'> & { ok: true };
      // docs/task-lifecycle.md: the deadline is checked before entering Calls; if it passed, converge as TIMED_OUT
      // without starting the call phase (and so without taking an executor slot).
      if (task.deadlineMs <= now) {
        const message = `task deadline passed before the Calls phase (timeout ${task.timeoutMs} ms)`;
        convergeTask(s, task, failed(FailureCode.TIMED_OUT, message), now, commands);
        break;
      }
      task.phase = TaskPhase.Calls;
      commands.push({ type: 'StartCallPhase', taskId, calls, deadlineMs: task.deadlineMs });
      break;
    }
    case TaskPhase.Calls: {
      const { outputs } = outcome as PhaseOutcome<'Calls'> & { ok: true };
      task.phase = TaskPhase.Plugin;
      commands.push({
        type: 'StartWriterPhase',
        taskId,
        resultHandler: task.input.resultHandler,
        outputs,
        deadlineMs: task.deadlineMs,
      });
      break;
    }
    case TaskPhase.Plugin: {
      const { pluginResults } = outcome as PhaseOutcome<'Plugin'> & { ok: true };
      // A writer that reports a failed result without throwing still fails the task: a SUCCEEDED task
      // with a failed plugin result would contradict itself.
      const bad = firstFailedPlugin(pluginResults);
      const terminal =
        bad === undefined
          ? succeeded(pluginResults)
          : failed(FailureCode.PLUGIN_FAILED, bad.failureMessage || `plugin ${bad.pluginName} failed`, {
              pluginResults,
            });
      convergeTask(s, task, terminal, now, commands);
      break;
    }
    default: {
      const unreachable: never = executed;
      throw new Error(`phaseFinished: unknown phase ${String(unreachable)}`);
    }
  }
  return { result: APPLIED, commands };
}
