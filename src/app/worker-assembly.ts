// What `blockx worker` (and each Worker child of `blockx up`, worker-child/) assembles, in order, each registered on the process's teardown stack:
//
//   storage    `storage.url` opened, its tables created or checked (storage-runtime.ts) before the
//              worker serves: a config that does not match the database stops it here
//   metrics    the process's Prometheus endpoint (process-metrics.ts), if `listenAddr` is set; a
//              Worker child of `blockx up` gives `deps.metrics`, which its parent's endpoint serves
//   executor   the dispatcher driving a supervised Executor child (executor-runtime.ts); tests may
//              inject another through `deps.executor`
//   registry   with `registry.etcd.endpoints` set (ETCD_ENDPOINTS) and no `deps.registryWriter`,
//              heartbeats go to etcd (lease TTL registry.etcd.leaseTtlMs); without endpoints it runs
//              standalone
//   worker     runWorker; then up to 30 s for the Executor's first heartbeat (until then the worker
//              answers Unavailable and health is NOT_SERVING)
import type { Kernel } from '../kernel/kernel.js';
import type { BlockxConfig } from '../kernel/config-types.js';
import type { WorkerRegistryWriter } from '../services/registry/registry-port.js';
import type { CallIoHandler } from '../services/call-host/index.js';
import { StorageIoScopeFactory } from '../services/worker/adapters/io/index.js';
import type { CallPhaseRunner, CodeEpochSource, ExecutorReadiness } from '../services/call-host/index.js';
import type { TaskIoScopeFactory } from '../services/worker/adapters/orchestration/ports.js';
import type { ServiceLogger } from '../kernel/observability/service-logger.js';
import { startExecutorRuntime } from '../services/worker/app/executor-runtime.js';
import { runWorker, type RunningWorker } from '../services/worker/app/run-worker.js';
import { startStorageRuntime, type StorageRuntime } from '../services/worker/app/storage-runtime.js';
import { startProcessMetrics, type ProcessMetrics } from './process-metrics.js';
import { etcdRegistryWriter } from './registry-writer.js';
import type { TeardownStack } from '../kernel/teardown-stack.js';
import type { StorageBackend } from '../services/storage/types.js';

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
  readonly logger: ServiceLogger;
  /** The task IO scopes' handler of functions' `ctx.io` reads (absent when `deps.ioScopes` is given). */
  readonly io?: CallIoHandler;
}

export interface WorkerAssemblyDeps {
  readonly executor?: (ctx: WorkerRuntimeContext) => ExecutorRuntime | Promise<ExecutorRuntime>;
  readonly ioScopes?: (ctx: WorkerRuntimeContext) => TaskIoScopeFactory | Promise<TaskIoScopeFactory>;
  /**
   * Where the Worker's metrics registry comes from; default: this process's endpoint
   * (`observability.prometheus.listenAddr`). A Worker child of `blockx up` hands its registry to its parent.
   */
  readonly metrics?: ProcessMetrics;
  /** Heartbeat destination (etcd writer when etcd endpoints are configured). */
  readonly registryWriter?: (
    ctx: WorkerRuntimeContext,
  ) => WorkerRegistryWriter | undefined | Promise<WorkerRegistryWriter | undefined>;
}

/** The Worker, and the storage it serves tables from (absent when `deps.ioScopes` replaced it). */
export interface AssembledWorker {
  readonly worker: RunningWorker;
  /** A config reload serves added tables through it (config-reload.ts). */
  readonly storage?: StorageBackend;
}

export async function assembleWorker(
  opts: {
    readonly kernel: Pick<Kernel, 'config' | 'plugins'>;
    readonly deployment: string;
    readonly logger: ServiceLogger;
    readonly deps: WorkerAssemblyDeps;
    /** Overrides `worker.listen` (a Worker child of `blockx up`). */
    readonly listen?: string;
  },
  stack: TeardownStack,
): Promise<AssembledWorker> {
  const { kernel, deployment, logger, deps } = opts;
  const { config } = kernel;
  const base = { config, deployment, logger };
  let storage: StorageRuntime | undefined;
  let ioScopes: TaskIoScopeFactory;
  if (deps.ioScopes) ioScopes = await deps.ioScopes(base);
  else {
    storage = stack.adopt('storage', await startStorageRuntime({ config, logger }));
    ioScopes = storage.scopesForWorker();
  }
  const backend = storage?.backend;
  const ctx: WorkerRuntimeContext = {
    ...base,
    ...(ioScopes instanceof StorageIoScopeFactory ? { io: ioScopes.callIoHandler } : {}),
  };
  const metrics = deps.metrics ?? (await startProcessMetrics(config, stack, logger));
  const executor = deps.executor ? await deps.executor(ctx) : await startExecutorRuntime(ctx);
  stack.defer('executor', () => executor.close?.());
  const registryWriter = deps.registryWriter
    ? await deps.registryWriter(ctx)
    : defaultRegistryWriter(config, logger);
  // The publisher takes the session over and closes it when the worker stops; this step closes it
  // when the worker never started (its close is idempotent).
  if (registryWriter) stack.adopt('registry session', registryWriter);
  const worker = stack.adopt(
    'worker',
    await runWorker({
      config,
      deployment,
      plugins: kernel.plugins,
      ...(opts.listen === undefined ? {} : { listen: opts.listen }),
      // Admission reads the tables the storage serves now, which a config reload extends.
      ...(backend ? { tables: () => backend.tables } : {}),
      callRunner: executor.callRunner,
      ...(executor.executorReadiness ? { executorReadiness: executor.executorReadiness } : {}),
      ...(executor.codeEpochs ? { codeEpochs: executor.codeEpochs } : {}),
      ioScopes,
      ...(registryWriter ? { registryWriter } : {}),
      metrics: { registry: metrics.registryFor({ service: 'worker', deployment }) },
      logger,
    }),
  );
  if (executor.whenReady && !(await executor.whenReady(30_000))) {
    logger.warn({}, 'executor not ready after 30 s: serving Unavailable until its first heartbeat');
  }
  return { worker, ...(backend ? { storage: backend } : {}) };
}

function defaultRegistryWriter(
  config: BlockxConfig,
  logger: ServiceLogger,
): WorkerRegistryWriter | undefined {
  const writer = etcdRegistryWriter(config, logger);
  if (writer) {
    const { endpoints, leaseTtlMs } = config.registry.etcd;
    logger.info({ endpoints, lease_ttl_ms: leaseTtlMs }, 'publishing heartbeats to etcd');
  }
  return writer;
}
