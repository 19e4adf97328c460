// Running many tasks through one client with bounded concurrency: at most `concurrency` tasks are
// between reserve and their terminal update at any time. Each task settles as a result (SUCCEEDED or
// FAILED) or as the BlockxClientError that stopped it; one task's error never stops the others. When
// `signal` aborts, no new task starts; the ones not started settle as CANCELLED without any call.
import { setMaxListeners } from 'node:events';
import { BlockxClientError, ClientErrorCode, toClientError } from './errors.js';
import type { ClientTaskInput, TaskRunResult } from './types.js';

export type RunManyOutcome =
  | { readonly ok: true; readonly index: number; readonly result: TaskRunResult }
  | {
      readonly ok: false;
      readonly index: number;
      readonly taskId: string;
      readonly error: BlockxClientError;
    };

export interface RunManyOptions {
  readonly concurrency: number;
  readonly signal?: AbortSignal;
  /** A task is about to be placed. */
  readonly onStart?: (index: number) => void;
  /** A task settled (called in completion order). */
  readonly onSettled?: (outcome: RunManyOutcome) => void;
}

/** The tasks must carry their task ids (the outcome of a task that never ran names it). */
export async function runMany(
  client: { run(task: ClientTaskInput, opts?: { signal?: AbortSignal }): Promise<TaskRunResult> },
  tasks: readonly (ClientTaskInput & { readonly taskId: string })[],
  opts: RunManyOptions,
): Promise<RunManyOutcome[]> {
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
    throw new BlockxClientError(
      ClientErrorCode.INVALID_ARGUMENT,
      `concurrency must be a positive integer, got ${opts.concurrency}`,
    );
  }
  // Every task in flight listens to the signal (up to `concurrency` of them, 64 by default in `blockx
  // submit`): they listen to one of our own, linked to the caller's once, so Node's listener-leak warning
  // (more than 10 on one AbortSignal) neither fires nor needs the caller's signal changed.
  const linked = opts.signal === undefined ? undefined : new AbortController();
  const onAbort = (): void => linked?.abort(opts.signal?.reason);
  if (linked !== undefined) {
    setMaxListeners(0, linked.signal);
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
  }
  const signal = linked?.signal;
  const outcomes: RunManyOutcome[] = new Array(tasks.length);
  let next = 0;
  const settle = (outcome: RunManyOutcome): void => {
    outcomes[outcome.index] = outcome;
    opts.onSettled?.(outcome);
  };
  const lane = async (): Promise<void> => {
    for (;;) {
      const index = next++;
      const task = tasks[index];
      if (task === undefined) return;
      if (signal?.aborted) {
        settle({
          ok: false,
          index,
          taskId: task.taskId,
          error: new BlockxClientError(ClientErrorCode.CANCELLED, 'cancelled before it started', {
            taskId: task.taskId,
          }),
        });
        continue;
      }
      opts.onStart?.(index);
      try {
        const result = await client.run(task, signal ? { signal } : {});
        settle({ ok: true, index, result });
      } catch (err) {
        settle({ ok: false, index, taskId: task.taskId, error: toClientError(err, { taskId: task.taskId }) });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(opts.concurrency, tasks.length) }, lane));
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  return outcomes;
}
