// `blockx worker --deployment NAME [--config FILE]`: boots the kernel (config + plugins), runs one
// Worker until SIGTERM / SIGINT, drains, exits.
//
//   first SIGTERM or SIGINT → drain: admissions answer Unavailable, running tasks finish (bounded by
//                             drainTimeoutMs), the server stops → exit code 0;
//   a second signal         → stop at once (remaining tasks are cancelled) → exit code 1.
//
// Prints one line on stdout once it serves: `worker listening on <advertised addr> (bound <host:port>,
// deployment <name>)`; logs go to stderr as pino JSON lines (level from BLOCKX_LOG_LEVEL / config).
//
// The Calls phase: the dispatcher driving a supervised Executor child (executor-runtime.ts); tests may
// inject another through `deps.executor`. `worker listening` is printed once the Executor is ready (or
// after 30 s, with a warning: until then the worker answers Unavailable and health is NOT_SERVING).
//
// Storage: `storage.url` is opened and its tables created or checked (storage-runtime.ts) before the
// worker serves; task IO scopes and the functions' `ctx.io` reads go through it. Metrics: with
// `observability.prometheus.listenAddr` set, `/metrics` is served there.
//
// Registry: with `registry.etcd.endpoints` set (ETCD_ENDPOINTS) and no `deps.registryWriter`, heartbeats
// go to etcd (EtcdRegistryWriter, lease TTL registry.etcd.leaseTtlMs); without endpoints it runs standalone.

import { pino } from 'pino';
import { bootKernel } from '../../../kernel/kernel.js';
import type { BlockxConfig } from '../../../kernel/config-types.js';
import { EtcdRegistryWriter } from '../../registry/etcd-registry-writer.js';
import { etcdSecurityOf } from '../../registry/etcd-client.js';
import type { WorkerRegistryWriter } from '../../registry/registry-port.js';
import type { WorkerLogger } from '../adapters/worker-logger.js';
import type {
  CallPhaseRunner,
  CodeEpochSource,
  ExecutorReadiness,
  TaskIoScopeFactory,
} from '../adapters/ports.js';
import { boundedPino } from '../../../kernel/observability/logger.js';
import { startMetricsServer } from '../../../kernel/observability/metrics-server.js';
import { loadTlsMaterial } from '../../../kernel/tls-files.js';
import type { CallIoHandler } from '../adapters/executor-call-io.js';
import { StorageIoScopeFactory } from '../adapters/io/index.js';
import { startExecutorRuntime } from './executor-runtime.js';
import { startStorageRuntime, type StorageRuntime } from './storage-runtime.js';
import { runWorker, type RunningWorker } from './run-worker.js';

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

/** What the real Calls path provides; `close()` runs after the worker stopped (e.g. stop the executor). */
export interface ExecutorRuntime {
  readonly callRunner: CallPhaseRunner;
  readonly executorReadiness?: ExecutorReadiness;
  readonly codeEpochs?: CodeEpochSource;
  /** Resolves true at the executor's first heartbeat, false after `timeoutMs`. */
  whenReady?(timeoutMs: number): Promise<boolean>;
  close?(): Promise<void>;
}

export interface WorkerRuntimeContext {
  readonly config: BlockxConfig;
  readonly deployment: string;
  readonly logger: WorkerLogger;
  /** The task IO scopes' handler of functions' `ctx.io` reads (absent when `deps.ioScopes` is given). */
  readonly io?: CallIoHandler;
}

