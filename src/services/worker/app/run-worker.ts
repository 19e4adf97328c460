// Wires one Worker process: core + orchestrator + gRPC server (WorkerService, grpc.health.v1) +
// WatchTasks subscriptions + heartbeats, for one deployment of the config.
//
//   runWorker(opts) → { address, port, core, orchestrator, drain(), close() }
//
// Ports not given get their standalone defaults: the real Calls phase (ExecutorCallRunner, the
// dispatcher) over an in-process link that runs the functions in this process (in-process-link.ts;
// dev/tests only, logged as such, closed with the Worker), one static code epoch, an IO scope without
// storage, and an executor that is ready at once. Health is NOT_SERVING until the executor is ready and again from the start of a drain (the
// core's ServingStatusChanged drives it).
//
// drain(): stop admitting (SubmitTask / RequestTaskSlot answer Unavailable), stop heartbeats (the
// Coordinator stops routing here), let tasks holding a slot finish for up to `drainTimeoutMs`, then
// close. close(): stop timers, abort what still runs (its watchers get a CANCELLED terminal update),
// stop the gRPC server (WatchTasks streams get a short grace), close the IO scopes.
//
// Metrics: every Worker has its own prom-client Registry (`running.metrics.registry`; given through
// `metrics.registry` or created here), labelled {service: worker, deployment, instance: address} once
// bound. The process serves it (src/app/process-metrics.ts: one endpoint per process, the same in
// `blockx up` and `blockx worker`); `prometheusListen` makes runWorker serve it itself, at
// `observability.prometheus.path`, until close() (tests and single-service embedding).

import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { SERVER_OPTIONS } from '../../../grpc/channel-options.js';
import { createHealth, type Health } from '../../../grpc/health.js';
import { SERVICE_NAMES, workerAdminServiceDefinition, workerServiceDefinition } from '../../../grpc/proto.js';
import { bindServer, shutdownServer } from '../../../grpc/server.js';
import { withAuthorization } from '../../../grpc/authorization.js';
import { serverCredentials } from '../../../grpc/tls.js';
import { TeardownStack } from '../../../kernel/teardown-stack.js';
import { serviceTls } from '../../../kernel/tls-files.js';
import type { Registry } from 'prom-client';
import type { BlockxConfig, WorkerConfig } from '../../../kernel/config-types.js';
import {
  startOptionalMetricsServer,
  type RunningMetricsServer,
} from '../../../kernel/observability/metrics-server.js';
import { createServiceRegistry, setServiceLabels } from '../../../kernel/observability/service-registry.js';
import type { PluginKind, PluginRegistry } from '../../../kernel/plugin-registry.js';
import type { WorkerRegistryWriter } from '../../registry/registry-port.js';
import { WorkerCore } from '../core/index.js';
import { ManualExecutorReadiness } from '../../call-host/index.js';
import { NoStorageIoScopeFactory, StaticCodeEpochSource } from '../adapters/orchestration/default-ports.js';
import { DeploymentUnknownError } from '../../../kernel/errors.js';
import { workerServiceHandlers } from '../adapters/grpc/grpc-server.js';
import { RecentTasksRecorder, workerAdminServiceHandlers } from '../adapters/grpc/admin-server.js';
import { RunTasksStreams } from '../adapters/grpc/run-tasks-stream.js';
import { HeartbeatPublisher } from '../adapters/telemetry/heartbeat-publisher.js';
import { createInProcessCallRunner, dispatcherConfigFromWorker } from '../../call-host/index.js';
import { Orchestrator } from '../adapters/orchestration/orchestrator.js';
import { withBoundedTaskIds } from '../adapters/telemetry/worker-logger.js';
import { silentLogger, type ServiceLogger } from '../../../kernel/observability/service-logger.js';
import type { CallPhaseRunner, CodeEpochSource, ExecutorReadiness } from '../../call-host/index.js';
import type { TaskIoScopeFactory } from '../adapters/orchestration/ports.js';
import { SubscriptionManager } from '../adapters/grpc/subscription-manager.js';
import {
  statsSourceOf,
  WorkerMetrics,
  type DispatcherFigures,
  type IoFigures,
} from '../adapters/telemetry/worker-metrics.js';
import { advertiseAddress, boundAddress } from './advertise.js';

