// The cluster status query: what `blockx status` (CoordinatorAdminService.GetClusterStatus) shows. A pure
// read of the core at `now`: readiness, the limits, and one row per Worker with its slots, load, breaker
// and whether the next ReserveWorkerSlot would consider it.
//
// "Routable" answers exactly the question selection asks, with the same hard filters in the same order
// (selection.ts): heartbeat timed out → cpu / memory / error rate strictly above a red line → breaker open
// → no free capacity (net of this Coordinator's own claims, worker-view.ts); a core that is not ready
// routes nowhere. A Worker is reported under the FIRST filter
// it fails, as selection counts it. (The per-request `excluded` filter has no meaning here.) A property
// test pins that a Worker is routable iff selectCandidate can pick it.
//
// Breaker states (closed, open, half-open) are circuit-breaker.ts's.
//
// clusterStatusView turns the result into the shared view (src/contracts/cluster-status.ts) the
// Coordinator sends and every reader receives: absent optional values become 0 or the empty string.

import type {
  ClusterStatusView,
  HeartbeatFigures,
  WorkerJudgement,
  WorkerStatusView,
} from '../../../contracts/cluster-status.js';
import type { RegistryPrefixFormat } from '../../../contracts/registry-prefix.js';
import { breakerState, isBreakerOpen, type BreakerState } from './circuit-breaker.js';
import type { CoordinatorCoreConfig } from './config.js';
import { heartbeatFreshness } from './freshness.js';
import type { WorkerView } from './worker-view.js';
import { freeCapacityAt, localReservationsAt } from './worker-view.js';

/** Why a Worker would not be tried, in the order the filters apply. */
export const NotRoutableCode = {
  NOT_READY: 'NOT_READY',
  HEARTBEAT_TIMED_OUT: 'HEARTBEAT_TIMED_OUT',
  OVERLOADED: 'OVERLOADED',
  BREAKER_OPEN: 'BREAKER_OPEN',
  NO_FREE_SLOTS: 'NO_FREE_SLOTS',
} as const;
export type NotRoutableCode = (typeof NotRoutableCode)[keyof typeof NotRoutableCode];

export interface NotRoutable {
  readonly code: NotRoutableCode;
  /** The same in words, with the numbers that decided it. */
  readonly reason: string;
}

/** One row: the heartbeat's figures and the shared judgement (contracts/cluster-status.ts), typed. */
export interface ClusterWorkerStatus extends HeartbeatFigures, WorkerJudgement {
  /** The heartbeat's code version and why it is not the deployed one ('' when absent). */
  readonly codeVersion: string;
  readonly codeVersionError: string;
  readonly breakerState: BreakerState;
  /** When an open breaker closes; undefined unless open. */
  readonly breakerOpenUntilMs: number | undefined;
  /** Undefined when routable. */
  readonly notRoutable: NotRoutable | undefined;
}

export interface ClusterStatus {
  readonly nowMs: number;
  readonly ready: boolean;
  readonly unavailableReason: string | undefined;
  readonly initialized: boolean;
  readonly watchDisconnectedAtMs: number | undefined;
  readonly limits: CoordinatorCoreConfig;
  /** Sorted by address. */
  readonly workers: readonly ClusterWorkerStatus[];
}

/** The read-only part of CoordinatorCore this query needs (CoordinatorCore satisfies it). */
export interface ClusterStatusSource {
  readonly config: CoordinatorCoreConfig;
  readonly isInitialized: boolean;
  readonly watchDisconnectedAtMs: number | undefined;
  unavailableReason(now: number): string | undefined;
  /** Used for the sorted list of addresses. */
  workersSnapshot(now: number): readonly { readonly workerAddr: string }[];
  getWorker(workerAddr: string): WorkerView | undefined;
}

export function clusterStatus(core: ClusterStatusSource, now: number): ClusterStatus {
  const unavailableReason = core.unavailableReason(now);
  const workers: ClusterWorkerStatus[] = [];
  for (const { workerAddr } of core.workersSnapshot(now)) {
    const v = core.getWorker(workerAddr);
    if (v !== undefined) workers.push(clusterWorkerStatus(v, now, core.config, unavailableReason));
  }
  return {
    nowMs: now,
    ready: unavailableReason === undefined,
    unavailableReason,
    initialized: core.isInitialized,
    watchDisconnectedAtMs: core.watchDisconnectedAtMs,
    limits: core.config,
    workers,
  };
}

/** Where a Worker's winning heartbeat came from (known to the registry watcher, not the core). */
export interface RegistrySource {
  readonly prefix: string;
  readonly format: RegistryPrefixFormat;
}

/**
 * The shared view of `status`. `registryPrefixes` are the prefixes watched; `sourceOf` says which one a
 * Worker came from (undefined: unknown, reported empty).
 */
export function clusterStatusView(
  status: ClusterStatus,
  registryPrefixes: readonly string[],
  sourceOf: (workerAddr: string) => RegistrySource | undefined,
): ClusterStatusView {
  const l = status.limits;
  return {
    ready: status.ready,
    unavailableReason: status.unavailableReason ?? '',
    nowMs: status.nowMs,
    initialized: status.initialized,
    watchDisconnectedAtMs: status.watchDisconnectedAtMs ?? 0,
    registryPrefixes: [...registryPrefixes],
    limits: {
      heartbeatTimeoutMs: l.heartbeatTimeoutMs,
      watchGracePeriodMs: l.watchGracePeriodMs,
      slotTtlMs: l.slotTtlMs,
      maxCandidates: l.maxCandidates,
      circuitBreakerThreshold: l.circuitBreakerThreshold,
      circuitBreakerCooldownMs: l.circuitBreakerCooldownMs,
      cpuRedLine: l.cpuRedLine,
      memoryRedLine: l.memoryRedLine,
      errorRateRedLine: l.errorRateRedLine,
    },
    workers: status.workers.map((w) => workerStatusView(w, sourceOf(w.workerAddr))),
  };
}