/** Where the process gets signals from (process by default; tests pass an EventEmitter). */
export interface SignalSource {
  on(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  off(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
}

export interface WorkerCommandDeps {
  readonly executor?: (ctx: WorkerRuntimeContext) => ExecutorRuntime | Promise<ExecutorRuntime>;
  readonly ioScopes?: (ctx: WorkerRuntimeContext) => TaskIoScopeFactory | Promise<TaskIoScopeFactory>;
  /** Heartbeat destination (etcd writer when etcd endpoints are configured). */
  readonly registryWriter?: (
    ctx: WorkerRuntimeContext,
  ) => WorkerRegistryWriter | undefined | Promise<WorkerRegistryWriter | undefined>;
  readonly signals?: SignalSource;
  readonly logger?: WorkerLogger;
  /** Called once the worker serves (tests). */
  readonly onListening?: (worker: RunningWorker) => void;
}

export async function workerCommand(
  opts: WorkerCommandOptions,
  io: WorkerCommandIo,
  deps: WorkerCommandDeps = {},
): Promise<number> {
  const kernel = await bootKernel({
    configPath: opts.config,
    cwd: io.cwd(),
    env: io.env,
    deployments: [opts.deployment],
  });
  const { config } = kernel;
  const logger =
    deps.logger ??
    // Secrets masked, long strings cut (docs/security.md § Logs).
    boundedPino(
      { level: config.observability.logLevel, base: { service: 'worker', deployment: opts.deployment } },
      pino.destination({ dest: 2, sync: true }),
    );
  // Storage first: a config that does not match the database stops the worker before it serves.
  const storage = deps.ioScopes ? undefined : await startStorageRuntime({ config, logger });
  const ioScopes = deps.ioScopes
    ? await deps.ioScopes({ config, deployment: opts.deployment, logger })
    : (storage as StorageRuntime).scopesForWorker();
  const ctx: WorkerRuntimeContext = {
    config,
    deployment: opts.deployment,
    logger,
    ...(ioScopes instanceof StorageIoScopeFactory ? { io: ioScopes.callIoHandler } : {}),
  };

  const executor = deps.executor
    ? await deps.executor(ctx)
    : await startExecutorRuntime(ctx).catch(async (err: unknown) => {
        await storage?.close();
        throw err;
      });
  const registryWriter = deps.registryWriter
    ? await deps.registryWriter(ctx)
    : defaultRegistryWriter(config, logger);
  const worker = await runWorker({
    config,
    deployment: opts.deployment,
    plugins: kernel.plugins,
    ...(executor === undefined
      ? {}
      : {
          callRunner: executor.callRunner,
          ...(executor.executorReadiness ? { executorReadiness: executor.executorReadiness } : {}),
          ...(executor.codeEpochs ? { codeEpochs: executor.codeEpochs } : {}),
        }),
    ioScopes,
    ...(registryWriter ? { registryWriter } : {}),
    logger,
  }).catch(async (err: unknown) => {
    // The publisher never took the writer over: close it here (etcd: its client) or the process hangs.
    await registryWriter?.close();
    await executor?.close?.();
    await storage?.close();
    throw err;
  });
  const metricsServer = await startMetricsServer({
    ...config.observability.prometheus,
    registry: worker.metrics.registry,
    // HTTPS with client certificates when `tls` is on (docs/security.md § TLS and authentication).
    tls: loadTlsMaterial(config.tls),
    allowPlaintext: config.tls.allowPlaintext,
  }).catch(async (err: unknown) => {
    await worker.close();
    await executor?.close?.();
    await storage?.close();
    throw err;
  });
  if (metricsServer.address !== '')
    logger.info({ address: metricsServer.address }, 'serving Prometheus metrics');
  if (executor.whenReady && !(await executor.whenReady(30_000))) {
    logger.warn({}, 'executor not ready after 30 s: serving Unavailable until its first heartbeat');
  }
  io.stdout(
    `worker listening on ${worker.address} (bound ${worker.boundAddress}, deployment ${opts.deployment})\n`,
  );
  deps.onListening?.(worker);

  const signals: SignalSource = deps.signals ?? process;
  let received = 0;
  let onSignal: () => void = () => undefined;
  const code = await new Promise<number>((resolve) => {
    onSignal = (): void => {
      received++;
      if (received === 1) {
        logger.info({}, 'signal received: draining (a second signal stops at once)');
        void worker.drain().then(() => resolve(0));
      } else if (received === 2) {
        logger.warn({}, 'second signal: stopping now');
        void worker.close().then(() => resolve(1));
      }
    };
    signals.on('SIGTERM', onSignal);
    signals.on('SIGINT', onSignal);
  });
  signals.off('SIGTERM', onSignal);
  signals.off('SIGINT', onSignal);
  await metricsServer.close();
  await executor?.close?.();
  await storage?.close();
  return code;
}

/**
 * The heartbeat destination when the caller wires none: etcd when `registry.etcd.endpoints` is set (one
 * leased session; runWorker's publisher puts under `worker.registryPrefix` every heartbeatIntervalMs and
 * closes it on shutdown), else none (a standalone worker).
 */
function defaultRegistryWriter(config: BlockxConfig, logger: WorkerLogger): WorkerRegistryWriter | undefined {
  const { endpoints, dialTimeoutMs, leaseTtlMs } = config.registry.etcd;
  if (endpoints.length === 0) return undefined;
  logger.info({ endpoints, lease_ttl_ms: leaseTtlMs }, 'publishing heartbeats to etcd');
  return new EtcdRegistryWriter({
    endpoints,
    unaryDeadlineMs: dialTimeoutMs,
    leaseTtlMs,
    logger,
    security: etcdSecurityOf(config.registry.etcd),
  });
}
