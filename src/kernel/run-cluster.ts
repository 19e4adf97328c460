// Service assembly of `blockx up`: one machine, one process tree — the storage (opened and migrated
// once, shared by the workers), the registry (in-process, or etcd when the config names endpoints), a
// Coordinator, N Workers each with its Executor, and one Prometheus endpoint for all of them. It walks the plan
// of service-plan.ts, fires the kernel's serviceAssembled hook, and stops everything in reverse order.
import type { Logger as PinoLogger } from 'pino';
import type { Kernel } from './kernel.js';
import { planUp, type ServicePlan } from './service-plan.js';
import type { BlockxConfig, DeploymentConfig } from './config-types.js';
import { loadTlsMaterial } from './tls-files.js';
import type {
  CallPhaseRunner,
  CodeEpochSource,
  ExecutorReadiness,
} from '../services/worker/adapters/ports.js';
import type { WorkerRegistryWriter } from '../services/registry/registry-port.js';
import type { StorageBackend } from '../services/storage/types.js';
import type { CallIoHandler } from '../services/worker/adapters/executor-call-io.js';
import type { Registry } from 'prom-client';

export interface ClusterExecutorRuntime {
  readonly callRunner: CallPhaseRunner;
  readonly executorReadiness?: ExecutorReadiness;
  readonly codeEpochs?: CodeEpochSource;
  whenReady?(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface RunClusterOptions {
  readonly kernel: Kernel;
  readonly logger: PinoLogger;
  /** Overrides `up.coordinatorListen` (e.g. 127.0.0.1:0 in tests). */
  readonly coordinatorListen?: string;
  /** Builds the Calls phase of worker `index`; default: a supervised Executor per worker. */
  readonly executorFor?: (
    index: number,
    config: BlockxConfig,
    deployment: string,
    io: CallIoHandler,
  ) => Promise<ClusterExecutorRuntime>;
}

export interface RunningCluster {
  readonly plan: ServicePlan;
  readonly coordinatorAddress: string;
  readonly workerAddresses: readonly string[];
  readonly registry: 'in-process' | 'etcd';
  /** The storage every worker of the cluster reads and writes (one backend, shared). */
  readonly storage: StorageBackend;
  /** `host:port` of the Prometheus endpoint (all services of the cluster), '' when off. */
  readonly metricsAddress: string;
  close(): Promise<void>;
}

export async function runCluster(opts: RunClusterOptions): Promise<RunningCluster> {
  const { kernel, logger } = opts;
  const plan = planUp(kernel.config);
  const name = plan.deployment;
  const config = withCoordinatorListen(
    kernel.config,
    name,
    opts.coordinatorListen ?? kernel.config.up.coordinatorListen,
  );
  const [
    { runCoordinator },
    { runWorker },
    { InProcessRegistry },
    { startExecutorRuntime },
    { startStorageRuntime },
    { startMetricsServer },
  ] = await Promise.all([
    import('../services/coordinator/app/run-coordinator.js'),
    import('../services/worker/app/run-worker.js'),
    import('../services/registry/in-process-registry.js'),
    import('../services/worker/app/executor-runtime.js'),
    import('../services/worker/app/storage-runtime.js'),
    import('./observability/metrics-server.js'),
  ]);
  const executorFor =
    opts.executorFor ??
    ((index: number, cfg: BlockxConfig, deployment: string, io: CallIoHandler) =>
      startExecutorRuntime({
        config: cfg,
        deployment,
        logger: logger.child({ service: 'executor', worker: index }),
        io,
      }));
  const useEtcd = config.registry.etcd.endpoints.length > 0;
  const inProcess = useEtcd ? undefined : new InProcessRegistry();
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse())
      await stop().catch((err: unknown) => logger.error({ err }, 'stop failed'));
    stops.length = 0;
  };

  try {
    const storage = await startStorageRuntime({ config, logger: logger.child({ service: 'storage' }) });
    stops.push(() => storage.close());
    // One Prometheus endpoint for the whole cluster; each service's registry joins it as it starts.
    const registries: Registry[] = [];
    const metrics = await startMetricsServer({
      ...config.observability.prometheus,
      registry: registries,
      tls: loadTlsMaterial(config.tls),
      allowPlaintext: config.tls.allowPlaintext,
    });
    stops.push(() => metrics.close());
    const coordinator = await runCoordinator({
      config,
      deployment: name,
      logger: logger.child({ service: 'coordinator' }),
      ...(inProcess ? { registry: inProcess } : {}),
    });
    stops.push(() => coordinator.close());
    registries.push(coordinator.metrics.registry);

    const workerAddresses: string[] = [];
    for (let i = 0; i < config.up.workers; i++) {
      const port = config.up.workerBasePort === 0 ? 0 : config.up.workerBasePort + i;
      const ioScopes = storage.scopesForWorker();
      const executor = await executorFor(i, config, name, ioScopes.callIoHandler);
      stops.push(() => executor.close());
      const worker = await runWorker({
        config,
        deployment: name,
        plugins: kernel.plugins,
        listen: `127.0.0.1:${port}`,
        logger: logger.child({ service: 'worker', worker: i }),
        registryWriter: await registryWriterFor(config, inProcess, logger),
        callRunner: executor.callRunner,
        ioScopes,
        ...(executor.executorReadiness ? { executorReadiness: executor.executorReadiness } : {}),
        ...(executor.codeEpochs ? { codeEpochs: executor.codeEpochs } : {}),
      });
      if (executor.whenReady && !(await executor.whenReady(30_000))) {
        logger.warn(
          { worker: i },
          'executor not ready after 30 s: the worker answers Unavailable until it is',
        );
      }
      stops.push(() => worker.close());
      registries.push(worker.metrics.registry);
      workerAddresses.push(worker.address);
    }
    await kernel.hooks.serviceAssembled.promise(plan);
    return {
      plan,
      coordinatorAddress: coordinator.address,
      workerAddresses,
      registry: useEtcd ? 'etcd' : 'in-process',
      storage: storage.backend,
      metricsAddress: metrics.address,
      close: async () => {
        await stopAll();
        await kernel.hooks.shutdown.promise('cluster stopped');
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

async function registryWriterFor(
  config: BlockxConfig,
  inProcess: { writer(): WorkerRegistryWriter } | undefined,
  logger: PinoLogger,
): Promise<WorkerRegistryWriter> {
  if (inProcess) return inProcess.writer();
  const { EtcdRegistryWriter } = await import('../services/registry/etcd-registry-writer.js');
  const { etcdSecurityOf } = await import('../services/registry/etcd-client.js');
  return new EtcdRegistryWriter({
    endpoints: config.registry.etcd.endpoints,
    unaryDeadlineMs: config.registry.etcd.dialTimeoutMs,
    leaseTtlMs: config.registry.etcd.leaseTtlMs,
    logger,
    security: etcdSecurityOf(config.registry.etcd),
  });
}

/** The config with one deployment's coordinator listening elsewhere (the config itself stays frozen). */
function withCoordinatorListen(config: BlockxConfig, name: string, listen: string): BlockxConfig {
  const dep = config.deployments[name] as DeploymentConfig;
  return Object.freeze({
    ...config,
    deployments: Object.freeze({
      ...config.deployments,
      [name]: Object.freeze({ ...dep, coordinator: Object.freeze({ ...dep.coordinator, listen }) }),
    }),
  });
}
