// Prometheus metrics of one Coordinator, in the registry it is given (one per Coordinator instance).
//
// The reservation loop reports to it as a ReservationObserver (coordinator-server.ts): one call per
// reservation of a task (ReserveWorkerSlot, or each distinct id of a ReserveWorkerSlots batch), per
// explicit rejection and per breaker trip, each a counter increment. The fleet figures
// are read from the core's view and the watcher's stats at scrape time, in `collect()` callbacks, so the
// request path pays nothing for them.
//
//   blockx_coordinator_reserve_total{outcome}            counter   ok|unavailable|exhausted|aborted|invalid|internal
//   blockx_coordinator_reserve_duration_seconds          histogram one ReserveWorkerSlot, all candidates
//   blockx_coordinator_candidates_tried_total            counter   Workers sent a RequestTaskSlot
//   blockx_coordinator_rejections_total{outcome}         counter   rejection | backpressure (a full pool)
//   blockx_coordinator_breaker_trips_total{cause}        counter   rejection | timeout
//   blockx_coordinator_breaker_open                      gauge     Workers whose breaker is open now
//   blockx_coordinator_workers{state}                    gauge     known | fresh | routable
//   blockx_coordinator_registry_workers{format}          gauge     legacy | v2 (watcher stats)
//   blockx_coordinator_registry_skipped_total{reason}    counter   unparseable | no_lease (watcher stats)
//   blockx_coordinator_ready                             gauge     1 while the view is trusted (health SERVING)

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { CoordinatorCore } from '../core/coordinator-core.js';
import { CoordinatorErrorCode } from '../core/errors.js';
import type { SlotOutcome } from '../core/inputs.js';
import type { WorkerStatus } from '../core/worker-status.js';
import type { ReservationObserver, ReservationRecord, ReserveResult } from './coordinator-server.js';
import type { WatcherStats } from './etcd-worker-watcher.js';

export type ReserveOutcome = 'ok' | 'unavailable' | 'exhausted' | 'aborted' | 'invalid' | 'internal';

const RESERVE_OUTCOMES: readonly ReserveOutcome[] = [
  'ok',
  'unavailable',
  'exhausted',
  'aborted',
  'invalid',
  'internal',
];

/** The `outcome` label of a reservation: its gRPC status class (grpc-status.ts). */
export function reserveOutcomeOf(result: ReserveResult | undefined): ReserveOutcome {
  if (result === undefined) return 'internal';
  if (result.ok) return 'ok';
  const code = result.error.code;
  switch (code) {
    case CoordinatorErrorCode.InvalidArgument:
      return 'invalid';
    case CoordinatorErrorCode.Unavailable:
      return 'unavailable';
    case CoordinatorErrorCode.NoExecutableSlot:
    case CoordinatorErrorCode.AllCandidatesRejected:
    case CoordinatorErrorCode.NoSlot:
      return 'exhausted';
    case CoordinatorErrorCode.SlotUncertain:
      return 'aborted';
    case CoordinatorErrorCode.InvalidSlot:
    case CoordinatorErrorCode.NotFound:
    case CoordinatorErrorCode.Internal:
    case CoordinatorErrorCode.InvalidConfig:
      return 'internal';
    default: {
      const _exhaustive: never = code;
      return _exhaustive;
    }
  }
}

/** Passes every hard filter of selection except the per-request exclusion (selection.ts). */
export function isRoutable(w: WorkerStatus, cfg: CoordinatorCore['config']): boolean {
  return (
    w.heartbeatFresh &&
    w.cpuPercent <= cfg.cpuRedLine &&
    w.memoryPercent <= cfg.memoryRedLine &&
    w.errorRate <= cfg.errorRateRedLine &&
    !w.breakerOpen &&
    w.freeSlots > 0
  );
}

export interface CoordinatorMetricsSources {
  readonly core: Pick<CoordinatorCore, 'workersSnapshot' | 'isReady' | 'config'>;
  /** UTC ms, the clock the core is fed with. */
  readonly clock: () => number;
  /** Absent: blockx_coordinator_registry_workers is not reported. */
  readonly watcherStats?: () => Pick<WatcherStats, 'byFormat'> &
    Partial<Pick<WatcherStats, 'skippedValues' | 'unleasedValues'>>;
}

