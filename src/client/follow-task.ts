// Following one task to its terminal update (BlockxClient#run's last step, client.ts): WatchTasks on the
// Worker that accepted it, reopening the stream with exponential backoff when it breaks with UNAVAILABLE,
// at most `maxWatchAttempts` times (docs/retries.md).
import type { TaskUpdate } from '../grpc/domain-types.js';
import { BlockxClientError, ClientErrorCode, toClientError } from './errors.js';
import type { BackoffPolicy } from './reserve.js';
import { watchTaskUpdates, type WatchSource } from './watch.js';

export interface FollowOptions {
  readonly backoff: BackoffPolicy;
  /** Streams opened in all, the first included. */
  readonly maxWatchAttempts: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** WatchTasks until the task is terminal, reopening the stream when it breaks (bounded). */
export async function followToTerminal(
  worker: WatchSource,
  taskId: string,
  workerAddr: string,
  signal: AbortSignal,
  opts: FollowOptions,
): Promise<TaskUpdate> {
  let backoffMs = opts.backoff.initialMs;
  for (let attempt = 1; ; attempt++) {
    try {
      for await (const update of watchTaskUpdates(worker, [taskId], { address: workerAddr, signal })) {
        if (!update.isTerminal || update.taskId !== taskId) continue;
        if (update.error === 'not_found') {
          throw new BlockxClientError(
            ClientErrorCode.NOT_FOUND,
            `worker ${workerAddr} does not know task ${taskId} (its result expired or the worker restarted)`,
            { taskId, address: workerAddr, rpc: 'WatchTasks' },
          );
        }
        return update;
      }
      throw new BlockxClientError(
        ClientErrorCode.INTERNAL,
        `WatchTasks gave no terminal update for ${taskId}`,
      );
    } catch (err) {
      const error = toClientError(err, { rpc: 'WatchTasks', address: workerAddr, taskId });
      if (signal.aborted || error.code !== ClientErrorCode.UNAVAILABLE || attempt >= opts.maxWatchAttempts) {
        throw error.with({ taskId });
      }
      await opts.sleep(backoffMs, signal);
      backoffMs = Math.min(backoffMs * 2, opts.backoff.maxMs);
    }
  }
}