export interface RunWorkerOptions {
  readonly config: BlockxConfig;
  /** The deployment whose `worker` section this process runs (`block`, `bundle`, ...). */
  readonly deployment: string;
  readonly plugins: PluginRegistry;
  /**
   * The declared tables, as served now (admission refuses writers of tables tasks may not write).
   * Default: `config.tables`; `blockx up` passes its storage's, which a config reload extends
   * (docs/storage.md § Changing the config of a running cluster).
   */
  readonly tables?: () => BlockxConfig['tables'];
  /**
   * The Calls phase. Default: the dispatcher over an in-process link to `config.functions.dir`
   * (createInProcessCallRunner; dev/tests only: nothing isolates the functions from the Worker).
   */
  readonly callRunner?: CallPhaseRunner;
  readonly codeEpochs?: CodeEpochSource;
  readonly ioScopes?: TaskIoScopeFactory;
  /** Default: ready at once (right for the in-process link or a runner that needs no executor). */
  readonly executorReadiness?: ExecutorReadiness;
  /** Where heartbeats go (etcd, or the in-process registry of `blockx up`); none = standalone. */
  readonly registryWriter?: WorkerRegistryWriter;
  readonly logger?: ServiceLogger;
  /** Overrides `worker.listen` (e.g. `127.0.0.1:0`). */
  readonly listen?: string;
  /** Grace for open calls (WatchTasks streams) when the server stops. Default 1000 ms. */
  readonly shutdownGraceMs?: number;
  /** This Worker's metrics registry (one per Worker, never shared). Default: a new one. */
  readonly metrics?: { readonly registry?: Registry };
  /** IO counters for the metrics. Default: `ioScopes.stats()` when the factory has it. */
  readonly ioStats?: () => IoFigures;
  /**
   * Serve this Worker's metrics over HTTP on this address (at `observability.prometheus.path`) until
   * close(). Normally the process entry serves them; this is for tests and single-service embedding.
   */
  readonly prometheusListen?: string;
}

export interface RunningWorker {
  /** The advertised address (what clients dial, `worker_addr` in updates). */
  readonly address: string;
  /** The bound `host:port`. */
  readonly boundAddress: string;
  readonly port: number;
  readonly core: WorkerCore;
  readonly orchestrator: Orchestrator;
  readonly subscriptions: SubscriptionManager;
  /** The open RunTasks streams (docs/batched-protocol.md § Worker); `stats()` for tests. */
  readonly runTasks: RunTasksStreams;
  readonly health: Health;
  readonly workerConfig: WorkerConfig;
  readonly metrics: WorkerMetrics;
  /** The HTTP endpoint started for `prometheusListen`; undefined without it. */
  readonly metricsServer: RunningMetricsServer | undefined;
  /** Stop admitting, wait for running tasks (≤ drainTimeoutMs), then close. Idempotent. */
  drain(): Promise<void>;
  /** Stop now. Idempotent. */
  close(): Promise<void>;
}

