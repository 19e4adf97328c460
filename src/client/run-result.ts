// A terminal TaskUpdate as the result run() resolves with. FAILED is a result, not an error: its failure
// code, message and retryable flag come from the Worker's ExecuteResult (or the update's error when the
// task never produced one).
import type { TaskUpdate } from '../grpc/domain-types.js';
import type { TaskRunResult } from './types.js';

export function runResultOf(
  update: TaskUpdate,
  workerAddr: string,
  attempts: number,
  durationMs: number,
): TaskRunResult {
  const ex = update.result?.executeResult;
  const success = update.state === 'SUCCEEDED';
  return {
    taskId: update.taskId,
    workerAddr: update.workerAddr || workerAddr,
    state: success ? 'SUCCEEDED' : 'FAILED',
    success,
    failureCode: success ? '' : ex?.failureCode || update.error || 'UNKNOWN',
    failureMessage: ex?.failureMessage ?? '',
    retryable: ex?.retryable ?? false,
    pluginResults: ex?.pluginResults ?? [],
    codeVersion: update.result?.codeVersion ?? '',
    update,
    attempts,
    durationMs,
  };
}
