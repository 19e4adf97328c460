// The outcomes ExecutorCallRunner (executor-call-runner.ts) resolves a Calls phase with, besides the
// dispatcher's own calls: a runner already closed, a failed streaming builder, and a converged phase.

import type { ConvergeTaskCalls } from '../core/dispatcher/index.js';
import { describeError, reportedRetryable } from '../../worker/adapters/phase-results.js';
import type { CallPhaseOutcome } from '../../worker/adapters/ports.js';

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
