// The real executor side of a Worker, as the ports the call host implements for it (../ports.ts):
//
//   createExecutorPorts({config, deployment, ...}) → {
//     callRunner         ExecutorCallRunner: dispatcher core + language router + one link per executor
//     codeEpochs         pins of the FunctionCodeView over the functions directory (both languages)
//     executorReadiness  ready once every executor it runs has sent its first heartbeat; lost when
//                        one dies or goes silent
//     start(), whenReady(), close()
//   }
//
// One ExecutorSupervisor per function language: it listens on a Unix socket in a private 0700 directory
// made under `executor.socketDir` (or the OS temp dir) and removed on close, spawns its executor
// (`blockx executor --socket PATH`, or the Python Executor) with a per-spawn secret and restarts it with
// backoff (docs/security.md, "The executor socket"). The code view feeds each link's DefineEpoch /
// RetireEpoch with the files of its language, so each executor runs exactly the epoch each task pinned.
//
// Python (docs/executor.md § Python functions on a Worker): one dispatcher for both languages; the
// router (executor-router.ts) sends each attempt to the executor of its function's language. With
// `executor.python.enabled: auto` the Python Executor starts with the Worker when the folder holds a
// `.py` function, or once one appears (seen by a task's pin, a routed call, or the folder check every
// FOLDER_CHECK_MS); `on` starts it at once, `off` never. It is not stopped when the `.py` files go.

import { executorEnvironment } from './executor-env.js';
import { executorWriteFolders, resolveExecutorUser } from './executor-user.js';
import { resolvePidNamespace } from './executor-pid-namespace.js';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FunctionCodeView, type WorkerCodeView } from '../../../executor/code-epochs.js';
import { pythonExecutorCommand } from '../../../executor/python-command.js';
import type { BlockxConfig } from '../../../kernel/config-types.js';
import { ConfigError } from '../../../kernel/errors.js';
import { packagePath } from '../../../kernel/package-root.js';
import {
  collisionMessage,
  parseAnyFunctionFileName,
  type FunctionLanguage,
  type FunctionsInventory,
} from '../../../executor/core/functions-inventory.js';
import { codeEpochsFromView, type CodeEpochSource, type ExecutorReadiness } from '../ports.js';
import { DeploymentUnknownError } from '../../../kernel/errors.js';
import {
  ExecutorCallRunner,
  dispatcherConfigFromWorker,
  noStorageIoHandler,
  type CallIoHandler,
} from './executor-call-runner.js';
import type { ExecutorLinkEvent, WaitingRequest } from './executor-link.js';
import { EpochInventories, ExecutorRouter, ExecutorSetReadiness, epochSourceFor } from './executor-router.js';
import { ExecutorSupervisor } from './executor-supervisor.js';
import { silentLogger, type ServiceLogger } from '../../../kernel/observability/service-logger.js';

export interface ExecutorPortsOptions {
  readonly config: BlockxConfig;
  /** The deployment whose `worker` (dispatcher) and `executor` sections apply. */
  readonly deployment: string;
  /** Function files. Default `config.functions.dir`. */
  readonly functionsDir?: string;
  readonly logger?: ServiceLogger;
  /** The executor command without its flags. Default `node <package>/bin/blockx.js executor`
   *  (needs `npm run build`); `tsxExecutorCommand()` runs it from src/. */
  readonly executorCommand?: readonly string[];
  /** IO reads of running calls. Default: fail with NO_STORAGE (not retryable). */
  readonly io?: CallIoHandler;
  /** Overrides `executor.socketDir` (and the OS temp dir fallback). */
  readonly socketDir?: string;
  /**
   * The environment the executor's is derived from (executorEnvironment: a fixed list and
   * `executor.passEnv`). Default this process's.
   */
  readonly env?: NodeJS.ProcessEnv;
  /** The Python Executor command without its flags. Default `pythonExecutorCommand()` with
   *  `executor.python.interpreter` (src/executor/python-command.ts). */
  readonly pythonCommand?: readonly string[];
  /** How often the functions folder is looked at for new epochs while idle. Default FOLDER_CHECK_MS. */
  readonly folderCheckMs?: number;
  /**
   * Where epochs come from. Default: a FunctionCodeView over `functionsDir` (functions.source: local);
   * `functions.source: cluster` passes the deployed-version view (worker/adapters/code-view/cluster-code-view.ts).
   */
  readonly codeView?: WorkerCodeView;
  /** What the heartbeat says about the code; default: the view's current epoch. */
  readonly codeVersion?: () => { readonly version?: string; readonly error?: string };
}

