// A Worker assembled as `blockx worker` assembles it, for benches: storage opened and migrated
// (startStorageRuntime), task IO scopes over it, the real Executor child (startExecutorRuntime, its
// `ctx.io` served by the scopes' callIoHandler; the built executor when dist/ exists), and runWorker on
// 127.0.0.1:0 with the config's plugins.
// Adds what a bench needs to look inside: the IO factory's stats and each task's phase timings.
//
//   const w = await startPipelineWorker(config);   ...   await w.submitAndWatch(task);   await w.close();
//
// `executorCpuProfDir` runs the Executor from src/ under `node --cpu-prof` instead (profiling only: the
// profile is written when the executor stops, i.e. at close()).
import type { TaskInput, TaskUpdate } from '../../src/grpc/domain-types.js';
import { createWorkerClient } from '../../src/grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../../src/grpc/convert.js';
import type { WorkerServiceClient } from '../../src/grpc/proto.js';
import type { TaskUpdateWireOut } from '../../src/grpc/wire-types.js';
import type { BlockxConfig } from '../../src/kernel/config-types.js';
import { bootKernelWithConfig } from '../../src/kernel/kernel.js';
import type { StorageIoScopeFactory } from '../../src/services/worker/adapters/io/index.js';
import type { PhaseName } from '../../src/services/worker/adapters/orchestration/orchestrator.js';
import type { ServiceLogger } from '../../src/kernel/observability/service-logger.js';
import { createExecutorPorts } from '../../src/services/call-host/adapters/executor-ports.js';
import {
  defaultExecutorCommand,
  tsxExecutorCommand,
} from '../../src/services/call-host/adapters/executor-supervisor.js';
import {
  startExecutorRuntime,
  type ExecutorRuntimeHandle,
} from '../../src/services/worker/app/executor-runtime.js';
import { runWorker, type RunningWorker } from '../../src/services/worker/app/run-worker.js';
import { startStorageRuntime, type StorageRuntime } from '../../src/services/worker/app/storage-runtime.js';
import type { StorageBackend } from '../../src/services/storage/types.js';
import { BUILT } from './built.js';

export type PhaseTimes = Partial<Record<PhaseName, number>>;

export interface PipelineWorker {
  readonly address: string;
  readonly backend: StorageBackend;
  readonly io: StorageIoScopeFactory;
  readonly worker: RunningWorker;
  /** SubmitTask (no slot_id) then WatchTasks until the terminal update, which it resolves with. */
  submitAndWatch(task: TaskInput): Promise<TaskUpdate>;
  /** The phases of a finished task, in ms (admission wait included), as the orchestrator reported them. */
  phasesOf(taskId: string): PhaseTimes;
  /** Stops the worker, then the executor, then storage. Idempotent. */
  close(): Promise<void>;
}

/** Warnings and errors to stderr as JSON lines; the rest is dropped (it would disturb the timings). */
export const stderrLogger: ServiceLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (obj, msg) => void process.stderr.write(`${JSON.stringify({ level: 'warn', msg, ...obj })}\n`),
  error: (obj, msg) => void process.stderr.write(`${JSON.stringify({ level: 'error', msg, ...obj })}\n`),
};

export async function startPipelineWorker(
  config: BlockxConfig,
  opts: {
    readonly deployment?: string;
    readonly logger?: ServiceLogger;
    readonly executorCpuProfDir?: string;
  } = {},
): Promise<PipelineWorker> {
  const deployment = opts.deployment ?? 'block';
  const logger = opts.logger ?? stderrLogger;
  const kernel = await bootKernelWithConfig(config);
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    const storage: StorageRuntime = await startStorageRuntime({ config, logger });
    stops.push(() => storage.close());
    const io = storage.scopesForWorker();
    const executor =
      opts.executorCpuProfDir === undefined
        ? await startExecutorRuntime({
            config,
            deployment,
            logger,
            io: io.callIoHandler,
            executorCommand: BUILT ? defaultExecutorCommand() : tsxExecutorCommand(),
          })
        : await profiledExecutor(config, deployment, logger, io, opts.executorCpuProfDir);
    stops.push(() => executor.close());
    const worker = await runWorker({
      config,
      deployment,
      plugins: kernel.plugins,
      listen: '127.0.0.1:0',
      logger,
      callRunner: executor.callRunner,
      executorReadiness: executor.executorReadiness,
      codeEpochs: executor.codeEpochs,
      ioScopes: io,
    });
    stops.push(() => worker.close());
    if (!(await executor.whenReady(30_000))) throw new Error('executor not ready after 30 s');

    const phases = new Map<string, PhaseTimes>();
    worker.orchestrator.addListener({
      onPhaseFinished: (t) => {
        const times = phases.get(t.taskId) ?? {};
        times[t.phase] = (times[t.phase] ?? 0) + t.durationMs;
        phases.set(t.taskId, times);
      },
    });
    const client = createWorkerClient(worker.address);
    stops.push(async () => client.close());
    let closing: Promise<void> | undefined;
    return {
      address: worker.address,
      backend: storage.backend,
      io,
      worker,
      submitAndWatch: (task) => submitAndWatch(client, task),
      phasesOf: (taskId) => phases.get(taskId) ?? {},
      close: () => (closing ??= stopAll()),
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/** startExecutorRuntime's assembly, with the executor child under `node --cpu-prof`. */
async function profiledExecutor(
  config: BlockxConfig,
  deployment: string,
  logger: ServiceLogger,
  io: StorageIoScopeFactory,
  profDir: string,
): Promise<ExecutorRuntimeHandle> {
  const [node, ...rest] = tsxExecutorCommand();
  // The profiled executor runs as this process's user (executor.user ''), so it can write into profDir
  // (as root, `auto` would run it as nobody: docs/security.md § Executors as their own user).
  const dep = config.deployments[deployment]!;
  const asSelf: BlockxConfig = {
    ...config,
    deployments: { ...config.deployments, [deployment]: { ...dep, executor: { ...dep.executor, user: '' } } },
  };
  const ports = createExecutorPorts({
    config: asSelf,
    deployment,
    logger,
    io: io.callIoHandler,
    executorCommand: [node as string, '--cpu-prof', `--cpu-prof-dir=${profDir}`, ...rest],
  });
  await ports.start();
  return {
    callRunner: ports.callRunner,
    executorReadiness: ports.executorReadiness,
    codeEpochs: ports.codeEpochs,
    whenReady: (timeoutMs) =>
      Promise.race([
        ports.whenReady().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref()),
      ]),
    close: () => ports.close(),
  };
}

function submitAndWatch(client: WorkerServiceClient, task: TaskInput): Promise<TaskUpdate> {
  return new Promise<TaskUpdate>((resolve, reject) => {
    client.submitTask({ task: taskInputToWire(task) }, (err) => {
      if (err) return reject(err);
      let terminal: TaskUpdate | undefined;
      const stream = client.watchTasks({ taskIds: [task.taskId] });
      stream.on('data', (wire: TaskUpdateWireOut) => {
        const update = taskUpdateFromWire(wire);
        if (update.isTerminal && terminal === undefined) {
          terminal = update;
          // The terminal update is the end of the task for its client; the stream's end is bookkeeping.
          resolve(update);
        }
      });
      stream.on('end', () => {
        if (terminal === undefined)
          reject(new Error(`task ${task.taskId}: watch ended without a terminal update`));
      });
      stream.on('error', (e: Error) => {
        if (terminal === undefined) reject(e);
      });
    });
  });
}
