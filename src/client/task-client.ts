// The smallest complete client path: reserve a slot through a Coordinator, submit to the Worker it names,
// follow the task with WatchTasks to its terminal state. Retry semantics are the seeds':
//   Unavailable        → safe to retry at once (short pause, bounded attempts)
//   Aborted            → a slot may be held: wait one slot TTL, retry with the SAME task id
//   ResourceExhausted  → no capacity: back off exponentially, retry
// Everything else is final. The full client of the "client and submit UX" issue builds on this.
import { randomUUID } from 'node:crypto';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { createCoordinatorClient, createWorkerClient, unaryCall } from '../grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../grpc/convert.js';
import type { TaskInput, TaskUpdate } from '../grpc/domain-types.js';
import { statusCodeOf } from '../grpc/status.js';
import type {
  ReserveWorkerSlotResponseWireOut,
  SubmitTaskResponseWireOut,
  TaskUpdateWireOut,
} from '../grpc/wire-types.js';

export interface RunTaskOptions {
  readonly coordinator: string;
  /** The coordinator's slot TTL: how long to wait after Aborted before retrying. Default 5000. */
  readonly slotTtlMs?: number;
  /** Give up reserving after this many attempts. Default 20. */
  readonly maxReserveAttempts?: number;
  /** Per-RPC deadline. Default 10000. */
  readonly rpcTimeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface TaskOutcome {
  readonly taskId: string;
  readonly workerAddr: string;
  readonly update: TaskUpdate;
}

export function newTaskId(): string {
  return randomUUID();
}

/** Reserve → submit → watch; resolves with the terminal update. */
export async function runTask(task: TaskInput, opts: RunTaskOptions): Promise<TaskOutcome> {
  const coordinator = createCoordinatorClient(opts.coordinator);
  try {
    const reservation = await reserveWithRetry(coordinator, task.taskId, opts);
    const worker = createWorkerClient(reservation.workerAddr);
    try {
      await unaryCall<SubmitTaskResponseWireOut>(
        (md, o, cb) =>
          worker.submitTask({ task: taskInputToWire(task), slotId: reservation.slotId }, md, o, cb),
        { timeoutMs: opts.rpcTimeoutMs ?? 10_000, ...(opts.signal ? { signal: opts.signal } : {}) },
      );
      const update = await watchUntilTerminal(worker, task.taskId, opts.signal);
      return { taskId: task.taskId, workerAddr: reservation.workerAddr, update };
    } finally {
      worker.close();
    }
  } finally {
    coordinator.close();
  }
}

type CoordinatorClient = ReturnType<typeof createCoordinatorClient>;
type WorkerClient = ReturnType<typeof createWorkerClient>;

async function reserveWithRetry(
  client: CoordinatorClient,
  taskId: string,
  opts: RunTaskOptions,
): Promise<{ workerAddr: string; slotId: string }> {
  const attempts = opts.maxReserveAttempts ?? 20;
  let backoffMs = 50;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await unaryCall<ReserveWorkerSlotResponseWireOut>(
        (md, o, cb) => client.reserveWorkerSlot({ taskId }, md, o, cb),
        { timeoutMs: opts.rpcTimeoutMs ?? 10_000, ...(opts.signal ? { signal: opts.signal } : {}) },
      );
      return { workerAddr: res.workerAddr, slotId: res.slotId };
    } catch (err) {
      const code = statusCodeOf(err);
      if (attempt >= attempts || opts.signal?.aborted) throw err;
      if (code === GrpcStatus.UNAVAILABLE) await sleep(100, opts.signal);
      else if (code === GrpcStatus.ABORTED) await sleep(opts.slotTtlMs ?? 5000, opts.signal);
      else if (code === GrpcStatus.RESOURCE_EXHAUSTED) {
        await sleep(backoffMs, opts.signal);
        backoffMs = Math.min(backoffMs * 2, 2000);
      } else throw err;
    }
  }
}

function watchUntilTerminal(client: WorkerClient, taskId: string, signal?: AbortSignal): Promise<TaskUpdate> {
  return new Promise((resolve, reject) => {
    const stream = client.watchTasks({ taskIds: [taskId] });
    let settled = false;
    const onAbort = () => stream.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    stream.on('data', (wire: TaskUpdateWireOut) => {
      const update = taskUpdateFromWire(wire);
      if (update.isTerminal) {
        finish(() => resolve(update));
        stream.cancel();
      }
    });
    stream.on('error', (err) => finish(() => reject(err)));
    stream.on('end', () =>
      finish(() => reject(new Error(`WatchTasks for ${taskId} ended before a terminal update`))),
    );
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });
}
