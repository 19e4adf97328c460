// runCoordinator: wires one Coordinator process (docs/coordinator.md § Deployments and services) from the
// resolved config.
//
//   config.deployments[deployment] ─▶ CoordinatorCore (selection, breaker, grace)
//   registry (etcd when registry.etcd.endpoints is set, else the injected in-process one)
//       ─▶ EtcdWorkerWatcher ─▶ core, under CoordinatorServer's write lock
//   gRPC on coordinator.listen: CoordinatorService (kind block) or BundleCoordinatorService (kind bundle),
//       plus grpc.health.v1 — SERVING exactly while the core is ready (first full view built, watch not
//       down beyond the grace), NOT_SERVING otherwise and while shutting down.
//
// `close()` is the graceful shutdown: health NOT_SERVING, stop accepting calls and let open reservations
// finish (bounded), stop the watcher, close the registry client it owns and the Worker channels.
//
// Metrics: one prom-client Registry per Coordinator (`running.metrics.registry`; given through
// `metrics.registry` or created here), labelled {service: coordinator, deployment, instance: address}.
// The process serves it (src/app/process-metrics.ts: one endpoint per process, the same in `blockx up`
// and `blockx coordinator`); `prometheusListen` makes runCoordinator serve it itself, at
// `observability.prometheus.path`, until close() (tests and embedding).

import type { ServiceLogger } from '../../../kernel/observability/service-logger.js';
import type { FunctionsStore } from '../../functions-store/functions-store.js';
import { adminServiceHandlers } from '../adapters/admin-server.js';
import type { DashboardFeedOptions, RecentTasksClient } from '../adapters/dashboard-feed.js';
import { jobsServiceHandlers } from '../adapters/jobs-server.js';
import { BackfillJobs } from '../core/backfill-jobs.js';
import * as grpc from '@grpc/grpc-js';
import type { pino } from 'pino';
import type { Registry } from 'prom-client';
import { SERVER_OPTIONS } from '../../../grpc/channel-options.js';
import { createHealth } from '../../../grpc/health.js';
import {
  bundleCoordinatorServiceDefinition,
  coordinatorAdminServiceDefinition,
  coordinatorJobsServiceDefinition,
  coordinatorServiceDefinition,
  SERVICE_NAMES,
} from '../../../grpc/proto.js';
import { bindServer, listenAddress, shutdownServer } from '../../../grpc/server.js';
import { withAuthorization } from '../../../grpc/authorization.js';
import { serverCredentials } from '../../../grpc/tls.js';
import { TeardownStack } from '../../../kernel/teardown-stack.js';
import { serviceTls } from '../../../kernel/tls-files.js';
import type { BlockxConfig } from '../../../kernel/config-types.js';
import { ConfigError } from '../../../kernel/errors.js';
import { createLogger } from '../../../kernel/observability/logger.js';
import {
  startOptionalMetricsServer,
  type RunningMetricsServer,
} from '../../../kernel/observability/metrics-server.js';
import { createServiceRegistry, setServiceLabels } from '../../../kernel/observability/service-registry.js';
import type { ConfigIssue } from '../../../kernel/errors.js';
import { EtcdRegistryReader } from '../../registry/etcd-registry-reader.js';
import { etcdSecurityOf } from '../../registry/etcd-client.js';
import { validateRegistryPrefixes } from '../../../contracts/registry-prefix.js';
import type { RegistryPrefix } from '../../../contracts/registry-prefix.js';
import type { WorkerRegistryReader } from '../../registry/registry-port.js';
import { CoordinatorCore } from '../core/coordinator-core.js';
import { coordinatorCoreConfigFrom } from '../core/config.js';
import { CoordinatorConfigError } from '../core/errors.js';
import { BundleCoordinatorServer } from '../adapters/bundle-coordinator-server.js';
import { CoordinatorMetrics } from '../adapters/coordinator-metrics.js';
import { CoordinatorServer } from '../adapters/coordinator-server.js';
import { EtcdWorkerWatcher } from '../adapters/etcd-worker-watcher.js';
import type { WatcherStats } from '../adapters/etcd-worker-watcher.js';
import type { SlotReserver } from '../adapters/slot-reserver.js';
import { WorkerRpcClient } from '../adapters/worker-rpc-client.js';

