// Shared by test/integration/services/worker/worker-executor*.test.ts and python-worker.test.ts (not a
// test file itself): a real Worker (runWorker, in this process, real gRPC on 127.0.0.1:0) whose Calls
// phase is the real executor path (createExecutorPorts: dispatcher + ExecutorLink + a supervised JS
// executor child run from src/ under tsx, plus the Python executor when the folder holds .py
// functions). With `storage: true` the task IO scopes read a fresh SQLite file through the task read
// cache. The gRPC helpers to submit and watch tasks are in test/support/worker-tasks.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createWorkerClient } from '../../../../src/grpc/clients.js';
import type { WorkerServiceClient } from '../../../../src/grpc/proto.js';
import { loadConfig } from '../../../../src/kernel/config.js';
import type { BlockxConfig, ExecutorConfig, WorkerConfig } from '../../../../src/kernel/config-types.js';
import { bootKernelWithConfig } from '../../../../src/kernel/kernel.js';
import type { StorageIoScopeFactory } from '../../../../src/services/worker/adapters/io/index.js';
import {
  createExecutorPorts,
  type ExecutorPorts,
} from '../../../../src/services/call-host/adapters/executor-ports.js';
import { tsxExecutorCommand } from '../../../../src/services/call-host/adapters/executor-supervisor.js';
import type { ServiceLogger } from '../../../../src/kernel/observability/service-logger.js';
import { runWorker, type RunningWorker } from '../../../../src/services/worker/app/run-worker.js';
import {
  startStorageRuntime,
  type StorageRuntime,
} from '../../../../src/services/worker/app/storage-runtime.js';
import { REPO, withTimeout } from '../../../support/worker-tasks.js';

export interface WorkerWithExecutor {
  readonly worker: RunningWorker;
  readonly ports: ExecutorPorts;
  readonly client: WorkerServiceClient;
  readonly config: BlockxConfig;
  /** Log lines of the worker and its executors (for assertions and failure messages). */
  readonly logs: string[];
  close(): Promise<void>;
}

/** A WorkerWithExecutor whose task IO reads a SQLite file (`storage: true`). */
export interface WorkerWithStorage extends WorkerWithExecutor {
  readonly storage: StorageRuntime;
  readonly factory: StorageIoScopeFactory;
}

export interface StartOptions {
  readonly functionsDir: string;
  readonly worker?: Partial<WorkerConfig>;
  readonly executor?: Partial<ExecutorConfig>;
}

export function collectingLogger(lines: string[]): ServiceLogger {
  const at =
    (level: string) =>
    (obj: Record<string, unknown>, msg: string): void => {
      lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
    };
  return { debug: () => undefined, info: at('info'), warn: at('warn'), error: at('error') };
}

/** The repo config (deployment `block`) with faster executor heartbeats; SQLite in `dbDir` if given. */
export function workerExecutorConfig(opts: StartOptions, dbDir?: string): BlockxConfig {
  const base = loadConfig({
    configPath: path.join(REPO, 'blockx.config.yaml'),
    cwd: REPO,
    env: {
      ...(dbDir === undefined ? {} : { BLOCKX_STORAGE_URL: `sqlite:${path.join(dbDir, 'blockx.db')}` }),
      BLOCKX_FUNCTIONS_DIR: opts.functionsDir,
      BLOCKX_LOG_LEVEL: 'warn',
    },
    deployments: ['block'],
  });
  const dep = base.deployments.block!;
  return {
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
}

export function startWorkerWithExecutor(opts: StartOptions & { storage: true }): Promise<WorkerWithStorage>;
export function startWorkerWithExecutor(
  opts: StartOptions & { storage?: false },
): Promise<WorkerWithExecutor>;
/** Starts the executor(s) and the worker; with `storage`, on a fresh SQLite file. */
export async function startWorkerWithExecutor(
  opts: StartOptions & { storage?: boolean },
): Promise<WorkerWithExecutor | WorkerWithStorage> {
  const dbDir = opts.storage === true ? mkdtempSync(path.join(tmpdir(), 'bx-wex-db-')) : undefined;
  const config = workerExecutorConfig(opts, dbDir);
  const logs: string[] = [];
  const logger = collectingLogger(logs);
  const storage = dbDir === undefined ? undefined : await startStorageRuntime({ config, logger });
  const factory = storage?.scopesForWorker();
  const kernel = await bootKernelWithConfig(config);
  const ports = createExecutorPorts({
    config,
    deployment: 'block',
    functionsDir: opts.functionsDir,
    executorCommand: tsxExecutorCommand(),
    ...(factory === undefined ? {} : { io: factory.callIoHandler }),
    logger,
  });
  const release = async (): Promise<void> => {
    await ports.close();
    await storage?.close();
    if (dbDir !== undefined) rmSync(dbDir, { recursive: true, force: true });
  };
  let worker: RunningWorker | undefined;
  try {
    await ports.start();
    worker = await runWorker({
      config,
      deployment: 'block',
      plugins: kernel.plugins,
      ...(factory === undefined ? {} : { ioScopes: factory }),
      callRunner: ports.callRunner,
      codeEpochs: ports.codeEpochs,
      executorReadiness: ports.executorReadiness,
      listen: '127.0.0.1:0',
      logger,
      shutdownGraceMs: 200,
    });
    await withTimeout(ports.whenReady(), 30_000, `executors ready:\n${logs.join('\n')}`);
  } catch (err) {
    await worker?.close();
    await release();
    throw err;
  }
  const client = createWorkerClient(worker.address);
  const running = worker;
  const close = async (): Promise<void> => {
    client.close();
    await running.close();
    await release();
  };
  const base = { worker: running, ports, client, config, logs, close };
  return storage === undefined || factory === undefined ? base : { ...base, storage, factory };
}

/** Last resort for afterAll: no executor child may outlive the test file. */
export function killExecutor(w: WorkerWithExecutor | undefined): void {
  for (const pid of [w?.ports.supervisor.pid, w?.ports.pythonSupervisor?.pid]) {
    if (pid === undefined) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