function workerStatusView(w: ClusterWorkerStatus, source: RegistrySource | undefined): WorkerStatusView {
  return {
    workerAddr: w.workerAddr,
    registryPrefix: source?.prefix ?? '',
    registryFormat: source?.format ?? '',
    taskSlots: w.taskSlots,
    reservedSlots: w.reservedSlots,
    runningTasks: w.runningTasks,
    freeSlots: w.freeSlots,
    cpuPercent: w.cpuPercent,
    memoryPercent: w.memoryPercent,
    memoryAvailableBytes: w.memoryAvailableBytes,
    memoryTotalBytes: w.memoryTotalBytes,
    processRssBytes: w.processRssBytes,
    errorRate: w.errorRate,
    lastHeartbeatMs: w.lastHeartbeatMs,
    heartbeatAgeMs: w.heartbeatAgeMs,
    breakerState: w.breakerState,
    breakerOpenUntilMs: w.breakerOpenUntilMs ?? 0,
    consecutiveFailures: w.consecutiveFailures,
    penalty: w.penalty,
    routable: w.routable,
    notRoutableCode: w.notRoutable?.code ?? '',
    notRoutableReason: w.notRoutable?.reason ?? '',
    codeVersion: w.codeVersion,
    codeVersionError: w.codeVersionError,
  };
}

/** One row. `unavailableReason` is the core's (undefined when ready). */
export function clusterWorkerStatus(
  v: WorkerView,
  now: number,
  cfg: CoordinatorCoreConfig,
  unavailableReason?: string,
): ClusterWorkerStatus {
  const state = breakerState(v, now, cfg);
  const notRoutable =
    unavailableReason !== undefined
      ? { code: NotRoutableCode.NOT_READY, reason: `coordinator not ready: ${unavailableReason}` }
      : routingBlocker(v, now, cfg);
  return {
    workerAddr: v.workerAddr,
    taskSlots: v.taskSlots,
    reservedSlots: v.reservedSlots,
    runningTasks: v.runningTasks,
    freeSlots: freeCapacityAt(v, now, cfg.slotTtlMs),
    cpuPercent: v.cpuPercent,
    memoryPercent: v.memoryPercent,
    memoryAvailableBytes: v.memoryAvailableBytes,
    memoryTotalBytes: v.memoryTotalBytes,
    processRssBytes: v.processRssBytes,
    errorRate: v.errorRate,
    lastHeartbeatMs: v.lastHeartbeatMs,
    heartbeatAgeMs: now - v.lastHeartbeatMs,
    breakerState: state,
    breakerOpenUntilMs: state === 'open' ? v.circuitBreakerDeadlineMs : undefined,
    consecutiveFailures: v.recentFailureCount,
    penalty: v.penalty,
    routable: notRoutable === undefined,
    notRoutable,
    codeVersion: v.codeVersion ?? '',
    codeVersionError: v.codeVersionError ?? '',
  };
}

/** The first hard filter `v` fails at `now` (selection.ts order), or undefined when it passes them all. */
export function routingBlocker(
  v: WorkerView,
  now: number,
  cfg: CoordinatorCoreConfig,
): NotRoutable | undefined {
  const age = now - v.lastHeartbeatMs;
  const freshness = heartbeatFreshness(v.lastHeartbeatMs, now, cfg);
  if (freshness === 'stale') {
    return {
      code: NotRoutableCode.HEARTBEAT_TIMED_OUT,
      reason: `last heartbeat ${seconds(age)} ago (timeout ${seconds(cfg.heartbeatTimeoutMs)})`,
    };
  }
  if (freshness === 'ahead') {
    // The same code as a timed-out heartbeat (the proto's code list is closed: both mean "not fresh");
    // the reason tells them apart.
    return {
      code: NotRoutableCode.HEARTBEAT_TIMED_OUT,
      reason: `last heartbeat ${seconds(-age)} ahead of this coordinator's clock (max skew ${seconds(cfg.maxClockSkewMs)})`,
    };
  }
  const over: string[] = [];
  if (v.cpuPercent > cfg.cpuRedLine) over.push(`cpu ${fraction(v.cpuPercent)} > ${fraction(cfg.cpuRedLine)}`);
  if (v.memoryPercent > cfg.memoryRedLine) {
    over.push(`memory ${fraction(v.memoryPercent)} > ${fraction(cfg.memoryRedLine)}`);
  }
  if (v.errorRate > cfg.errorRateRedLine) {
    over.push(`error rate ${fraction(v.errorRate)} > ${fraction(cfg.errorRateRedLine)}`);
  }
  if (over.length > 0) {
    return { code: NotRoutableCode.OVERLOADED, reason: `above red line: ${over.join(', ')}` };
  }
  if (isBreakerOpen(v, now)) {
    return {
      code: NotRoutableCode.BREAKER_OPEN,
      reason: `circuit breaker open for ${seconds(v.circuitBreakerDeadlineMs - now)} more (${v.recentFailureCount} consecutive failures)`,
    };
  }
  const free = freeCapacityAt(v, now, cfg.slotTtlMs);
  if (free <= 0) {
    const local = v.pendingClaims + localReservationsAt(v, now, cfg.slotTtlMs);
    const ours = local > 0 ? ` + ${local} reserved here since the last heartbeat` : '';
    return {
      code: NotRoutableCode.NO_FREE_SLOTS,
      reason: `no free slots (${v.reservedSlots} reserved + ${v.runningTasks} running${ours} of ${v.taskSlots})`,
    };
  }
  return undefined;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function fraction(x: number): string {
  return x.toFixed(2);
}