/** Reservations take a few ms; a slow Worker holds one up to workerRpcTimeoutMs × retries × candidates. */
const RESERVE_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class CoordinatorMetrics implements ReservationObserver {
  readonly registry: Registry;
  private readonly reserves: Counter<'outcome'>;
  private readonly reserveDuration: Histogram;
  private readonly candidatesTried: Counter;
  private readonly rejections: Counter<'outcome'>;
  private readonly breakerTrips: Counter<'cause'>;

  constructor(registry: Registry, sources: CoordinatorMetricsSources) {
    this.registry = registry;
    const registers = [registry];
    this.reserves = new Counter({
      name: 'blockx_coordinator_reserve_total',
      help: 'ReserveWorkerSlot requests by outcome (the gRPC status class).',
      labelNames: ['outcome'] as const,
      registers,
    });
    // Every outcome is reported from the start, so rate() over a rare one is 0, not "no data".
    for (const outcome of RESERVE_OUTCOMES) this.reserves.inc({ outcome }, 0);
    this.reserveDuration = new Histogram({
      name: 'blockx_coordinator_reserve_duration_seconds',
      help: 'Duration of one ReserveWorkerSlot, every candidate and retry included.',
      buckets: RESERVE_BUCKETS_S,
      registers,
    });
    this.candidatesTried = new Counter({
      name: 'blockx_coordinator_candidates_tried_total',
      help: 'Workers sent a RequestTaskSlot (one per candidate per reservation, retries not counted).',
      registers,
    });
    this.rejections = new Counter({
      name: 'blockx_coordinator_rejections_total',
      help: 'Explicit refusals by Workers: backpressure (slot pool full) or rejection (anything else).',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.breakerTrips = new Counter({
      name: 'blockx_coordinator_breaker_trips_total',
      help: 'Times a Worker circuit breaker opened, by the failure that opened it.',
      labelNames: ['cause'] as const,
      registers,
    });

    const { core, clock } = sources;
    const breakerOpen = new Gauge({
      name: 'blockx_coordinator_breaker_open',
      help: 'Workers whose circuit breaker is open now.',
      registers,
      collect: () => {
        breakerOpen.set(core.workersSnapshot(clock()).filter((w) => w.breakerOpen).length);
      },
    });
    const workers = new Gauge({
      name: 'blockx_coordinator_workers',
      help: 'Workers in the view: known, fresh (heartbeat within the timeout), routable (passes every filter).',
      labelNames: ['state'] as const,
      registers,
      collect: () => {
        const rows = core.workersSnapshot(clock());
        workers.set({ state: 'known' }, rows.length);
        workers.set({ state: 'fresh' }, rows.filter((w) => w.heartbeatFresh).length);
        workers.set({ state: 'routable' }, rows.filter((w) => isRoutable(w, core.config)).length);
      },
    });
    const ready = new Gauge({
      name: 'blockx_coordinator_ready',
      help: '1 while the worker view is trusted and reservations are routed (health SERVING), else 0.',
      registers,
      collect: () => {
        ready.set(core.isReady(clock()) ? 1 : 0);
      },
    });
    const watcherStats = sources.watcherStats;
    if (watcherStats !== undefined) {
      const byFormat = new Gauge({
        name: 'blockx_coordinator_registry_workers',
        help: 'Workers in the registry by prefix format (a Worker under both formats counts in each).',
        labelNames: ['format'] as const,
        registers,
        collect: () => {
          for (const [format, count] of Object.entries(watcherStats().byFormat)) {
            byFormat.set({ format }, count);
          }
        },
      });
      const skipped = new Counter({
        name: 'blockx_coordinator_registry_skipped_total',
        help: 'Registry values the watcher ignored: unparseable or implausible, or written without a lease.',
        labelNames: ['reason'] as const,
        registers,
        collect: () => {
          // The watcher owns the (monotonic) counts; mirror them at scrape time.
          const st = watcherStats();
          skipped.reset();
          skipped.inc({ reason: 'unparseable' }, st.skippedValues ?? 0);
          skipped.inc({ reason: 'no_lease' }, st.unleasedValues ?? 0);
        },
      });
    }
  }

  onReservation(record: ReservationRecord): void {
    this.reserves.inc({ outcome: reserveOutcomeOf(record.result) });
    this.reserveDuration.observe(Math.max(0, record.durationMs) / 1000);
    if (record.candidatesTried > 0) this.candidatesTried.inc(record.candidatesTried);
  }

  onRejection(_workerAddr: string, outcome: SlotOutcome): void {
    this.rejections.inc({ outcome });
  }

  onBreakerTripped(_workerAddr: string, cause: 'rejection' | 'timeout'): void {
    this.breakerTrips.inc({ cause });
  }
}
