// The real executor side of a Worker, as the orchestrator's ports (ports.ts):
//
//   createExecutorPorts({config, deployment, ...}) → {
//     callRunner         ExecutorCallRunner: dispatcher core + executor link
//     codeEpochs         pins of the FunctionCodeView over the functions directory
//     executorReadiness  ready on the executor's first heartbeat, lost when it dies or goes silent
//     start(), whenReady(), close()
//   }
//
// One ExecutorSupervisor per Worker: it listens on a Unix socket in a private 0700 directory made under
// `executor.socketDir` (or the OS temp dir) and removed on close, spawns `blockx executor --socket PATH`
// with a per-spawn secret and restarts it with backoff (docs/security.md, "The executor socket"). The code view feeds
// the link's DefineEpoch / RetireEpoch, so the executor runs exactly the epoch each task pinned.

import { tmpdir } from 'node:os';
import path from 'node:path';
import { FunctionCodeView } from '../../../executor/code-epochs.js';
import type { BlockxConfig } from '../../../kernel/config-types.js';
import { codeEpochsFromView, ManualExecutorReadiness } from './default-ports.js';
import { DeploymentUnknownError } from './errors.js';
import {
  ExecutorCallRunner,
  dispatcherConfigFromWorker,
  noStorageIoHandler,
  type CallIoHandler,
} from './executor-call-runner.js';
import type { ExecutorLinkEvent, WaitingRequest } from './executor-link.js';
import { ExecutorSupervisor } from './executor-supervisor.js';
import type { CodeEpochSource, ExecutorReadiness } from './ports.js';
import { silentWorkerLogger, type WorkerLogger } from './worker-logger.js';

export interface ExecutorPortsOptions {
  readonly config: BlockxConfig;
  /** The deployment whose `worker` (dispatcher) and `executor` sections apply. */
  readonly deployment: string;
  /** Function files. Default `config.functions.dir`. */
  readonly functionsDir?: string;
  readonly logger?: WorkerLogger;
  /** The executor command without its flags. Default `node <package>/bin/blockx.js executor`
   *  (needs `npm run build`); `tsxExecutorCommand()` runs it from src/. */
  readonly executorCommand?: readonly string[];
  /** IO reads of running calls. Default: fail with NO_STORAGE (not retryable). */
  readonly io?: CallIoHandler;
  /** Overrides `executor.socketDir` (and the OS temp dir fallback). */
  readonly socketDir?: string;
  /** Environment of the executor process. Default this process's. */
  readonly env?: NodeJS.ProcessEnv;
  /** Running calls per executor thread (executor default 256). */
  readonly maxCallsPerThread?: number;
}

export interface ExecutorPorts {
  readonly callRunner: ExecutorCallRunner;
  readonly codeEpochs: CodeEpochSource;
  readonly executorReadiness: ExecutorReadiness;
  readonly supervisor: ExecutorSupervisor;
  readonly codeView: FunctionCodeView;
  /** `<socketDir>/bx-XXXXXX/executor.sock`; known once `start()` has resolved. */
  readonly socketPath: string;
  /** Listen on the socket and spawn the executor. Resolves once listening (not once ready). */
  start(): Promise<void>;
  /** Resolves once an executor is ready. */
  whenReady(): Promise<void>;
  /** Cancel running Calls phases, stop the executor, remove the socket. Idempotent. */
  close(): Promise<void>;
}

const LOG_LEVELS = new Set(['debug', 'info', 'warn', 'error']);

/** Executor stderr lines are JSON log lines; re-log them through the Worker's logger. */
function forwardExecutorLog(logger: WorkerLogger): (line: string) => void {
  return (line) => {
    let entry: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed === 'object' && parsed !== null) entry = parsed as Record<string, unknown>;
    } catch {
      // not JSON: a stray write (a crash trace); keep it as is
    }
    if (entry === undefined) {
      logger.warn({ component: 'executor' }, line);
      return;
    }
    const { level, msg, time: _time, ...fields } = entry;
    const method = typeof level === 'string' && LOG_LEVELS.has(level) ? level : 'info';
    logger[method as 'info']({ component: 'executor', ...fields }, typeof msg === 'string' ? msg : line);
  };
}

export function createExecutorPorts(options: ExecutorPortsOptions): ExecutorPorts {
  const { config, deployment } = options;
  const dep = config.deployments[deployment];
  if (dep === undefined) throw new DeploymentUnknownError(deployment, Object.keys(config.deployments));
  const logger = options.logger ?? silentWorkerLogger;
  const ex = dep.executor;
  const functionsDir = options.functionsDir ?? config.functions.dir;
  const socketDir =
    options.socketDir ?? (ex.socketDir === '' ? tmpdir() : path.resolve(config.baseDir, ex.socketDir));

  const codeView = new FunctionCodeView({ dir: functionsDir });
  const readiness = new ManualExecutorReadiness(false);
  // `runner` is created below, after the supervisor whose link it drives; the supervisor calls these
  // handlers only once started, so the runner always exists by then.
  const onEvent = (ev: ExecutorLinkEvent): void => {
    runner.handleEvent(ev);
    if (ev.type === 'executorReady') {
      logger.info({ pid: ev.pid, threads: ev.threads, version: ev.executorVersion }, 'executor ready');
      readiness.markReady();
    } else if (ev.type === 'executorLost') {
      readiness.markLost(`executor lost: ${ev.reason}`);
    }
  };
  const supervisor: ExecutorSupervisor = new ExecutorSupervisor({
    socketDir,
    functionsDir,
    epochs: codeView,
    onEvent,
    onWaiting: (req: WaitingRequest) => runner.serveWaiting(req),
    ...(options.executorCommand ? { command: options.executorCommand } : {}),
    threads: ex.threads,
    heartbeatIntervalMs: ex.heartbeatIntervalMs,
    heartbeatTimeoutMs: ex.heartbeatTimeoutMs,
    cancelHardLimitMs: ex.cancelHardLimitMs,
    readCopyMaxEntries: ex.readCopyMaxEntries,
    isolation: ex.isolation,
    threadHeapMb: ex.threadHeapMb,
    threadMemoryMb: ex.threadMemoryMb,
    maxRssMb: ex.maxRssMb,
    backoff: { initialMs: ex.restartBackoffInitialMs, maxMs: ex.restartBackoffMaxMs },
    ...(options.maxCallsPerThread !== undefined ? { maxCallsPerThread: options.maxCallsPerThread } : {}),
    ...(options.env ? { env: options.env } : {}),
    onLog: forwardExecutorLog(logger),
    log: (level, message) => logger[level]({ component: 'executor-link' }, message),
  });
  const runner: ExecutorCallRunner = new ExecutorCallRunner({
    link: supervisor.link,
    dispatcher: dispatcherConfigFromWorker(dep.worker),
    io: options.io ?? noStorageIoHandler,
    readCopies: ex.readCopyMaxEntries > 0,
    logger,
  });

  let closing: Promise<void> | undefined;
  return {
    callRunner: runner,
    codeEpochs: codeEpochsFromView(codeView),
    executorReadiness: readiness,
    supervisor,
    codeView,
    get socketPath() {
      return supervisor.link.socketPath;
    },
    async start() {
      await supervisor.start();
      logger.info(
        { socket: supervisor.link.socketPath, functions_dir: functionsDir, pid: supervisor.pid },
        'executor starting',
      );
    },
    whenReady: () => supervisor.whenReady(),
    close: () =>
      (closing ??= (async () => {
        runner.close();
        await supervisor.stop();
      })()),
  };
}
