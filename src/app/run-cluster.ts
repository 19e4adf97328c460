// Service assembly of `blockx up`: one machine, one process tree — the storage (opened and migrated
// once), the registry (in-process, or etcd when the config names endpoints), a Coordinator, N Workers
// each with its Executor, one Prometheus endpoint for all of them, and the Coordinator's web dashboard
// (docs/dashboard.md; on by default, see upDashboardListen). It walks the plan of kernel/service-plan.ts
// through the one service lifecycle (lifecycle.ts): assemble on a teardown stack → serviceAssembled →
// … → close(): the stack unwinds in reverse order → shutdown.
//
// Where the Workers run (`up.workerProcesses`, docs/architecture.md § blockx up): by default each in a
// child process of its own with its own storage connection (worker-child/), which publishes into this
// process's registry over its IPC channel and is restarted when it dies; with the field false, with
// `sqlite::memory:` storage (a memory database is private to its process) or when a caller injects the
// Executors (`executorFor`), all in this process, sharing its storage connection.
import type { Logger as PinoLogger } from 'pino';
import type { Kernel } from '../kernel/kernel.js';
import { planUp, type ServicePlan } from '../kernel/service-plan.js';
import type { BlockxConfig, DeploymentConfig } from '../kernel/config-types.js';
import { createDashboardFeed } from '../services/coordinator/adapters/dashboard-feed.js';
import { runCoordinator } from '../services/coordinator/app/run-coordinator.js';
import type { FollowJobView } from '../contracts/dashboard.js';
import { withFollowJobs } from '../services/dashboard/app/follow-jobs-feed.js';
import {
  checkDashboardAddress,
  serveDashboard,
  type DashboardFeedHandle,
} from '../services/dashboard/app/serve-dashboard.js';
import { FunctionsStore } from '../services/functions-store/functions-store.js';
import { MemoryFunctionsKv } from '../services/functions-store/memory-kv.js';
import { InProcessRegistry } from '../services/registry/in-process-registry.js';
import type { WorkerRegistryWriter } from '../services/registry/registry-port.js';
import type { StorageBackend } from '../services/storage/types.js';
import type { CallIoHandler } from '../services/call-host/index.js';
import type { CallPhaseRunner, CodeEpochSource, ExecutorReadiness } from '../services/call-host/index.js';
import { startExecutorRuntime } from '../services/worker/app/executor-runtime.js';
import { runWorker } from '../services/worker/app/run-worker.js';
import { startStorageRuntime } from '../services/worker/app/storage-runtime.js';
import { startServices } from './lifecycle.js';
import { startProcessMetrics } from './process-metrics.js';
import type { WorkerChildStart } from './worker-child/protocol.js';
import { startWorkerProcesses } from './worker-child/worker-processes.js';
import type { Registry } from 'prom-client';
import type { ServiceLabels } from '../kernel/observability/service-registry.js';

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
  /**
   * Where the dashboard listens ('' = none). Default: `observability.dashboard.listenAddr`, else
   * upDashboardListen (next to the coordinator).
   */
  readonly dashboardListen?: string;
  /** Where the dashboard address came from, named when it cannot be served (e.g. `--dashboard`). */
  readonly dashboardKey?: string;
  /** The follow jobs the dashboard shows beside the cluster (docs/dashboard.md § Follow jobs); none without. */
  readonly followJobs?: () => Promise<readonly FollowJobView[]>;
  /**
   * How a Worker child loads the config this process runs (`blockx up`'s --config, cwd and flags; the
   * environment is inherited). Without it the Workers run in this process.
   */
  readonly workerConfig?: WorkerChildStart['config'];
  /** Builds the Calls phase of worker `index` (the Workers then run in this process); default: a supervised Executor per worker. */
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
  /** A new Registry served by that endpoint, for what runs beside the services (the configured jobs). */
  metricsRegistryFor(labels: ServiceLabels): Registry;
  /** `http://host:port/` of the dashboard, '' when off. */
  readonly dashboardUrl: string;
  /** Stops every service (last started first), then fires the shutdown hook. Idempotent. */
  close(): Promise<void>;
}

type ClusterServices = Omit<RunningCluster, 'plan' | 'close'>;