/** How long `close()` lets open reservations finish before cancelling them. */
const SHUTDOWN_GRACE_MS = 5_000;

export interface RunCoordinatorOptions {
  readonly config: BlockxConfig;
  /** A deployment name declared in the config; its `kind` picks the service. */
  readonly deployment: string;
  /** Default: pino JSON on stdout at config.observability.logLevel. */
  readonly logger?: ServiceLogger;
  /** The registry when no etcd endpoints are configured (`blockx up`'s in-process registry). */
  readonly registry?: WorkerRegistryReader;
  /** UTC ms (default Date.now). */
  readonly clock?: () => number;
  /** Replaces the gRPC WorkerRpcClient (tests). */
  readonly reserver?: SlotReserver;
  /** This Coordinator's metrics registry (never shared between services). Default: a new one. */
  readonly metrics?: { readonly registry?: Registry };
  /**
   * Serve this Coordinator's metrics over HTTP on this address (at `observability.prometheus.path`)
   * until close(). Normally the process entry serves them; this is for tests and embedding.
   */
  readonly prometheusListen?: string;
  /** The functions store of an in-process cluster, served by the admin service (docs/functions-deploy.md). */
  readonly functionsStore?: FunctionsStore;
}

export interface RunningCoordinator {
  /** `host:port` actually bound (port resolved when the config asked for 0). */
  readonly address: string;
  readonly port: number;
  readonly deployment: string;
  /** Fully qualified gRPC service name served. */
  readonly service: string;
  /** Core readiness now (what health reports). */
  isReady(): boolean;
  watcherStats(): WatcherStats;
  readonly metrics: CoordinatorMetrics;
  /** The HTTP endpoint started for `prometheusListen`; undefined without it. */
  readonly metricsServer: RunningMetricsServer | undefined;
  /**
   * What `createDashboardFeed` (adapters/dashboard-feed.ts) needs of this Coordinator:
   * `createDashboardFeed({ ...running.dashboardFeedInputs, logger })`. The feed reads; it owns nothing here.
   */
  readonly dashboardFeedInputs: Pick<
    DashboardFeedOptions,
    'coordinatorServer' | 'workerClients' | 'backfillJobs' | 'registryPrefixes' | 'clock'
  >;
  close(): Promise<void>;
}

/** The Worker channels when a test injected its own SlotReserver: no Worker can be polled. */
const NO_WORKER_CHANNELS: RecentTasksClient = {
  listRecentTasks: () => Promise.reject(new Error('no worker channels (a test reserver is injected)')),
};

/** JSON lines on stdout (the Coordinator prints nothing else there) at observability.logLevel. */
export function createCoordinatorLogger(config: BlockxConfig, deployment: string): pino.Logger {
  return createLogger(config, { service: 'coordinator', deployment }, { destination: 1 });
}

