// Shared by test/process/worker-executor*.test.ts (not a test file itself): a real Worker (runWorker,
// in this process, real gRPC on 127.0.0.1:0) whose Calls phase is the real executor path
// (createExecutorPorts: dispatcher + ExecutorLink + a supervised executor child process run from src/
// under tsx), and gRPC helpers to submit and watch tasks.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createWorkerClient, unaryCall } from '../../src/grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../../src/grpc/convert.js';
import type { TaskUpdate } from '../../src/grpc/domain-types.js';
import type { WorkerServiceClient } from '../../src/grpc/proto.js';
import type {
  SubmitTaskResponseWireOut,
  TaskInputWire,
  TaskUpdateWireOut,
} from '../../src/grpc/wire-types.js';
import type { BlockxConfig, ExecutorConfig, WorkerConfig } from '../../src/kernel/config-types.js';
import { bootKernel } from '../../src/kernel/kernel.js';
import {
  createExecutorPorts,
  type ExecutorPorts,
} from '../../src/services/worker/adapters/executor-ports.js';
import { tsxExecutorCommand } from '../../src/services/worker/adapters/executor-supervisor.js';
import type { WorkerLogger } from '../../src/services/worker/adapters/worker-logger.js';
import { runWorker, type RunningWorker } from '../../src/services/worker/app/run-worker.js';

export const REPO = path.resolve(import.meta.dirname, '../..');
const CONFIG = path.join(REPO, 'blockx.config.yaml');

/** A temp functions folder with the repo's hello_world.ts plus the given `name → source` files. */
/** A function that sleeps `ms` and rejects with the task's abort reason when cancelled. */
export const SLEEPY = `export default (ctx, ms) => new Promise((resolve, reject) => {
  const t = setTimeout(() => resolve('slept ' + ms), ms);
  ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(ctx.signal.reason); });
});\n`;

export function makeFunctionsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bx-wexec-fn-'));
  writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
  copyFileSync(path.join(REPO, 'functions/hello_world.ts'), path.join(dir, 'hello_world.ts'));
  for (const [name, source] of Object.entries(files)) writeFileSync(path.join(dir, name), source);
  return dir;
}

export interface WorkerWithExecutor {
  readonly worker: RunningWorker;
  readonly ports: ExecutorPorts;
  readonly client: WorkerServiceClient;
  readonly config: BlockxConfig;
  /** Log lines of the worker and its executor (for failure messages). */
  readonly logs: string[];
  close(): Promise<void>;
}

export interface StartOptions {
  readonly functionsDir: string;
  readonly worker?: Partial<WorkerConfig>;
  readonly executor?: Partial<ExecutorConfig>;
}

function collectingLogger(lines: string[]): WorkerLogger {
  const at =
    (level: string) =>
    (obj: Record<string, unknown>, msg: string): void => {
      lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
    };
  return { debug: () => undefined, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Boots the kernel from the repo config (deployment `block`), starts the executor and the worker. */
export async function startWorkerWithExecutor(opts: StartOptions): Promise<WorkerWithExecutor> {
  const kernel = await bootKernel({
    configPath: CONFIG,
    cwd: REPO,
    env: { BLOCKX_FUNCTIONS_DIR: opts.functionsDir, BLOCKX_LOG_LEVEL: 'warn' },
    deployments: ['block'],
  });
  const base = kernel.config;
  const dep = base.deployments.block!;
  const config: BlockxConfig = {
    ...base,
    deployments: {
      ...base.deployments,
      block: {
        ...dep,
        worker: { ...dep.worker, ...opts.worker },
        executor: { ...dep.executor, heartbeatIntervalMs: 100, ...opts.executor },
      },
    },
  };
  const logs: string[] = [];
  const logger = collectingLogger(logs);
  const ports = createExecutorPorts({
    config,
    deployment: 'block',
    functionsDir: opts.functionsDir,
    executorCommand: tsxExecutorCommand(),
    logger,
  });
  await ports.start();
  let worker: RunningWorker | undefined;
  try {
    worker = await runWorker({
      config,
      deployment: 'block',
      plugins: kernel.plugins,
      callRunner: ports.callRunner,
      codeEpochs: ports.codeEpochs,
      executorReadiness: ports.executorReadiness,
      listen: '127.0.0.1:0',
      logger,
      shutdownGraceMs: 200,
    });
    await withTimeout(ports.whenReady(), 30_000, 'executor ready');
  } catch (err) {
    await worker?.close();
    await ports.close();
    throw err;
  }
  const client = createWorkerClient(worker.address);
  const running = worker;
  return {
    worker: running,
    ports,
    client,
    config,
    logs,
    close: async () => {
      client.close();
      await running.close();
      await ports.close();
    },
  };
}

/** Last resort for afterAll: the executor child must not outlive the test file. */
export function killExecutor(w: WorkerWithExecutor | undefined): void {
  const pid = w?.ports.supervisor.pid;
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
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

/** Polls `check` every 10 ms until it holds (process tests only; bounded by `ms`). */
export async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