export async function runCluster(opts: RunClusterOptions): Promise<RunningCluster> {
  const { kernel, logger } = opts;
  const plan = planUp(kernel.config);
  const name = plan.deployment;
  const config = withCoordinatorListen(
    kernel.config,
    name,
    opts.coordinatorListen ?? kernel.config.up.coordinatorListen,
  );
  const executorFor =
    opts.executorFor ??
    ((index: number, cfg: BlockxConfig, deployment: string, io: CallIoHandler) =>
      startExecutorRuntime({
        config: cfg,
        deployment,
        logger: logger.child({ service: 'executor', worker: index }),
        io,
        ...(functionsStore ? { functionsStore } : {}),
      }));
  const dashboardListen =
    opts.dashboardListen ??
    (config.observability.dashboard.listenAddr ||
      upDashboardListen((config.deployments[name] as DeploymentConfig).coordinator.listen));
  // Refused before anything starts (a plaintext address other hosts can reach, a malformed one).
  checkDashboardAddress(config, dashboardListen, opts.dashboardKey);
  const useEtcd = config.registry.etcd.endpoints.length > 0;
  const inProcess = useEtcd ? undefined : new InProcessRegistry();
  // Deployed functions of an in-process cluster live in memory here, served by the Coordinator's admin
  // service to `blockx functions` (docs/functions-deploy.md § blockx up without etcd); with etcd, in etcd.
  const functionsStore =
    !useEtcd && config.functions.source === 'cluster'
      ? new FunctionsStore(new MemoryFunctionsKv())
      : undefined;

  const running = await startServices<ClusterServices>({
    kernel,
    plan,
    logger,
    assemble: async (stack) => {
      const storage = stack.adopt(
        'storage',
        await startStorageRuntime({ config, logger: logger.child({ service: 'storage' }) }),
      );
      // One Prometheus endpoint for the whole cluster; each service's registry joins it.
      const metrics = await startProcessMetrics(config, stack);
      const coordinator = stack.adopt(
        'coordinator',
        await runCoordinator({
          config,
          deployment: name,
          logger: logger.child({ service: 'coordinator' }),
          metrics: { registry: metrics.registryFor({ service: 'coordinator', deployment: name }) },
          ...(inProcess ? { registry: inProcess } : {}),
          ...(functionsStore ? { functionsStore } : {}),
        }),
      );

      const listen = Array.from({ length: config.up.workers }, (_, i) =>
        config.up.workerBasePort === 0 ? '127.0.0.1:0' : `127.0.0.1:${config.up.workerBasePort + i}`,
      );
      const workerConfig =
        workersInChildren(config) && opts.executorFor === undefined ? opts.workerConfig : undefined;
      const workerAddresses: string[] = [];
      if (workerConfig !== undefined) {
        const children = stack.adopt(
          'workers',
          await startWorkerProcesses({
            start: {
              deployment: name,
              config: workerConfig,
              logLevel: logger.level,
              registryFromParent: inProcess !== undefined,
              functionsFromParent: functionsStore !== undefined,
            },
            listen,
            ...(inProcess ? { registry: inProcess } : {}),
            ...(functionsStore ? { functionsStore } : {}),
            metrics,
            logger,
          }),
        );
        workerAddresses.push(...children.addresses);
      }
      for (let i = 0; workerConfig === undefined && i < config.up.workers; i++) {
        const ioScopes = storage.scopesForWorker();
        const executor = stack.adopt(
          `executor #${i}`,
          await executorFor(i, config, name, ioScopes.callIoHandler),
        );
        const worker = stack.adopt(
          `worker #${i}`,
          await runWorker({
            config,
            deployment: name,
            plugins: kernel.plugins,
            tables: () => storage.backend.tables,
            listen: listen[i] as string,
            logger: logger.child({ service: 'worker', worker: i }),
            registryWriter: await registryWriterFor(config, inProcess, logger),
            callRunner: executor.callRunner,
            ioScopes,
            metrics: { registry: metrics.registryFor({ service: 'worker', deployment: name }) },
            ...(executor.executorReadiness ? { executorReadiness: executor.executorReadiness } : {}),
            ...(executor.codeEpochs ? { codeEpochs: executor.codeEpochs } : {}),
          }),
        );
        if (executor.whenReady && !(await executor.whenReady(30_000))) {
          logger.warn(
            { worker: i },
            'executor not ready after 30 s: the worker answers Unavailable until it is',
          );
        }
        workerAddresses.push(worker.address);
      }
      // Started last, so it stops first: its feed never polls a Worker that is shutting down.
      const dashboardLog = logger.child({ service: 'dashboard' });
      const { followJobs } = opts;
      const withJobsOf = (feed: DashboardFeedHandle): DashboardFeedHandle =>
        followJobs === undefined
          ? feed
          : withFollowJobs({
              feed,
              read: followJobs,
              intervalMs: config.observability.dashboard.intervalMs,
              logger: dashboardLog,
            });
      const dashboard = stack.adopt(
        'dashboard',
        await serveDashboard({
          config,
          listenAddr: dashboardListen,
          ...(opts.dashboardKey ? { configKey: opts.dashboardKey } : {}),
          feed: withJobsOf(
            createDashboardFeed({
              ...coordinator.dashboardFeedInputs,
              intervalMs: config.observability.dashboard.intervalMs,
              logger: dashboardLog,
            }),
          ),
          logger: dashboardLog,
        }),
      );
      return {
        coordinatorAddress: coordinator.address,
        workerAddresses,
        registry: useEtcd ? 'etcd' : 'in-process',
        storage: storage.backend,
        metricsAddress: metrics.address,
        metricsRegistryFor: (labels: ServiceLabels) => metrics.registryFor(labels),
        dashboardUrl: dashboard.url,
      };
    },
  });
  return {
    plan,
    ...running.services,
    close: async () => {
      await running.stop('cluster stopped');
    },
  };
}

/**
 * `blockx up`'s dashboard address when the config names none: loopback, at the coordinator's port + 1
 * (127.0.0.1:8081 beside the default 127.0.0.1:8080), or a free port when the coordinator's port is 0 (as
 * tests ask) or the last one. A port in use fails the start with one line, like the coordinator's.
 */
export function upDashboardListen(coordinatorListen: string): string {
  const port = Number(/:(\d{1,5})$/.exec(coordinatorListen.trim())?.[1] ?? 0);
  return `127.0.0.1:${port > 0 && port < 65_535 ? port + 1 : 0}`;
}

async function registryWriterFor(
  config: BlockxConfig,
  inProcess: { writer(): WorkerRegistryWriter } | undefined,
  logger: PinoLogger,
): Promise<WorkerRegistryWriter> {
  if (inProcess) return inProcess.writer();
  // Loaded only for etcd: the default one-machine cluster never pays for the etcd client.
  const { etcdRegistryWriter } = await import('./registry-writer.js');
  return etcdRegistryWriter(config, logger) as WorkerRegistryWriter;
}

/**
 * Whether the config runs the Workers in child processes: `up.workerProcesses`, unless the storage is a
 * memory database (private to the process that opens it).
 */
export function workersInChildren(config: BlockxConfig): boolean {
  return config.up.workerProcesses && config.storage.url !== 'sqlite::memory:';
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
