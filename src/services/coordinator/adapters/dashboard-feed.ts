// The dashboard feed (docs/dashboard-data.md): the DashboardSource (src/contracts/dashboard.ts) inside
// the Coordinator process.
//
//   const feed = createDashboardFeed({
//     coordinatorServer,   // CoordinatorServer (its read lock around the core), read as the admin service reads it
//     workerClients,       // WorkerRpcClient: ListRecentTasks over the Coordinator's Worker channels
//     backfillJobs,        // optional: the CoordinatorJobsService table (ReportBackfillProgress)
//     registryPrefixes,    // optional: RegistrySource[] the Coordinator watches (labels the cluster view)
//     clock,               // optional, UTC ms (default Date.now)
//     intervalMs,          // optional, default DEFAULT_DASHBOARD_INTERVAL_MS (1000)
//     workerTimeoutMs,     // optional, default DEFAULT_WORKER_POLL_TIMEOUT_MS (800)
//     logger,              // optional
//   });
//   feed.start();          // first snapshot at once, then one per interval
//   feed.snapshot();       // DashboardSnapshot (an empty one until the first poll finishes)
//   const off = feed.onSnapshot((s) => ...);
//   await feed.pollNow();  // one poll now (tests); resolves with its snapshot
//   feed.stop();           // clears every timer; closes nothing it does not own
//
// RunningCoordinator (src/services/coordinator/app/run-coordinator.ts) exposes `dashboardFeedInputs`
// = { coordinatorServer, workerClients, backfillJobs, registryPrefixes }, so the process wiring is
// `createDashboardFeed({ ...running.dashboardFeedInputs, logger })`.
//
// One poll: read the cluster view under the core's read lock (clusterStatus + clusterStatusView, exactly
// what GetClusterStatus answers), ask every Worker of that view for the tasks that changed since the
// last poll (each call with its own deadline; a Worker that fails or does not answer in time is
// skipped for this poll and never holds the snapshot up longer than the deadline), feed the answers to
// the pure DashboardModel (core/dashboard-model.ts), add the backfill jobs, publish. Polls never overlap:
// the next is armed when one ends, `intervalMs` after it began (at once if it took longer).

import { type ServiceLogger, silentLogger } from '../../../kernel/observability/service-logger.js';
import type { DashboardSnapshot, DashboardSource } from '../../../contracts/dashboard.js';
import type { ListRecentTasksResponse__Output } from '../../../generated/proto/blockx/worker/v1/ListRecentTasksResponse.js';
import { describeError } from '../../registry/registry-port.js';
import { clusterStatus, clusterStatusView } from '../core/cluster-status.js';
import type { RegistrySource } from '../core/cluster-status.js';
import { DashboardModel } from '../core/dashboard-model.js';
import type { CoreReader } from './admin-server.js';
import type { BackfillJobsReader } from './jobs-server.js';
import { TOP_LEVEL_DEFAULTS } from '../../../kernel/config-defaults.js';

/** How often the feed assembles a snapshot when `intervalMs` is not given (the config field's default). */
export const DEFAULT_DASHBOARD_INTERVAL_MS = TOP_LEVEL_DEFAULTS.observability.dashboard.intervalMs;
/** The deadline of one ListRecentTasks call when `workerTimeoutMs` is not given. */
export const DEFAULT_WORKER_POLL_TIMEOUT_MS = 800;
/**
 * Recent tasks a snapshot carries at most: more than one view shows (VIEW_RECENT_TASKS, 100), so that a
 * submitter's own newest tasks are still in it while other clients are busy (the dashboard shows each
 * viewer its own: docs/security.md § Roles).
 */
export const FEED_RECENT_TASKS = 1_000;
/** Workers asked per poll at most; a bigger cluster is polled in turns (round robin). */
export const MAX_WORKERS_PER_POLL = 512;

/** The part of WorkerRpcClient the feed uses. */
export interface RecentTasksClient {
  listRecentTasks(
    workerAddr: string,
    req: { readonly afterSeq: number; readonly limit: number },
    opts: { readonly timeoutMs: number },
  ): Promise<ListRecentTasksResponse__Output>;
}

export interface DashboardFeedOptions {
  readonly coordinatorServer: CoreReader;
  readonly workerClients: RecentTasksClient;
  readonly backfillJobs?: BackfillJobsReader;
  readonly registryPrefixes?: readonly RegistrySource[];
  /** Where a Worker's heartbeat came from, when the watcher can tell (as the admin service takes it). */
  readonly registryEntryOf?: (workerAddr: string) => RegistrySource | undefined;
  readonly clock?: () => number;
  readonly intervalMs?: number;
  readonly workerTimeoutMs?: number;
  readonly logger?: ServiceLogger;
}

export interface DashboardFeed extends DashboardSource {
  /** Polls at once, then every `intervalMs`. Idempotent. */
  start(): void;
  /** Clears the timer; a poll in flight finishes without publishing. Idempotent. */
  stop(): void;
  /** One poll now (joins the one in flight, if any); resolves with the snapshot it published. */
  pollNow(): Promise<DashboardSnapshot>;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RangeError(`${name} must be a positive integer (ms), got ${value}`);
  }
  return value;
}

export function createDashboardFeed(opts: DashboardFeedOptions): DashboardFeed {
  return new Feed(opts);
}