/** The folder check while no task pins (collision errors, the first `.py`): 1 s, one readdir + stats. */
export const FOLDER_CHECK_MS = 1_000;

export interface ExecutorPorts {
  readonly callRunner: ExecutorCallRunner;
  readonly codeEpochs: CodeEpochSource;
  readonly executorReadiness: ExecutorReadiness;
  /** The JS executor's supervisor. */
  readonly supervisor: ExecutorSupervisor;
  /** The Python executor's supervisor; undefined when `executor.python.enabled` is off. */
  readonly pythonSupervisor: ExecutorSupervisor | undefined;
  /** Whether the Python executor has been started. */
  readonly pythonStarted: boolean;
  readonly router: ExecutorRouter;
  readonly codeView: WorkerCodeView;
  /** `<socketDir>/bx-XXXXXX/executor.sock`; known once `start()` has resolved. */
  readonly socketPath: string;
  /** Listen on the sockets and spawn the executors the folder needs. Resolves once listening (not
   *  once ready). */
  start(): Promise<void>;
  /** Resolves once every executor the Worker runs now is ready. */
  whenReady(): Promise<void>;
  /** Cancel running Calls phases, stop both executors, remove the sockets. Idempotent. */
  close(): Promise<void>;
}

const LOG_LEVELS = new Set(['debug', 'info', 'warn', 'error']);

/** Executor stderr lines are JSON log lines; re-log them through the Worker's logger. */
function forwardExecutorLog(logger: ServiceLogger, language: FunctionLanguage): (line: string) => void {
  const component = language === 'js' ? 'executor' : `${language}-executor`;
  // The executor's own fields may name a component; `language` says which executor wrote the line.
  const tag = language === 'js' ? {} : { language };
  return (line) => {
    let entry: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed === 'object' && parsed !== null) entry = parsed as Record<string, unknown>;
    } catch {
      // not JSON: a stray write (a crash trace); keep it as is
    }
    if (entry === undefined) {
      logger.warn({ component, ...tag }, line);
      return;
    }
    const { level, msg, time: _time, ...fields } = entry;
    const method = typeof level === 'string' && LOG_LEVELS.has(level) ? level : 'info';
    logger[method as 'info']({ component, ...fields, ...tag }, typeof msg === 'string' ? msg : line);
  };
}

