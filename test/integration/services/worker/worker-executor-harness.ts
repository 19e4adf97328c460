// Shared by test/integration/services/worker/worker-executor*.test.ts (not a test file itself): a real
// Worker (runWorker, in this process, real gRPC on 127.0.0.1:0) whose Calls phase is the real executor
// path (createExecutorPorts: dispatcher + ExecutorLink + a supervised executor child process run from
// src/ under tsx). The gRPC helpers to submit and watch tasks are in test/support/worker-tasks.ts.
import path from 'node:path';
import { createWorkerClient } from '../../../../src/grpc/clients.js';
import type { WorkerServiceClient } from '../../../../src/grpc/proto.js';
import type { BlockxConfig, ExecutorConfig, WorkerConfig } from '../../../../src/kernel/config-types.js';
import { bootKernel } from '../../../../src/kernel/kernel.js';
import {
  createExecutorPorts,
  type ExecutorPorts,
} from '../../../../src/services/worker/adapters/executor-ports.js';
import { tsxExecutorCommand } from '../../../../src/services/worker/adapters/executor-supervisor.js';
import type { WorkerLogger } from '../../../../src/services/worker/adapters/worker-logger.js';
import { runWorker, type RunningWorker } from '../../../../src/services/worker/app/run-worker.js';
import { REPO, withTimeout } from '../../../support/worker-tasks.js';

const CONFIG = path.join(REPO, 'blockx.config.yaml');

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