export async function runWorker(opts: RunWorkerOptions): Promise<RunningWorker> {
  const { config, deployment, plugins } = opts;
  const dep = config.deployments[deployment];
  if (dep === undefined) throw new DeploymentUnknownError(deployment, Object.keys(config.deployments));
  const w = dep.worker;
  const logger = withBoundedTaskIds(opts.logger ?? silentLogger);
  const listen = opts.listen ?? w.listen;
  // Refused before anything starts: a plaintext listener other hosts can reach (docs/security.md).
  const tls = serviceTls(config.tls, `deployments.${deployment}.worker.listen`, listen);

  // The core reads its own fields of the section (core/config.ts) and ignores the rest.
  const core = new WorkerCore({ config: w, newSlotId: randomUUID });

  // What this Worker starts, to stop on close() (below) or when starting fails.
  const teardown = new TeardownStack();
  let callRunner = opts.callRunner;
  if (callRunner === undefined) {
    logger.warn(
      { functions_dir: config.functions.dir },
      'no executor wired: running functions in-process (development and tests only; a function that ' +
        'ignores ctx.signal cannot be stopped, and a hot loop blocks the worker)',
    );
    const inProcess = teardown.adopt(
      'in-process call runner',
      createInProcessCallRunner({
        functionsDir: config.functions.dir,
        dispatcher: dispatcherConfigFromWorker(w, config.functions.retry),
        logger,
      }),
    );
    callRunner = inProcess.runner;
  }
  const ioScopes = opts.ioScopes ?? new NoStorageIoScopeFactory();
  if (opts.ioScopes === undefined)
    logger.info({}, 'no storage wired: task IO operations will fail (NO_STORAGE)');
  const readiness = opts.executorReadiness ?? new ManualExecutorReadiness(true);

  const codeEpochs: CodeEpochSource = opts.codeEpochs ?? new StaticCodeEpochSource('local');
  const orchestrator = new Orchestrator({
    core,
    plugins,
    callRunner,
    codeEpochs,
    ioScopes,
    admission: w.admission,
    fusionMaxTasks: w.fusion.maxTasks,
    logger,
  });

  let address = '';
  const subscriptions = new SubscriptionManager(
    {
      taskSnapshot: (id) => orchestrator.taskSnapshot(id),
      watchAttached: (id) => orchestrator.watchAttached(id),
      watchDetached: (id) => orchestrator.watchDetached(id),
      now: () => orchestrator.now(),
    },
    () => address,
  );
  orchestrator.addListener(subscriptions);

  const registry = opts.metrics?.registry ?? createServiceRegistry({ service: 'worker', deployment });
  const metrics = new WorkerMetrics(registry, {
    slots: () => core.deriveHeartbeat(orchestrator.now()),
    semaphores: orchestrator.sems,
    dispatcher: statsSourceOf<DispatcherFigures>(callRunner),
    io: opts.ioStats ?? statsSourceOf<IoFigures>(ioScopes),
  });
  orchestrator.addListener(metrics);
  // The recent-task ring behind WorkerAdminService.ListRecentTasks (docs/dashboard-data.md).
  const recentTasks = new RecentTasksRecorder(() => orchestrator.now());
  orchestrator.addListener(recentTasks);

  const health = createHealth([SERVICE_NAMES.worker]);
  let publisher: HeartbeatPublisher | undefined;
  let resolveDrained: () => void = () => undefined;
  const drained = new Promise<void>((resolve) => (resolveDrained = resolve));
  orchestrator.addListener({
    onServingChanged: (change) => {
      health.setAllServing(change.serving);
      if (change.serving) publisher?.start();
      // A draining worker leaves the registry at once, so the Coordinator stops routing to it.
      if (change.draining) void publisher?.stop();
    },
    onDrained: () => resolveDrained(),
    // Freed slots reach the Coordinator before the next regular heartbeat (docs/batched-protocol.md).
    onTerminal: () => publisher?.capacityFreed(),
    onSlotReclaimed: () => publisher?.capacityFreed(),
  });

  // With TLS, every call is checked against the roles table first (docs/security.md § Roles).
  const server = new grpc.Server(
    withAuthorization(
      {
        ...SERVER_OPTIONS,
        'grpc.keepalive_time_ms': w.keepaliveTimeMs,
        'grpc.keepalive_timeout_ms': w.keepaliveTimeoutMs,
      },
      tls,
    ),
  );
  // docs/batched-protocol.md § Worker: credits per stream default to the slot count, so one stream
  // can keep the whole worker busy and no more.
  // SubmitTask admission also refuses writers of tables tasks may not write (docs/storage.md).
  const tablesNow = opts.tables ?? (() => config.tables);
  // Getters, not a copy: a process that loads its plugins again (LivePluginRegistry) is read as it is now.
  const admission = {
    get builders() {
      return plugins.builders;
    },
    get writers() {
      return plugins.writers;
    },
    validateTaskConfig: (kind: PluginKind, type: string, config: unknown) =>
      plugins.validateTaskConfig(kind, type, config),
    get tables() {
      return tablesNow();
    },
  };
  const runTasks = new RunTasksStreams({
    orchestrator,
    subscriptions,
    plugins: admission,
    logger,
    options: { maxInFlight: w.runTasks.maxInFlight ?? w.taskSlots, flushMs: w.runTasks.flushMs },
  });
  server.addService(
    workerServiceDefinition,
    workerServiceHandlers({
      orchestrator,
      subscriptions,
      plugins: admission,
      logger,
      runTasks,
      capacity: () => {
        const now = orchestrator.now();
        return { ...core.deriveHeartbeat(now), takenAtMs: now };
      },
    }),
  );
  server.addService(
    workerAdminServiceDefinition,
    workerAdminServiceHandlers({
      recent: recentTasks.tasks,
      workerInstance: randomUUID(),
      now: () => orchestrator.now(),
      logger,
      serving: async () => ({
        deployment,
        plugins: admission,
        tables: admission.tables,
        functions: await codeEpochs.functionNames?.(),
      }),
    }),
  );
  health.addToServer(server);
  const port = await bindServer(server, listen, serverCredentials(tls)).catch(async (err: unknown) => {
    await teardown.disposeAsync().catch(() => undefined); // the bind error is the one to report
    throw err;
  });
  // Unwound last: a start that fails from here on closes the bound server with the rest; on close() the
  // graceful shutdown below has already stopped it.
  teardown.defer('gRPC server (forced)', () => server.forceShutdown());
  address = advertiseAddress({
    configured: w.advertiseAddr,
    listen,
    boundPort: port,
    reachableFromOtherHosts: config.registry.etcd.endpoints.length > 0,
  });
  const bound = boundAddress(listen, port);
  setServiceLabels(registry, { service: 'worker', deployment, instance: address });
  const metricsServer = await startOptionalMetricsServer(
    opts.prometheusListen,
    config.observability.prometheus.path,
    registry,
    () => teardown.disposeAsync().catch(() => undefined), // the metrics error is the one to report
    { tls, allowPlaintext: config.tls.allowPlaintext },
  );

  if (opts.registryWriter !== undefined) {
    publisher = new HeartbeatPublisher({
      writer: opts.registryWriter,
      prefix: w.registryPrefix,
      workerAddr: address,
      intervalMs: w.heartbeatIntervalMs,
      capacityHeartbeatMs: w.capacityHeartbeatMs,
      deriveHeartbeat: () => core.deriveHeartbeat(orchestrator.now()),
      errorRate: () => orchestrator.recentErrorRate,
      ...(codeEpochs.codeVersion ? { codeVersion: () => codeEpochs.codeVersion?.() ?? {} } : {}),
      logger,
    });
  }

  orchestrator.start();
  const unsubscribe = readiness.subscribe((event) => {
    if (event.type === 'ready') {
      orchestrator.executorReady();
    } else {
      metrics.executorLost();
      orchestrator.executorLost(event.reason);
    }
  });
  if (core.serving) publisher?.start();
  logger.info(
    {
      address,
      bound,
      deployment,
      task_slots: w.taskSlots,
      ...(metricsServer === undefined ? {} : { metrics_address: metricsServer.address }),
    },
    'worker listening',
  );

  let closing: Promise<void> | undefined;
  let draining: Promise<void> | undefined;
  const graceMs = opts.shutdownGraceMs ?? 1_000;

  // close() unwinds these last registered first: stop admitting and abort what runs, stop heartbeats,
  // stop the server, wait for the tasks to settle, then close what they used. Every step runs even when
  // one fails (TeardownError lists the failures).
  if (metricsServer !== undefined) teardown.adopt('metrics server', metricsServer);
  teardown.defer('task settlement', () => orchestrator.settled());
  teardown.defer('gRPC server', () => shutdownServer(server, graceMs));
  teardown.defer('heartbeats', () => publisher?.stop());
  teardown.defer('running tasks', () => orchestrator.abortAll('worker shutting down'));
  teardown.defer('health', () => health.setAllServing(false));
  teardown.defer('executor readiness', unsubscribe);
  teardown.defer('orchestrator', () => orchestrator.stop());

  const close = (): Promise<void> =>
    (closing ??= teardown.disposeAsync().then(() => logger.info({ address }, 'worker stopped')));

  const drain = (): Promise<void> =>
    (draining ??= (async () => {
      orchestrator.startDraining();
      await publisher?.stop();
      logger.info({ drain_timeout_ms: w.drainTimeoutMs, active_tasks: orchestrator.activeTasks }, 'draining');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), w.drainTimeoutMs);
      });
      const outcome = await Promise.race([drained.then(() => 'drained' as const), timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') {
        logger.warn(
          { active_tasks: orchestrator.activeTasks },
          'drain timeout: cancelling the remaining tasks',
        );
      }
      await close();
    })());

  return {
    address,
    boundAddress: bound,
    port,
    core,
    orchestrator,
    subscriptions,
    runTasks,
    health,
    workerConfig: w,
    metrics,
    metricsServer,
    drain,
    close,
  };
}
