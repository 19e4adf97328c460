// The default Calls phase of a Worker process: the Sans-IO dispatcher driving a supervised Executor
// child over its Unix socket (executor-ports.ts). Shared by `blockx worker` and `blockx up`.
import type { BlockxConfig } from '../../../kernel/config-types.js';
import type { CallIoHandler } from '../adapters/executor-call-io.js';
import { createExecutorPorts } from '../adapters/executor-ports.js';
import { tsxExecutorCommand } from '../adapters/executor-supervisor.js';
import type { CallPhaseRunner, CodeEpochSource, ExecutorReadiness } from '../adapters/ports.js';
import type { WorkerLogger } from '../adapters/worker-logger.js';

export interface ExecutorRuntimeHandle {
  readonly callRunner: CallPhaseRunner;
  readonly executorReadiness: ExecutorReadiness;
  readonly codeEpochs: CodeEpochSource;
  /** Resolves at the Executor's first heartbeat, or after `timeoutMs` (false: not ready yet). */
  whenReady(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export async function startExecutorRuntime(ctx: {
  config: BlockxConfig;
  deployment: string;
  logger: WorkerLogger;
  /** Serves the functions' `ctx.io` reads (the task IO scopes' handler); default: no storage. */
  io?: CallIoHandler;
  /** The executor command without its flags; default: the built CLI, or src/ under tsx from src/. */
  executorCommand?: readonly string[];
}): Promise<ExecutorRuntimeHandle> {
  const ports = createExecutorPorts({
    config: ctx.config,
    deployment: ctx.deployment,
    functionsDir: ctx.config.functions.dir,
    logger: ctx.logger,
    ...(ctx.io ? { io: ctx.io } : {}),
    // Running from the TypeScript sources (tsx, tests): there may be no dist/ for `bin/blockx.js executor`.
    ...(ctx.executorCommand !== undefined
      ? { executorCommand: ctx.executorCommand }
      : import.meta.url.endsWith('.ts')
        ? { executorCommand: tsxExecutorCommand() }
        : {}),
  });
  await ports.start();
  return {
    callRunner: ports.callRunner,
    executorReadiness: ports.executorReadiness,
    codeEpochs: ports.codeEpochs,
    async whenReady(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<boolean>(
        (resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)),
      );
      try {
        return await Promise.race([ports.whenReady().then(() => true), timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => ports.close(),
  };
}