export function createExecutorPorts(options: ExecutorPortsOptions): ExecutorPorts {
  const { config, deployment } = options;
  const dep = config.deployments[deployment];
  if (dep === undefined) throw new DeploymentUnknownError(deployment, Object.keys(config.deployments));
  const logger = options.logger ?? silentLogger;
  const ex = dep.executor;
  const pythonMode = ex.python.enabled;
  const functionsDir = options.functionsDir ?? config.functions.dir;
  const socketDir =
    options.socketDir ?? (ex.socketDir === '' ? tmpdir() : path.resolve(config.baseDir, ex.socketDir));

  // One view over the files of both languages: a task pins one epoch for all its calls, whichever
  // executor runs them. A folder without `.py` files has the same epoch ids as before.
  const codeView: WorkerCodeView =
    options.codeView ?? new FunctionCodeView({ dir: functionsDir, parseFileName: parseAnyFunctionFileName });
  const languageOfFile = (fileName: string) => parseAnyFunctionFileName(fileName)?.language ?? null;
  const readiness = new ExecutorSetReadiness();
  let closing: Promise<void> | undefined;

  const onNewEpoch = (epoch: string, inventory: FunctionsInventory): void => {
    for (const collision of inventory.collisions) {
      logger.error(
        { component: 'functions', epoch, function: collision.name, files: collision.files },
        `${collisionMessage(collision, functionsDir)}; calls of "${collision.name}" in tasks on code ` +
          `epoch ${epoch} fail with a load error (tasks on earlier epochs are not affected)`,
      );
    }
    if (inventory.hasPython && pythonMode === 'auto') startPython('a .py function appeared');
  };
  const inventories = new EpochInventories(codeView, onNewEpoch);
  codeView.onRetire((epoch) => inventories.forget(epoch));

  // `runner` and `router` are created below, after the supervisors whose links they drive; the
  // supervisors call these handlers only once started, so both exist by then.
  const onEvent = (language: FunctionLanguage, deliver: (ev: ExecutorLinkEvent) => void) => {
    const label = language === 'js' ? 'executor' : `${language} executor`;
    return (ev: ExecutorLinkEvent): void => {
      deliver(ev);
      if (ev.type === 'executorReady') {
        logger.info({ pid: ev.pid, threads: ev.threads, version: ev.executorVersion }, `${label} ready`);
        readiness.executorReady(language);
      } else if (ev.type === 'executorLost') {
        readiness.executorLost(language, ev.reason);
      }
    };
  };
  // Who the executors run as (docs/security.md § Executors as their own user): they need the package
  // they run from, the functions folder and the socket folder, and to write their profile files.
  const executorEnv = executorEnvironment(options.env ?? process.env, ex.passEnv);
  const runAs = resolveExecutorUser(
    ex.user,
    [
      packagePath('bin', 'blockx.js'),
      packagePath('node_modules'),
      ...(pythonMode === 'off' ? [] : [packagePath('src', 'executor', 'python')]),
      functionsDir,
      socketDir,
    ],
    executorWriteFolders(executorEnv),
  );
  if (runAs.kind === 'error')
    throw new ConfigError([
      { source: 'file', path: `deployments.${deployment}.executor.user`, message: runAs.message },
    ]);
  if (runAs.kind === 'same-with-warning') logger.warn({ component: 'executor' }, runAs.warning);
  if (runAs.kind === 'drop')
    logger.info({ user: runAs.user.name, uid: runAs.user.uid }, 'executors run as their own user');
  // Each Executor as PID 1 of its own PID namespace (docs/security.md § An Executor as PID 1 of its own PID namespace).
  const pidNamespace = resolvePidNamespace(ex.pidNamespace, runAs.kind === 'drop');
  if (pidNamespace.kind === 'off-with-warning') logger.warn({ component: 'executor' }, pidNamespace.warning);
  const common = {
    ...(runAs.kind === 'drop' ? { runAs: runAs.user, maxProcesses: ex.maxProcesses } : {}),
    ...(pidNamespace.kind === 'on' ? { pidNamespace: pidNamespace.tools } : {}),
    socketDir,
    functionsDir,
    onWaiting: (req: WaitingRequest) => runner.serveWaiting(req),
    // The runner takes successes in bulk (docs/executor.md § Calls in bulk): from an executor that
    // announces CallsCompleted (the Python one does not, and keeps its CallCompleted frames).
    bulkResults: true,
    threads: ex.threads,
    heartbeatIntervalMs: ex.heartbeatIntervalMs,
    heartbeatTimeoutMs: ex.heartbeatTimeoutMs,
    cancelHardLimitMs: ex.cancelHardLimitMs,
    maxCallsPerThread: ex.maxCallsPerThread,
    readCopyMaxEntries: ex.readCopyMaxEntries,
    isolation: ex.isolation,
    threadHeapMb: ex.threadHeapMb,
    threadMemoryMb: ex.threadMemoryMb,
    maxRssMb: ex.maxRssMb,
    memoryMaxMb: ex.memoryMaxMb,
    backoff: { initialMs: ex.restartBackoffInitialMs, maxMs: ex.restartBackoffMaxMs },
    // Never the Worker's whole environment: a function can read it (executor-env.ts).
    env: executorEnv,
  };
  const supervisor: ExecutorSupervisor = new ExecutorSupervisor({
    ...common,
    epochs: epochSourceFor(codeView, 'js', languageOfFile),
    onEvent: onEvent('js', (ev) => jsEvents(ev)),
    ...(options.executorCommand ? { command: options.executorCommand } : {}),
    onLog: forwardExecutorLog(logger, 'js'),
    log: (level, message) => logger[level]({ component: 'executor-link' }, message),
  });
  const pythonSupervisor: ExecutorSupervisor | undefined =
    pythonMode === 'off'
      ? undefined
      : new ExecutorSupervisor({
          ...common,
          label: 'python',
          epochs: epochSourceFor(codeView, 'python', languageOfFile),
          onEvent: onEvent('python', (ev) => pythonEvents(ev)),
          command:
            options.pythonCommand ??
            pythonExecutorCommand({
              python: ex.python.interpreter,
              ...(options.env ? { env: options.env } : {}),
            }),
          onLog: forwardExecutorLog(logger, 'python'),
          log: (level, message) => logger[level]({ component: 'python-executor-link' }, message),
        });
  const router: ExecutorRouter = new ExecutorRouter({
    js: supervisor.link,
    ...(pythonSupervisor ? { python: pythonSupervisor.link } : {}),
    inventories,
    functionsDir,
    deliver: (ev) => runner.handleEvent(ev),
    onPythonNeeded: () => startPython('a task called a Python function'),
  });
  const jsEvents = router.eventsOf('js');
  const pythonEvents = router.eventsOf('python');
  const runner: ExecutorCallRunner = new ExecutorCallRunner({
    link: router,
    dispatcher: dispatcherConfigFromWorker(dep.worker, config.functions.retry),
    io: options.io ?? noStorageIoHandler,
    readCopies: ex.readCopyMaxEntries > 0,
    logger,
  });

  let started = false;
  function startPython(why: string): void {
    if (pythonSupervisor === undefined || router.pythonStarted || !started || closing) return;
    router.activatePython();
    readiness.need('python');
    pythonSupervisor.start().then(
      () =>
        logger.info(
          { socket: pythonSupervisor.link.socketPath, pid: pythonSupervisor.pid, why },
          'python executor starting',
        ),
      (err: unknown) => logger.error({ err: (err as Error).message }, 'cannot start the python executor'),
    );
  }

  let folderTimer: NodeJS.Timeout | undefined;
  const checkFolder = (): Promise<void> =>
    codeView.currentEpoch().then(
      (epoch) => void inventories.of(epoch),
      // An unreadable folder is reported where it matters: the task that pins fails ACTIVATION_FAILED.
      () => undefined,
    );

  const epochs = codeEpochsFromView(codeView);
  return {
    callRunner: runner,
    codeEpochs: {
      async pin() {
        const pin = await epochs.pin();
        inventories.of(pin.epoch); // collision log and lazy Python start, at the latest here
        return pin;
      },
      // The function names of the current epoch (WorkerAdminService.DescribeServing).
      ...(epochs.functionNames ? { functionNames: epochs.functionNames } : {}),
      // The code version is the epoch id (docs/functions-deploy.md), local folder or deployed bundle.
      codeVersion:
        options.codeVersion ??
        (() => (codeView.currentId === undefined ? {} : { version: codeView.currentId })),
    },
    executorReadiness: readiness,
    supervisor,
    pythonSupervisor,
    get pythonStarted() {
      return router.pythonStarted;
    },
    router,
    codeView,
    get socketPath() {
      return supervisor.link.socketPath;
    },
    async start() {
      if (started) return;
      started = true;
      // Which executors the folder needs now decides what "ready" waits for at start.
      await checkFolder();
      if (pythonMode === 'on') startPython('executor.python.enabled: on');
      await supervisor.start();
      logger.info(
        { socket: supervisor.link.socketPath, functions_dir: functionsDir, pid: supervisor.pid },
        'executor starting',
      );
      folderTimer = setInterval(() => void checkFolder(), options.folderCheckMs ?? FOLDER_CHECK_MS);
      folderTimer.unref();
    },
    whenReady: () =>
      Promise.all([
        supervisor.whenReady(),
        ...(router.pythonStarted && pythonSupervisor ? [pythonSupervisor.whenReady()] : []),
      ]).then(() => undefined),
    close: () =>
      (closing ??= (async () => {
        if (folderTimer) clearInterval(folderTimer);
        runner.close();
        await Promise.all([supervisor.stop(), pythonSupervisor?.stop()]);
      })()),
  };
}
