// The first, minimal client API, kept for its callers (`blockx up`'s demo): thin wrappers over
// BlockxClient (./client.ts), which has the full reserve → submit → watch path and its retry semantics.
import { randomUUID } from 'node:crypto';
import type { TaskInput, TaskUpdate } from '../grpc/domain-types.js';
import type { TlsPem } from '../kernel/tls-files.js';
import { BlockxClient } from './client.js';

export interface RunTaskOptions {
  readonly coordinator: string;
  /** The coordinator's slot TTL: how long to wait after Aborted before retrying. Default 5000. */
  readonly slotTtlMs?: number;
  /** Give up reserving after this many attempts. Default 20. */
  readonly maxReserveAttempts?: number;
  /** Per-RPC deadline. Default 10000. */
  readonly rpcTimeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Mutual TLS (BlockxClientOptions.tls). */
  readonly tls?: TlsPem;
}

export interface TaskOutcome {
  readonly taskId: string;
  readonly workerAddr: string;
  readonly update: TaskUpdate;
}

export function newTaskId(): string {
  return randomUUID();
}

/** Reserve → submit → watch with a one-off client; resolves with the terminal update. */
export async function runTask(task: TaskInput, opts: RunTaskOptions): Promise<TaskOutcome> {
  const client = new BlockxClient({
    coordinator: opts.coordinator,
    ...(opts.slotTtlMs !== undefined ? { slotTtlMs: opts.slotTtlMs } : {}),
    ...(opts.maxReserveAttempts !== undefined ? { maxReserveAttempts: opts.maxReserveAttempts } : {}),
    ...(opts.rpcTimeoutMs !== undefined ? { rpcTimeoutMs: opts.rpcTimeoutMs } : {}),
    ...(opts.tls !== undefined ? { tls: opts.tls } : {}),
  });
  try {
    const result = await client.run(task, opts.signal ? { signal: opts.signal } : {});
    return { taskId: result.taskId, workerAddr: result.workerAddr, update: result.update };
  } finally {
    client.close();
  }
}
