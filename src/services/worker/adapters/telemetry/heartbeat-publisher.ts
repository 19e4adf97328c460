// HeartbeatPublisher: the Worker's side of discovery (docs/architecture.md § etcd keys,
// docs/coordinator.md § The registry watch). Every `intervalMs` (WORKER_HEARTBEAT_INTERVAL, 200 ms by default), and early after
// tasks ended on a busy worker (`capacityFreed`, WORKER_CAPACITY_HEARTBEAT_MS), it puts the heartbeat JSON
// under `<prefix><workerAddr>` through a WorkerRegistryWriter: etcd (a leased put; the writer keeps the lease
// alive, re-grants it after a loss and re-puts) or the in-process registry under `blockx up`.
//
// The slot figures come from the Worker core through `deriveHeartbeat()`; the error rate from an injected
// source (the orchestrator's decayed worker-caused failure rate); cpu, memory and rss from a
// HostMetricsSource (default CapacitySampler: the worker's cgroup limits, else the host). What each field
// means and where it comes from: docs/health.md. A put still in flight when the next
// tick fires makes that tick a no-op, so a slow or absent etcd never piles up requests. `stop()` deletes
// the key and closes the writer (etcd: revokes the lease), so a clean shutdown leaves no trace, while a
// crash leaves the key to expire with the lease TTL.

import { type ServiceLogger, silentLogger } from '../../../../kernel/observability/service-logger.js';
import type { WorkerHeartbeat } from '../../../../contracts/heartbeat.js';
import { CapacitySampler, clampFraction } from './capacity-sampler.js';
import { describeError } from '../../../registry/registry-port.js';
import type { WorkerRegistryWriter } from '../../../registry/registry-port.js';

/** The Worker core's share of a heartbeat. */
export interface SlotFigures {
  readonly taskSlots: number;
  readonly reservedSlots: number;
  readonly runningTasks: number;
  readonly reclaimableSlots?: number;
}

/** The capacity share of a heartbeat (cgroup or host, see docs/health.md); percent fields are 0..1. */
export interface HostMetrics {
  readonly cpuPercent: number;
  readonly memoryPercent: number;
  readonly memoryAvailableBytes: number;
  readonly memoryTotalBytes: number;
  readonly processRssBytes: number;
}

export interface HostMetricsSource {
  sample(): HostMetrics;
  /** Where the cpu and memory figures come from (logged once at start). */
  sources?(): Readonly<Record<'cpu' | 'memory', string>>;
}

