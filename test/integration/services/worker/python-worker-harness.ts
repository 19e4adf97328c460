// Shared by python-worker.test.ts (not a test file itself): a real Worker (runWorker, in this process,
// real gRPC on 127.0.0.1:0) whose Calls phase is createExecutorPorts with both executors (the JS one
// from src/ under tsx, the Python one from src/executor/python), and whose task IO scopes read a SQLite
// file through the task read cache.
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
} from '../../../../src/services/worker/adapters/executor-ports.js';
import { tsxExecutorCommand } from '../../../../src/services/worker/adapters/executor-supervisor.js';
import type { WorkerLogger } from '../../../../src/services/worker/adapters/worker-logger.js';
import { runWorker, type RunningWorker } from '../../../../src/services/worker/app/run-worker.js';
import {
  startStorageRuntime,
  type StorageRuntime,
} from '../../../../src/services/worker/app/storage-runtime.js';
import { REPO, withTimeout } from '../../../support/worker-tasks.js';

export interface PythonWorker {
  readonly worker: RunningWorker;
  readonly ports: ExecutorPorts;
  readonly client: WorkerServiceClient;
  readonly storage: StorageRuntime;
  readonly factory: StorageIoScopeFactory;
  /** Log lines of the worker and both executors (for assertions and failure messages). */
  readonly logs: string[];
  close(): Promise<void>;
}

export interface PythonWorkerOptions {
  readonly functionsDir: string;
  readonly worker?: Partial<WorkerConfig>;
  readonly executor?: Partial<ExecutorConfig>;
}

export function collectingLogger(lines: string[]): WorkerLogger {
  const at =
    (level: string) =>
    (obj: Record<string, unknown>, msg: string): void => {
      lines.push(`${level} ${msg} ${JSON.stringify(obj)}`);
    };
  return { debug: () => undefined, info: at('info'), warn: at('warn'), error: at('error') };
}

/** The repo config (deployment `block`) on a fresh SQLite file, with faster executor heartbeats. */
export function pythonWorkerConfig(opts: PythonWorkerOptions, dbDir: string): BlockxConfig {
  const base = loadConfig({
    configPath: path.join(REPO, 'blockx.config.yaml'),
    cwd: REPO,
    env: {
      BLOCKX_STORAGE_URL: `sqlite:${path.join(dbDir, 'blockx.db')}`,
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

export async function startPythonWorker(opts: PythonWorkerOptions): Promise<PythonWorker> {
  const dbDir = mkdtempSync(path.join(tmpdir(), 'bx-pyw-db-'));
  const config = pythonWorkerConfig(opts, dbDir);
  const logs: string[] = [];
  const logger = collectingLogger(logs);
  const storage = await startStorageRuntime({ config, logger });
  const factory = storage.scopesForWorker();
  const kernel = await bootKernelWithConfig(config);
  const ports = createExecutorPorts({
    config,
    deployment: 'block',
    functionsDir: opts.functionsDir,
    executorCommand: tsxExecutorCommand(),
    io: factory.callIoHandler,
    logger,
  });
  let worker: RunningWorker | undefined;
  try {
    await ports.start();
    worker = await runWorker({
      config,
      deployment: 'block',
      plugins: kernel.plugins,
      ioScopes: factory,
      callRunner: ports.callRunner,
      codeEpochs: ports.codeEpochs,
      executorReadiness: ports.executorReadiness,
      listen: '127.0.0.1:0',
      logger,
      shutdownGraceMs: 200,
    });
    await withTimeout(ports.whenReady(), 30_000, `both executors ready:\n${logs.join('\n')}`);
  } catch (err) {
    await worker?.close();
    await ports.close();
    await storage.close();
    rmSync(dbDir, { recursive: true, force: true });
    throw err;
  }
  const client = createWorkerClient(worker.address);
  const running = worker;
  return {
    worker: running,
    ports,
    client,
    storage,
    factory,
    logs,
    close: async () => {
      client.close();
      await running.close();
      await ports.close();
      await storage.close();
      rmSync(dbDir, { recursive: true, force: true });
    },
  };
}

/** Last resort for afterAll: neither executor may outlive the test file. */
export function killExecutors(w: PythonWorker | undefined): void {
  for (const pid of [w?.ports.supervisor.pid, w?.ports.pythonSupervisor?.pid]) {
    if (pid === undefined) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}