class Feed implements DashboardFeed {
  private readonly clock: () => number;
  private readonly intervalMs: number;
  private readonly workerTimeoutMs: number;
  private readonly logger: ServiceLogger;
  private readonly prefixes: readonly string[];
  private readonly sourceOf: (workerAddr: string) => RegistrySource | undefined;
  private readonly model = new DashboardModel();
  private readonly listeners = new Set<(s: DashboardSnapshot) => void>();
  /** Workers whose last poll failed (logged once per failure streak). */
  private readonly failing = new Set<string>();
  private latest: DashboardSnapshot;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private inFlight: Promise<DashboardSnapshot> | undefined;
  private rotation = 0;

  constructor(private readonly opts: DashboardFeedOptions) {
    this.clock = opts.clock ?? Date.now;
    this.intervalMs = positiveInteger('intervalMs', opts.intervalMs ?? DEFAULT_DASHBOARD_INTERVAL_MS);
    this.workerTimeoutMs = positiveInteger(
      'workerTimeoutMs',
      opts.workerTimeoutMs ?? DEFAULT_WORKER_POLL_TIMEOUT_MS,
    );
    this.logger = opts.logger ?? silentLogger;
    const prefixes = opts.registryPrefixes ?? [];
    this.prefixes = prefixes.map((p) => p.prefix);
    this.sourceOf =
      opts.registryEntryOf ?? (prefixes.length === 1 ? () => prefixes[0] : (): undefined => undefined);
    const now = this.clock();
    this.latest = {
      atMs: now,
      cluster: {
        ready: false,
        unavailableReason: 'the dashboard feed has not polled yet',
        nowMs: now,
        initialized: false,
        watchDisconnectedAtMs: 0,
        registryPrefixes: [...this.prefixes],
        limits: null,
        workers: [],
      },
      throughput: this.model.throughput(now),
      recentTasks: [],
      backfills: [],
    };
  }

  snapshot(): DashboardSnapshot {
    return this.latest;
  }

  onSnapshot(listener: (snapshot: DashboardSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop();
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  pollNow(): Promise<DashboardSnapshot> {
    this.inFlight ??= this.poll().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private loop(): void {
    if (!this.running) return;
    const began = this.clock();
    void this.pollNow().finally(() => {
      if (!this.running) return;
      const wait = Math.max(0, this.intervalMs - (this.clock() - began));
      this.timer = setTimeout(() => this.loop(), wait);
      this.timer.unref();
    });
  }

  private async poll(): Promise<DashboardSnapshot> {
    let cluster: DashboardSnapshot['cluster'];
    try {
      const status = await this.opts.coordinatorServer.withCoreRead((core) =>
        clusterStatus(core, this.clock()),
      );
      cluster = clusterStatusView(status, this.prefixes, this.sourceOf);
    } catch (err) {
      this.logger.error({ err: describeError(err) }, 'dashboard feed: reading the cluster view failed');
      return this.latest;
    }
    const addrs = cluster.workers.map((w) => w.workerAddr);
    await Promise.all(this.pollTurn(addrs).map((addr) => this.pollWorker(addr)));
    const now = this.clock();
    const present = new Set(addrs);
    this.model.retainWorkers(present, now);
    for (const addr of this.failing) if (!present.has(addr)) this.failing.delete(addr);
    const snapshot: DashboardSnapshot = {
      atMs: now,
      cluster,
      throughput: this.model.throughput(now),
      recentTasks: this.model.recentTasks(FEED_RECENT_TASKS),
      backfills: this.opts.backfillJobs?.list(now) ?? [],
    };
    this.latest = snapshot;
    for (const listener of this.listeners) {
      try {
        listener(snapshot);
      } catch (err) {
        this.logger.warn({ err: describeError(err) }, 'dashboard feed: a snapshot listener failed');
      }
    }
    return snapshot;
  }

  /** The Workers asked this poll: all of them, or the next MAX_WORKERS_PER_POLL in turn. */
  private pollTurn(addrs: readonly string[]): readonly string[] {
    if (addrs.length <= MAX_WORKERS_PER_POLL) return addrs;
    const start = this.rotation % addrs.length;
    this.rotation = start + MAX_WORKERS_PER_POLL;
    return Array.from({ length: MAX_WORKERS_PER_POLL }, (_, i) => addrs[(start + i) % addrs.length]!);
  }

  private async pollWorker(workerAddr: string): Promise<void> {
    const afterSeq = this.model.cursorOf(workerAddr);
    let res: ListRecentTasksResponse__Output;
    try {
      res = await this.opts.workerClients.listRecentTasks(
        workerAddr,
        { afterSeq, limit: 0 },
        { timeoutMs: this.workerTimeoutMs },
      );
    } catch (err) {
      if (!this.failing.has(workerAddr)) {
        this.failing.add(workerAddr);
        this.logger.debug(
          { workerAddr, err: describeError(err) },
          'dashboard feed: ListRecentTasks failed; the worker is skipped until it answers',
        );
      }
      return;
    }
    this.failing.delete(workerAddr);
    this.model.applyReport(
      {
        workerAddr,
        afterSeq,
        instance: res.workerInstance,
        lastSeq: res.lastSeq,
        succeededTotal: res.succeededTotal,
        failedTotal: res.failedTotal,
        truncated: res.truncated,
        tasks: res.tasks,
      },
      this.clock(),
    );
  }
}
