// A WorkerService on a real gRPC server (127.0.0.1:0) with a real client, for the adapter tests that
// need one: grpc-server.test.ts (the status table of docs/task-lifecycle.md, watches) and
// grpc-input-bounds.test.ts. Not a test file itself.
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { createWorkerClient, unaryCall } from '../../../../../../src/grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../../../../../../src/grpc/convert.js';
import type { TaskUpdate } from '../../../../../../src/grpc/domain-types.js';
import type { WorkerServiceClient } from '../../../../../../src/grpc/proto.js';
import { businessCodeOf, statusCodeOf } from '../../../../../../src/grpc/status.js';
import type {
  GetTaskResultResponseWireOut,
  RequestTaskSlotResponseWireOut,
  SubmitTaskResponseWireOut,
  TaskInputWire,
  TaskUpdateWireOut,
} from '../../../../../../src/grpc/wire-types.js';
import { bootKernel, type Kernel } from '../../../../../../src/kernel/kernel.js';
import { ManualExecutorReadiness } from '../../../../../../src/services/call-host/index.js';
import { runWorker, type RunningWorker } from '../../../../../../src/services/worker/app/run-worker.js';
import { FakeCallRunner } from '../../../../../unit/services/worker/adapters/orchestration/harness.js';

export const REPO = path.resolve(import.meta.dirname, '../../../../../..');
const CONFIG = path.join(REPO, 'blockx.config.yaml');

export async function kernelWith(env: Record<string, string> = {}): Promise<Kernel> {
  return bootKernel({ configPath: CONFIG, env, deployments: ['block'] });
}

export function hello(taskId: string, extra: Partial<TaskInputWire> = {}): TaskInputWire {
  return {
    ...taskInputToWire({
      taskId,
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
      },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      taskTimeoutMs: 0,
    }),
    ...extra,
  };
}

export interface Fixture {
  worker: RunningWorker;
  client: WorkerServiceClient;
  runner: FakeCallRunner;
  readiness: ManualExecutorReadiness;
}

export async function startFixture(env: Record<string, string> = {}, ready = true): Promise<Fixture> {
  const kernel = await kernelWith(env);
  const runner = new FakeCallRunner('manual');
  const readiness = new ManualExecutorReadiness(ready);
  const worker = await runWorker({
    config: kernel.config,
    deployment: 'block',
    plugins: kernel.plugins,
    callRunner: runner,
    executorReadiness: readiness,
    listen: '127.0.0.1:0',
    shutdownGraceMs: 200,
  });
  return { worker, client: createWorkerClient(worker.address), runner, readiness };
}

export async function stopFixture(f: Fixture | undefined): Promise<void> {
  if (f === undefined) return;
  f.client.close();
  await f.worker.close();
}

export const submit = (c: WorkerServiceClient, task: TaskInputWire | null, slotId = '') =>
  unaryCall<SubmitTaskResponseWireOut>((md, o, cb) => c.submitTask({ task, slotId }, md, o, cb));
export const reserve = (c: WorkerServiceClient, taskId: string, ttlMs = 5_000) =>
  unaryCall<RequestTaskSlotResponseWireOut>((md, o, cb) => c.requestTaskSlot({ taskId, ttlMs }, md, o, cb));
export const getResult = (c: WorkerServiceClient, taskId: string) =>
  unaryCall<GetTaskResultResponseWireOut>((md, o, cb) => c.getTaskResult({ taskId }, md, o, cb));

export interface OpenWatch {
  readonly updates: TaskUpdate[];
  /** Resolves with every update once the server ends the stream. */
  readonly ended: Promise<TaskUpdate[]>;
  /** Resolves once `n` updates arrived (the snapshots, typically). */
  received(n: number): Promise<void>;
}

export function openWatch(c: WorkerServiceClient, taskIds: string[]): OpenWatch {
  const updates: TaskUpdate[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const stream = c.watchTasks({ taskIds });
  stream.on('data', (u: TaskUpdateWireOut) => {
    updates.push(taskUpdateFromWire(u));
    for (const w of waiters) if (updates.length >= w.n) w.resolve();
  });
  const ended = new Promise<TaskUpdate[]>((resolve, reject) => {
    stream.on('end', () => resolve(updates));
    stream.on('error', reject);
  });
  return {
    updates,
    ended,
    received: (n) =>
      updates.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
  };
}

/** All updates of one WatchTasks stream until the server ends it. */
export function watchAll(c: WorkerServiceClient, taskIds: string[]): Promise<TaskUpdate[]> {
  return openWatch(c, taskIds).ended;
}

/** Resolves with the rejection of `p` (fails if it resolves). */
export async function rejection(
  p: Promise<unknown>,
): Promise<{ code: grpc.status | undefined; business: string | undefined; message: string }> {
  try {
    await p;
  } catch (err) {
    return { code: statusCodeOf(err), business: businessCodeOf(err), message: (err as Error).message };
  }
  throw new Error('expected the call to fail');
}