export async function runCoordinator(opts: RunCoordinatorOptions): Promise<RunningCoordinator> {
  const { config, deployment } = opts;
  const dep = config.deployments[deployment];
  const issue = (path: string, message: string): ConfigIssue => ({
    source: 'file',
    file: config.configFile,
    path,
    message,
  });
  if (dep === undefined) {
    throw new ConfigError([
      {
        source: 'flag',
        variable: '--deployment',
        path: 'deployments',
        message: `unknown deployment "${deployment}" (declared: ${Object.keys(config.deployments).join(', ') || 'none'})`,
      },
    ]);
  }
  const c = dep.coordinator;
  const at = `deployments.${deployment}.coordinator`;

  const checked = validateRegistryPrefixes(c.registryPrefixes, dep.kind);
  if (!checked.ok) {
    throw new ConfigError(
      checked.errors.map((e) =>
        issue(`${at}.registryPrefixes${e.index === undefined ? '' : `.${e.index}`}`, e.message),
      ),
    );
  }
  const prefixes: readonly RegistryPrefix[] = checked.value;

  let core: CoordinatorCore;
  try {
    core = new CoordinatorCore(coordinatorCoreConfigFrom(c));
  } catch (err) {
    if (err instanceof CoordinatorConfigError) {
      throw new ConfigError(err.problems.map((p) => issue(`${at}.${p.field}`, p.message)));
    }
    throw err;
  }

  const endpoints = config.registry.etcd.endpoints;
  if (endpoints.length === 0 && opts.registry === undefined) {
    throw new ConfigError([
      issue(
        'registry.etcd.endpoints',
        'no worker registry: set registry.etcd.endpoints (ETCD_ENDPOINTS), or run the coordinator under `blockx up`',
      ),
    ]);
  }

  const logger: ServiceLogger = opts.logger ?? createCoordinatorLogger(config, deployment);
  const clock = opts.clock ?? Date.now;
  // Refused before anything starts: a plaintext listener other hosts can reach (docs/security.md).
  const tls = serviceTls(config.tls, `${at}.listen`, c.listen);
  // What this Coordinator starts, to stop on close() (below) or when starting fails.
  const teardown = new TeardownStack();
  const rpc = opts.reserver === undefined ? new WorkerRpcClient({ logger, tls }) : undefined;
  if (rpc !== undefined) teardown.adopt('worker channels', rpc);
  const registry = opts.metrics?.registry ?? createServiceRegistry({ service: 'coordinator', deployment });
  // The watcher is created below; its stats are read only at scrape time, once everything is wired.
  const metrics = new CoordinatorMetrics(registry, {
    core,
    clock,
    watcherStats: (): WatcherStats => watcher.stats,
  });
  const server = new CoordinatorServer({
    core,
    reserver: opts.reserver ?? (rpc as WorkerRpcClient),
    config: { maxTimeoutRetries: c.maxTimeoutRetries, workerRpcTimeoutMs: c.workerRpcTimeoutMs },
    clock,
    logger,
    observer: metrics,
  });
  const ownedReader =
    endpoints.length > 0
      ? new EtcdRegistryReader({
          endpoints,
          security: etcdSecurityOf(config.registry.etcd),
          unaryDeadlineMs: c.etcdDialTimeoutMs,
          retryDelayMs: c.etcdWatchRetryDelayMs,
          logger,
        })
      : undefined;
  if (ownedReader !== undefined) teardown.adopt('registry client', ownedReader);
  const reader: WorkerRegistryReader = ownedReader ?? (opts.registry as WorkerRegistryReader);

  const service = dep.kind === 'block' ? SERVICE_NAMES.coordinator : SERVICE_NAMES.bundleCoordinator;
  const health = createHealth([service]);
  const readiness = new ReadinessTracker(server, health, clock, logger);

  const watcher = new EtcdWorkerWatcher({
    reader,
    prefixes,
    server,
    clock,
    logger,
    onWorkerRemoved: (addr) => rpc?.forget(addr),
    onCoreChanged: () => readiness.refresh(),
  });

  // With TLS, every call is checked against the roles table first (docs/security.md § Roles).
  const grpcServer = new grpc.Server(withAuthorization(SERVER_OPTIONS, tls));
  if (dep.kind === 'block') grpcServer.addService(coordinatorServiceDefinition, server.handlers());
  else
    grpcServer.addService(bundleCoordinatorServiceDefinition, new BundleCoordinatorServer(server).handlers());
  // Operator view (`blockx status`): a separate service, so the CoordinatorService contract is untouched.
  grpcServer.addService(
    coordinatorAdminServiceDefinition,
    adminServiceHandlers(server, {
      prefixes,
      ...(opts.functionsStore ? { functions: opts.functionsStore } : {}),
    }),
  );
  // Backfill progress for the dashboard (docs/dashboard-data.md § Backfill jobs): advisory, bounded.
  const backfillJobs = new BackfillJobs();
  grpcServer.addService(
    coordinatorJobsServiceDefinition,
    jobsServiceHandlers(backfillJobs, { clock, logger }),
  );
  health.addToServer(grpcServer);

  let port: number;
  try {
    port = await bindServer(grpcServer, c.listen, serverCredentials(tls));
  } catch (err) {
    await teardown.disposeAsync().catch(() => undefined); // the bind error is the one to report
    throw err;
  }
  // Unwound last: a start that fails from here on closes the bound server with the rest; on close() the
  // graceful shutdown below has already stopped it.
  teardown.defer('gRPC server (forced)', () => grpcServer.forceShutdown());
  const target = listenAddress(c.listen);
  const address = target.startsWith('unix:') ? target : `${target.slice(0, target.lastIndexOf(':'))}:${port}`;
  setServiceLabels(registry, { service: 'coordinator', deployment, instance: address });
  const metricsServer = await startOptionalMetricsServer(
    opts.prometheusListen,
    config.observability.prometheus.path,
    registry,
    () => teardown.disposeAsync().catch(() => undefined), // the metrics error is the one to report
    { tls, allowPlaintext: config.tls.allowPlaintext },
  );

  if (metricsServer !== undefined) teardown.adopt('metrics server', metricsServer);

  watcher.start();
  teardown.defer('registry watch', () => watcher.stop());
  readiness.start();
  // close() unwinds these first: NOT_SERVING, then let open reservations finish (bounded) while the
  // watcher still feeds the view, then stop the watcher and close what it and the handlers used.
  teardown.defer('gRPC server', () => shutdownServer(grpcServer, SHUTDOWN_GRACE_MS));
  teardown.defer('health', () => health.setAllServing(false));
  teardown.defer('readiness', () => readiness.stop());
  logger.info(
    {
      address,
      grpcService: service,
      kind: dep.kind,
      prefixes: prefixes.map((p) => p.prefix),
      registry: ownedReader !== undefined ? { etcd: endpoints } : 'in-process',
      ...(metricsServer === undefined ? {} : { metrics_address: metricsServer.address }),
    },
    'coordinator listening',
  );

  let closing: Promise<void> | undefined;
  return {
    address,
    port,
    deployment,
    service,
    isReady: () => core.isReady(clock()),
    watcherStats: () => watcher.stats,
    metrics,
    metricsServer,
    dashboardFeedInputs: {
      coordinatorServer: server,
      workerClients: rpc ?? NO_WORKER_CHANNELS,
      backfillJobs,
      registryPrefixes: prefixes,
      clock,
    },
    close: () =>
      (closing ??= teardown.disposeAsync().then(() => logger.info({ address }, 'coordinator stopped'))),
  };
}

