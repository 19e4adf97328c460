// `blockx worker --deployment NAME [--config FILE]`: boots the kernel (config + plugins), runs one
// Worker through the service lifecycle (lifecycle.ts) until SIGTERM / SIGINT, drains, exits.
//
//   first SIGTERM or SIGINT → drain: admissions answer Unavailable, running tasks finish (bounded by
//                             drainTimeoutMs), the server stops → exit code 0;
//   a second signal         → stop at once (remaining tasks are cancelled) → exit code 1.
//   Then the teardown stack unwinds (executor, registry session, metrics, storage) and the shutdown
//   hook fires with the first signal's name. A teardown step that fails makes the exit code 1.
//   SIGHUP, or a change of the config file → the file is read again and what a running Worker can take
//                             is applied (config-reload.ts: added tables created and served, changed
//                             plugins loaded again; every other change is logged as waiting for a
//                             restart). docs/configuration.md § Changing the config of a running process.
//
// Prints one line on stdout once it serves: `worker listening on <advertised addr> (bound <host:port>,
// deployment <name>)`; logs go to stderr as pino JSON lines (level from BLOCKX_LOG_LEVEL / config).
// What is assembled, in order, is in worker-assembly.ts. WORKER_CPU_PROFILE / WORKER_TRACE profile the
// whole command (docs/performance.md § Profiling).
import { pino } from 'pino';
import { loadConfig, type LoadConfigOptions } from '../kernel/config.js';
import type { BlockxConfig } from '../kernel/config-types.js';
import type { StorageBackend } from '../services/storage/types.js';
import { bootKernel } from '../kernel/kernel.js';
import { boundedPino } from '../kernel/observability/logger.js';
import { withProfiling } from '../kernel/observability/profiling.js';
import type { RunningWorker } from '../services/worker/app/run-worker.js';
import type { ServiceLogger } from '../kernel/observability/service-logger.js';
import { LivePluginRegistry } from '../kernel/plugin-registry.js';
import { createConfigReload, watchConfigFile } from './config-reload.js';
import { createPluginReload } from './plugin-reload.js';
import { startServices } from './lifecycle.js';
import { planWorker } from './service-plans.js';
import { onTermination, type SignalSource, type TerminationSignal } from './signals.js';
import { assembleWorker, type WorkerAssemblyDeps } from './worker-assembly.js';

export type { ExecutorRuntime, WorkerRuntimeContext } from './worker-assembly.js';
export type { SignalSource } from './signals.js';

/** The subset of the CLI's io a command uses (src/cli/io.ts `CliIo` satisfies it). */
export interface WorkerCommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  readonly env: NodeJS.ProcessEnv;
  cwd(): string;
}

export interface WorkerCommandOptions {
  /** `--config FILE`. */
  readonly config?: string;
  /** `--deployment NAME`. */
  readonly deployment: string;
}

export interface WorkerCommandDeps extends WorkerAssemblyDeps {
  readonly signals?: SignalSource;
  readonly logger?: ServiceLogger;
  /** Called once the worker serves (tests). */
  readonly onListening?: (worker: RunningWorker) => void;
}

export function workerCommand(
  opts: WorkerCommandOptions,
  io: WorkerCommandIo,
  deps: WorkerCommandDeps = {},
): Promise<number> {
  return withProfiling('worker', 'blockx worker', io, () => serveWorker(opts, io, deps));
}

async function serveWorker(
  opts: WorkerCommandOptions,
  io: WorkerCommandIo,
  deps: WorkerCommandDeps,
): Promise<number> {
  const { deployment } = opts;
  const configOptions = { configPath: opts.config, cwd: io.cwd(), env: io.env, deployments: [deployment] };
  const booted = await bootKernel(configOptions);
  // Plugins a config reload may load again (docs/plugins.md § Loading plugins again).
  const plugins = new LivePluginRegistry(booted.plugins);
  const kernel = { ...booted, plugins };
  const logger =
    deps.logger ??
    // Secrets masked, long strings cut (docs/security.md § Logs).
    boundedPino(
      { level: kernel.config.observability.logLevel, base: { service: 'worker', deployment } },
      pino.destination({ dest: 2, sync: true }),
    );
  const running = await startServices({
    kernel,
    plan: planWorker(kernel.config, deployment),
    logger,
    assemble: (stack) => assembleWorker({ kernel, deployment, logger, deps }, stack),
  });
  const { worker, storage } = running.services;
  const signals = deps.signals ?? process;
  // Listening for signals before the line is printed: whoever waits for it may signal at once.
  const stopped = untilStopped(worker, signals, logger);
  const stopWatching = await watchWorkerConfig({ kernel, configOptions, storage, logger, signals });
  io.stdout(
    `worker listening on ${worker.address} (bound ${worker.boundAddress}, deployment ${deployment})\n`,
  );
  deps.onListening?.(worker);

  const { code, signal } = await stopped;
  stopWatching();
  const failures = await running.stop(signal);
  return failures.length > 0 ? 1 : code;
}

/**
 * A running Worker takes what a config change allows (config-reload.ts: added tables created and
 * served, changed plugins loaded again), each outcome one line of its log. Returns what stops watching.
 */
export async function watchWorkerConfig(opts: {
  readonly kernel: { readonly config: BlockxConfig; readonly plugins: LivePluginRegistry };
  readonly configOptions: LoadConfigOptions;
  readonly storage: StorageBackend | undefined;
  readonly logger: ServiceLogger;
  readonly signals?: SignalSource;
}): Promise<() => void> {
  const { kernel, logger, storage } = opts;
  const report = (level: 'info' | 'warn' | 'error', line: string): void => logger[level]({}, line);
  return watchConfigFile(
    kernel.config.configFile,
    createConfigReload({
      load: () => loadConfig(opts.configOptions),
      running: kernel.config,
      ...(storage ? { storage } : {}),
      plugins: await createPluginReload({ live: kernel.plugins, running: kernel.config, report }),
      report,
    }),
    opts.signals,
  );
}

/** Drain on the first signal (→ 0), stop at once on the second (→ 1); listeners removed after. */
function untilStopped(
  worker: RunningWorker,
  signals: SignalSource,
  logger: ServiceLogger,
): Promise<{ code: number; signal: TerminationSignal }> {
  let first: TerminationSignal = 'SIGTERM';
  let received = 0;
  return new Promise((resolve) => {
    const done = (code: number): void => {
      off();
      resolve({ code, signal: first });
    };
    const off = onTermination((signal) => {
      received++;
      if (received === 1) {
        first = signal;
        logger.info({}, 'signal received: draining (a second signal stops at once)');
        void worker.drain().then(() => done(0));
      } else if (received === 2) {
        logger.warn({}, 'second signal: stopping now');
        void worker.close().then(() => done(1));
      }
    }, signals);
  });
}