function count(v: number): number {
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

export interface HeartbeatPublisherOptions {
  /** Owned by the publisher from now on: `stop()` closes it. */
  readonly writer: WorkerRegistryWriter;
  /** The Worker's registry prefix (WORKER_REGISTRY_PREFIX), e.g. `/blockx/workers/`. */
  readonly prefix: string;
  /** The address Clients and the Coordinator dial; the key suffix. */
  readonly workerAddr: string;
  readonly intervalMs: number;
  /** The slot table's current figures. */
  readonly deriveHeartbeat: () => SlotFigures;
  /** Decayed share of recent tasks that failed through the worker's fault, 0..1 (default: always 0). */
  readonly errorRate?: () => number;
  /**
   * The code version new tasks get and, when it is not the cluster's deployed one, why
   * (docs/functions-deploy.md). Default: neither field is sent.
   */
  readonly codeVersion?: () => { readonly version?: string; readonly error?: string };
  readonly metrics?: HostMetricsSource;
  /**
   * The soonest an extra heartbeat follows the previous one after `capacityFreed()` on a busy worker
   * (worker.capacityHeartbeatMs; 0 or absent = off). See `capacityFreed`.
   */
  readonly capacityHeartbeatMs?: number;
  /** UTC ms for lastHeartbeatMs (default Date.now). */
  readonly clock?: () => number;
  readonly logger?: ServiceLogger;
}

export type PublishOutcome = 'published' | 'skipped' | 'failed' | 'stopped';

export class HeartbeatPublisher {
  private readonly opts: HeartbeatPublisherOptions;
  private readonly metrics: HostMetricsSource;
  private readonly clock: () => number;
  private readonly logger: ServiceLogger;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<PublishOutcome> | undefined;
  private stopping: Promise<void> | undefined;
  private failing = false;
  private readonly counts = { published: 0, skipped: 0, early: 0, failed: 0 };
  /** When the last put started (clock ms), its taskSlots, and the slots freed since it was built. */
  private lastPutAt = Number.NEGATIVE_INFINITY;
  private lastPutSlots = 0;
  private freedSincePut = 0;
  private earlyTimer: NodeJS.Timeout | undefined;
  private hostSample: HostMetrics | undefined;
  private hostSampledAt = Number.NEGATIVE_INFINITY;

  constructor(opts: HeartbeatPublisherOptions) {
    if (!Number.isSafeInteger(opts.intervalMs) || opts.intervalMs <= 0) {
      throw new RangeError(`heartbeat intervalMs must be a positive integer, got ${opts.intervalMs}`);
    }
    if (opts.workerAddr === '') throw new RangeError('heartbeat workerAddr must not be empty');
    this.opts = opts;
    this.metrics = opts.metrics ?? new CapacitySampler();
    this.clock = opts.clock ?? Date.now;
    this.logger = opts.logger ?? silentLogger;
  }

  /** Publishes at once, then every intervalMs until `stop()`. */
  start(): void {
    if (this.timer !== undefined || this.stopping !== undefined) return;
    this.timer = setInterval(() => void this.publishOnce(), this.opts.intervalMs);
    void this.publishOnce();
    const sources = this.metrics.sources?.();
    if (sources !== undefined)
      this.logger.info(
        { workerAddr: this.opts.workerAddr, cpu_source: sources.cpu, memory_source: sources.memory },
        'heartbeat capacity sources (docs/health.md)',
      );
  }

  /** Publish counters since construction (`early`: puts made by `capacityFreed`, also in `published`). */
  get stats(): Readonly<{ published: number; skipped: number; early: number; failed: number }> {
    return { ...this.counts };
  }

  /**
   * A task ended or a slot was reclaimed (docs/batched-protocol.md § Capacity heartbeats). The Coordinator
   * learns of freed slots only from heartbeats: until the next one it counts every slot it granted since
   * the last one as taken, so with short tasks a worker sits idle for most of each interval. Once an
   * eighth of the slots (at least one) has been freed since the last heartbeat, one extra heartbeat goes
   * out `capacityHeartbeatMs` after the previous put (at once if that is already past). Under a steady
   * stream of short tasks that is about one put per `capacityHeartbeatMs`; a lightly used worker, whose
   * tasks end fewer than taskSlots/8 per interval, sends none.
   */
  capacityFreed(): void {
    const minMs = this.opts.capacityHeartbeatMs ?? 0;
    if (minMs <= 0) return;
    this.freedSincePut++;
    if (this.earlyTimer !== undefined || this.freedSincePut < Math.max(1, Math.ceil(this.lastPutSlots / 8))) {
      return;
    }
    if (this.timer === undefined || this.stopping !== undefined) return;
    const wait = this.lastPutAt + minMs - this.clock();
    if (wait <= 0) {
      this.publishEarly();
      return;
    }
    this.earlyTimer = setTimeout(() => {
      this.earlyTimer = undefined;
      this.publishEarly();
    }, wait);
    this.earlyTimer.unref();
  }

  private publishEarly(): void {
    if (this.stopping !== undefined || this.inFlight !== undefined) return;
    this.counts.early += 1;
    void this.publishOnce();
  }

  /**
   * The heartbeat the next publish would send. The slot figures are read every time; the host's cpu and
   * memory at most twice per `intervalMs` (every regular one samples): an early heartbeat (`capacityFreed`) is about slots, and
   * sampling /proc 40 times a second showed in the worker's profile (docs/batched-protocol.md).
   */
  buildHeartbeat(): WorkerHeartbeat {
    const slots = this.opts.deriveHeartbeat();
    const now = this.clock();
    if (this.hostSample === undefined || 2 * (now - this.hostSampledAt) >= this.opts.intervalMs) {
      this.hostSample = this.metrics.sample();
      this.hostSampledAt = now;
    }
    const host = this.hostSample;
    const code = this.opts.codeVersion?.();
    return {
      workerAddr: this.opts.workerAddr,
      taskSlots: count(slots.taskSlots),
      reservedSlots: count(slots.reservedSlots),
      runningTasks: count(slots.runningTasks),
      cpuPercent: clampFraction(host.cpuPercent),
      memoryPercent: clampFraction(host.memoryPercent),
      memoryAvailableBytes: count(host.memoryAvailableBytes),
      memoryTotalBytes: count(host.memoryTotalBytes),
      processRssBytes: count(host.processRssBytes),
      errorRate: clampFraction(this.opts.errorRate?.() ?? 0),
      ...(slots.reclaimableSlots !== undefined && slots.reclaimableSlots > 0
        ? { reclaimableSlots: Math.min(count(slots.reclaimableSlots), count(slots.reservedSlots)) }
        : {}),
      lastHeartbeatMs: Math.floor(now),
      ...(code?.version ? { codeVersion: code.version } : {}),
      ...(code?.error ? { codeVersionError: code.error } : {}),
    };
  }

  /** One put, unless the previous one is still in flight ('skipped') or the publisher is stopping. */
  publishOnce(): Promise<PublishOutcome> {
    if (this.stopping !== undefined) return Promise.resolve('stopped');
    if (this.inFlight !== undefined) {
      this.counts.skipped += 1;
      return Promise.resolve('skipped');
    }
    const run = this.put().finally(() => {
      this.inFlight = undefined;
    });
    this.inFlight = run;
    return run;
  }

  /** Stops publishing, waits for a put in flight, deletes the key and closes the writer. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async put(): Promise<PublishOutcome> {
    try {
      const hb = this.buildHeartbeat();
      this.lastPutAt = this.clock();
      this.lastPutSlots = hb.taskSlots;
      this.freedSincePut = 0;
      await this.opts.writer.publish(this.opts.prefix, hb);
      this.counts.published += 1;
      if (this.failing) {
        this.failing = false;
        this.logger.info({ workerAddr: this.opts.workerAddr }, 'heartbeat publishing recovered');
      }
      return 'published';
    } catch (err) {
      this.counts.failed += 1;
      // One warning per outage; the rest at debug, so a long etcd outage does not flood the log.
      const fields = { workerAddr: this.opts.workerAddr, prefix: this.opts.prefix, err: describeError(err) };
      if (this.failing) this.logger.debug(fields, 'heartbeat publish failed');
      else this.logger.warn(fields, 'heartbeat publish failed; retrying every interval');
      this.failing = true;
      return 'failed';
    }
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.earlyTimer);
    this.earlyTimer = undefined;
    await this.inFlight;
    try {
      await this.opts.writer.remove(this.opts.prefix, this.opts.workerAddr);
    } catch (err) {
      this.logger.warn(
        { workerAddr: this.opts.workerAddr, err: describeError(err) },
        'could not delete the heartbeat key; it expires with its lease',
      );
    }
    await this.opts.writer.close();
  }
}
