// Translations between the Worker's pieces on the executor call path: worker config → dispatcher config,
// the task signal's abort reason → the dispatcher's cancel reason, executor failures → dispatcher
// failures, the JSON size of a call's value (what maxCollectedOutputBytes counts), the outcomes a
// Calls phase resolves with (CallPhaseOutcome, ../ports.ts), and
// the one log line of a task whose calls ran again.

import type { WorkerConfig } from '../../../kernel/config-types.js';
import {
  resolveDispatcherConfig,
  type CallFailure,
  type ConvergeTaskCalls,
  type DispatcherConfig,
  type RetrySummary,
  type TaskCancelReason,
} from '../core/dispatcher/index.js';
import { describeError, reportedRetryable } from '../../../kernel/errors.js';
import type { CallPhaseOutcome } from '../ports.js';
import type { ExecutorLinkEvent } from './executor-link.js';

/** The dispatcher settings of a deployment's `worker` section, and the config's `functions.retry`. */
export function dispatcherConfigFromWorker(
  w: WorkerConfig,
  functionRetry: DispatcherConfig['functionRetry'] = {},
): DispatcherConfig {
  return resolveDispatcherConfig({
    taskMaxInflightCalls: w.taskMaxInflightCalls,
    taskMaxCallAttempts: w.taskMaxCallAttempts,
    taskMaxPendingSubcalls: w.taskMaxPendingSubcalls,
    callDeadlineMs: w.callDeadlineMs,
    maxCollectedOutputBytes: w.maxCollectedOutputBytes,
    callRetry: w.callRetry,
    callPageRows: w.callPageRows,
    functionRetry,
  });
}

/** Which owner-decided end an aborted task signal stands for (the orchestrator names it in the reason). */
export function taskCancelReasonOf(reason: unknown): TaskCancelReason {
  const text =
    typeof reason === 'string'
      ? reason
      : reason instanceof Error || (typeof reason === 'object' && reason !== null && 'message' in reason)
        ? String((reason as { message: unknown }).message)
        : '';
  if (text.includes('WATCH_DISCONNECTED')) return 'WATCH_DISCONNECTED';
  if (text.includes('TIMED_OUT')) return 'TIMED_OUT';
  return 'CANCELLED';
}

/** Size of a call's JSON value (what maxCollectedOutputBytes counts), with no string built for scalars. */
export function jsonByteLength(value: unknown): number {
  if (value === null || value === undefined) return 4;
  switch (typeof value) {
    case 'boolean':
      return value ? 4 : 5;
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    default: {
      const json = JSON.stringify(value) as string | undefined;
      return json === undefined ? 4 : Buffer.byteLength(json);
    }
  }
}

export function toCallFailure(ev: Extract<ExecutorLinkEvent, { type: 'callFailed' }>): CallFailure {
  // A load failure (unknown function, syntax error, no default export) will fail every attempt alike.
  if (ev.kind === 'load') {
    return { kind: 'user', retryable: false, message: ev.code ? `${ev.code}: ${ev.message}` : ev.message };
  }
  return {
    kind: ev.kind,
    retryable: ev.retryable,
    message: ev.message,
    ...(ev.stack !== undefined ? { stack: ev.stack } : {}),
  };
}

// ---- Phase outcomes ----
//
// The outcomes ExecutorCallRunner (executor-call-runner.ts) resolves a Calls phase with, besides the
// dispatcher's own calls: a runner already closed, a failed streaming builder, and a converged phase.

/** A run asked of a closed runner: CANCELLED, retryable. */
export function closedRunnerOutcome(): CallPhaseOutcome {
  return {
    success: false,
    failureCode: 'CANCELLED',
    retryable: true,
    message: 'the executor call runner is closed',
    outputs: [],
  };
}

/** A streaming builder whose source failed: BUILDER_FAILED, retryable as the error says. */
export function builderFailedOutcome(error: unknown): CallPhaseOutcome {
  return {
    success: false,
    failureCode: 'BUILDER_FAILED',
    retryable: reportedRetryable(error) ?? false,
    message: `the streaming builder failed: ${describeError(error)}`,
    outputs: [],
  };
}

/** The outcome of a phase the dispatcher converged (ConvergeTaskCalls). */
export function convergedOutcome(cmd: ConvergeTaskCalls): CallPhaseOutcome {
  if (cmd.success) return { success: true, retryable: false, outputs: cmd.outputs };
  return {
    success: false,
    failureCode: cmd.failureCode ?? 'CALL_FAILED',
    retryable: cmd.retryable,
    message: cmd.message ?? 'the Calls phase failed',
    outputs: [],
  };
}

/**
 * The one log line of a task whose calls ran a second attempt (issue 31: after a 15 s pause, 8 calls ran
 * again with nothing saying why): how many, by failure kind, and the first failure in full.
 */
export function retryLogLine(
  taskId: string,
  r: RetrySummary,
): { readonly fields: Record<string, unknown>; readonly msg: string } {
  const kinds = Object.entries(r.byKind)
    .map(([kind, n]) => `${kind} ×${n}`)
    .join(', ');
  const { callId, function: fn, attempt, failure } = r.first;
  return {
    fields: { task_id: taskId, retried_attempts: r.attempts, by_kind: r.byKind, first_call_id: callId },
    msg:
      `${r.attempts} call attempt(s) of this task failed retryably and ran again (${kinds}); ` +
      `the first: call ${callId} (${fn}) attempt ${attempt}: ${failure.kind}: ${failure.message}`,
  };
}
