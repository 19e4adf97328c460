// Tier-neutral helpers for tests that talk to a real Worker over gRPC (test/integration, test/process):
// a temp functions folder, CallList tasks, SubmitTask and WatchTasks with bounds. Not a test file.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { unaryCall } from '../../src/grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../../src/grpc/convert.js';
import type { TaskUpdate } from '../../src/grpc/domain-types.js';
import type { WorkerServiceClient } from '../../src/grpc/proto.js';
import type {
  SubmitTaskResponseWireOut,
  TaskInputWire,
  TaskUpdateWireOut,
} from '../../src/grpc/wire-types.js';

export const REPO = path.resolve(import.meta.dirname, '../..');

/** A function that sleeps `ms` and rejects with the task's abort reason when cancelled. */
export const SLEEPY = `export default (ctx, ms) => new Promise((resolve, reject) => {
  const t = setTimeout(() => resolve('slept ' + ms), ms);
  ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(ctx.signal.reason); });
});\n`;

/** A temp functions folder with the repo's hello_world.ts plus the given `name → source` files. */
export function makeFunctionsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bx-wexec-fn-'));
  writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
  copyFileSync(path.join(REPO, 'functions/hello_world.ts'), path.join(dir, 'hello_world.ts'));
  for (const [name, source] of Object.entries(files)) writeFileSync(path.join(dir, name), source);
  return dir;
}

export function removeDir(dir: string): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

export function callListTask(
  taskId: string,
  fn: string,
  callList: unknown[][],
  taskTimeoutMs = 60_000,
): TaskInputWire {
  return taskInputToWire({
    taskId,
    functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList } },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    taskTimeoutMs,
  });
}

export function submit(c: WorkerServiceClient, task: TaskInputWire): Promise<SubmitTaskResponseWireOut> {
  return unaryCall<SubmitTaskResponseWireOut>((md, o, cb) => c.submitTask({ task, slotId: '' }, md, o, cb), {
    timeoutMs: 10_000,
  });
}

/** Watches `taskIds` until the server ends the stream (every task terminal); rejects after `timeoutMs`. */
export function watchAll(
  c: WorkerServiceClient,
  taskIds: string[],
  timeoutMs = 60_000,
): Promise<TaskUpdate[]> {
  return withTimeout(
    new Promise((resolve, reject) => {
      const updates: TaskUpdate[] = [];
      const stream = c.watchTasks({ taskIds });
      stream.on('data', (u: TaskUpdateWireOut) => updates.push(taskUpdateFromWire(u)));
      stream.on('end', () => resolve(updates));
      stream.on('error', reject);
    }),
    timeoutMs,
    `terminal updates of ${taskIds.join(', ')}`,
  );
}

/** The terminal update of one task (with the time it arrived, performance.now()). */
export async function terminalOf(
  c: WorkerServiceClient,
  taskId: string,
  timeoutMs = 60_000,
): Promise<TaskUpdate & { readonly arrivedAt: number }> {
  const updates = await watchAll(c, [taskId], timeoutMs);
  const last = updates.at(-1);
  if (last === undefined || !last.isTerminal) throw new Error(`no terminal update for ${taskId}`);
  return { ...last, arrivedAt: performance.now() };
}

/** The ReturnValueResultHandler's result (the outputs array) of a terminal update. */
export function outputsOf(update: TaskUpdate): unknown {
  return update.result?.executeResult.pluginResults[0]?.result;
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