/**
 * Mirrors core readiness into grpc.health.v1. Readiness changes on registry events (refresh() is called
 * after each) and, during an outage, when the grace runs out: a timer is armed for that instant. A slow
 * safety poll covers anything else.
 */
class ReadinessTracker {
  private ready = false;
  private graceTimer: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly server: CoordinatorServer,
    private readonly health: ReturnType<typeof createHealth>,
    private readonly clock: () => number,
    private readonly logger: ServiceLogger,
  ) {}

  start(): void {
    this.poll = setInterval(() => this.refresh(), 1_000);
    this.poll.unref();
    this.refresh();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.poll);
    clearTimeout(this.graceTimer);
  }

  refresh(): void {
    if (this.stopped) return;
    void this.server
      .withCoreRead((core) => {
        const now = this.clock();
        return {
          now,
          ready: core.isReady(now),
          reason: core.unavailableReason(now),
          since: core.watchDisconnectedAtMs,
        };
      })
      .then(({ now, ready, reason, since }) => {
        if (this.stopped) return;
        if (ready !== this.ready) {
          this.ready = ready;
          this.health.setAllServing(ready);
          if (ready) this.logger.info({}, 'coordinator ready: SERVING');
          else this.logger.warn({ reason }, 'coordinator not ready: NOT_SERVING');
        }
        clearTimeout(this.graceTimer);
        this.graceTimer = undefined;
        if (ready && since !== undefined) {
          const graceMs = this.server.core.config.watchGracePeriodMs;
          this.graceTimer = setTimeout(() => this.refresh(), Math.max(1, since + graceMs + 1 - now));
          this.graceTimer.unref();
        }
      });
  }
}
