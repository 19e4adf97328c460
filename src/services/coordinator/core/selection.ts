// Candidate selection over the Worker views (docs/coordinator.md § Candidate selection).
//
// Hard filters, in order; a Worker is counted under the first one it fails:
//   1. excluded by the request (already tried);
//   2. heartbeat not fresh (freshness.ts): now - lastHeartbeatMs > heartbeatTimeoutMs (exactly at the
//      timeout: fresh), or lastHeartbeatMs - now > maxClockSkewMs (a heartbeat from the future);
//   3. cpu, memory or error rate strictly above its red line (exactly at it: passes);
//   4. circuit breaker open: now < circuitBreakerDeadlineMs (exactly at the deadline: closed);
//   5. no free capacity: free <= 0, where free = taskSlots - (reservedSlots + runningTasks) +
//      reclaimableSlots (docs/security.md § Reservations per client) minus this Coordinator's own claims
//      and reservations not yet shown by a heartbeat (worker-view.ts).
// Ranking of the survivors depends on the placement policy (config.ts, docs/placement.md):
//   capacity: 1. larger free capacity, 2. more recent lastHeartbeatMs, 3. smaller penalty,
//             4. lexicographically smaller workerAddr (UTF-16 code-unit order, which equals byte order for
//             the ASCII host:port addresses Workers register), so the choice is fully deterministic.
//   affinity: 1. higher rendezvous score of (taskId, workerAddr) (rendezvous.ts), 2. smaller workerAddr.
// While the registry watch is down (`probeFull`), a Worker that passes every filter but the last, has slots
// at all, and holds no claim or reservation of ours, is kept as a fallback: the one whose counts are the oldest is returned
// when nothing else passes. Its counts are frozen at its last answer (no heartbeat arrives), and the slots
// it has freed since show only when it is asked; a full pool is backpressure, and the answer brings fresh
// counts (docs/placement.md § Capacity from the Workers' answers).
// One O(n) pass keeping the best so far; no sort, no allocation per Worker. The scan is benchmarked at
// 10,000 Workers, hence the hand-written loops. Filtered Workers also feed the numbers of the
// NoExecutableSlot message (FilterDetails); that bookkeeping runs only on the filtered branches.

import type { CoordinatorCoreConfig } from './config.js';
import type { FilterCounts, FilterDetails } from './errors.js';
import { RENDEZVOUS_SALT } from './rendezvous.js';
import { localReservationsAt } from './worker-view.js';
import type { WorkerView } from './worker-view.js';

export interface ScanResult {
  readonly best: WorkerView | undefined;
  /** Workers whose heartbeat is fresh, excluded ones included. */
  readonly fresh: number;
  readonly filtered: FilterCounts;
  readonly details: FilterDetails;
}

/** True when `a` (with free capacity `aFree`) ranks strictly before `b` (with `bFree`): capacity policy. */
export function candidateRanksBefore(a: WorkerView, aFree: number, b: WorkerView, bFree: number): boolean {
  if (aFree !== bFree) return aFree > bFree;
  if (a.lastHeartbeatMs !== b.lastHeartbeatMs) return a.lastHeartbeatMs > b.lastHeartbeatMs;
  if (a.penalty !== b.penalty) return a.penalty < b.penalty;
  return a.workerAddr < b.workerAddr;
}

/** True when `a` (score `aScore`) ranks strictly before `b` (score `bScore`): affinity policy. */
export function affinityRanksBefore(a: WorkerView, aScore: number, b: WorkerView, bScore: number): boolean {
  if (aScore !== bScore) return aScore > bScore;
  return a.workerAddr < b.workerAddr;
}

export function emptyFilterDetails(): FilterDetails {
  return {
    cpuOver: 0,
    worstCpu: 0,
    memoryOver: 0,
    worstMemory: 0,
    errorRateOver: 0,
    worstErrorRate: 0,
    oldestHeartbeatAgeMs: 0,
    aheadOfClock: 0,
    furthestAheadMs: 0,
    longestBreakerMs: 0,
  };
}

/**
 * Applies the hard filters and the ranking to `views`; `excluded` holds view objects, not addresses.
 * `taskHash` (hashString32 of the task id) is used by the affinity policy only.
 */
export function scanCandidates(
  views: readonly WorkerView[],
  excluded: readonly WorkerView[],
  now: number,
  cfg: CoordinatorCoreConfig,
  taskHash = 0,
  probeFull = false,
): ScanResult {
  const excludedSet = excluded.length > 4 ? new Set(excluded) : undefined;
  const checkExcluded = excluded.length > 0;
  const { heartbeatTimeoutMs, maxClockSkewMs, cpuRedLine, memoryRedLine, errorRateRedLine, slotTtlMs } = cfg;
  const affinity = cfg.placement === 'affinity';
  const taskMix = taskHash ^ RENDEZVOUS_SALT;

  let best: WorkerView | undefined;
  // The fallback while the watch is down: a full-looking Worker with the oldest counts.
  let probe: WorkerView | undefined;
  // The best's free capacity (capacity policy) or rendezvous score (affinity policy).
  let bestKey = 0;
  let fresh = 0;
  const filtered: FilterCounts = {
    excluded: 0,
    heartbeatTimedOut: 0,
    overloaded: 0,
    circuitOpen: 0,
    noFreeCapacity: 0,
  };
  const details = emptyFilterDetails();
  for (let i = 0; i < views.length; i++) {
    const v = views[i]!;
    const age = now - v.lastHeartbeatMs;
    // heartbeatFreshness (freshness.ts), inlined for the 10,000-Worker scan.
    const ahead = -age > maxClockSkewMs;
    const stale = age > heartbeatTimeoutMs || ahead;
    if (!stale) fresh++;
    if (checkExcluded && isExcluded(v, excluded, excludedSet)) {
      filtered.excluded++;
      continue;
    }
    if (stale) {
      filtered.heartbeatTimedOut++;
      if (ahead) {
        details.aheadOfClock++;
        if (-age > details.furthestAheadMs) details.furthestAheadMs = -age;
      } else if (age > details.oldestHeartbeatAgeMs) details.oldestHeartbeatAgeMs = age;
      continue;
    }
    if (v.cpuPercent > cpuRedLine || v.memoryPercent > memoryRedLine || v.errorRate > errorRateRedLine) {
      filtered.overloaded++;
      noteOverload(v, cfg, details);
      continue;
    }
    if (now < v.circuitBreakerDeadlineMs) {
      filtered.circuitOpen++;
      const left = v.circuitBreakerDeadlineMs - now;
      if (left > details.longestBreakerMs) details.longestBreakerMs = left;
      continue;
    }
    let free = v.taskSlots - (v.reservedSlots + v.runningTasks) + (v.reclaimableSlots ?? 0);
    if (v.localHeld !== 0) free -= v.pendingClaims + localReservationsAt(v, now, slotTtlMs);
    if (free <= 0) {
      filtered.noFreeCapacity++;
      if (
        probeFull &&
        v.localHeld === 0 &&
        v.taskSlots > 0 &&
        (probe === undefined || probeRanksBefore(v, probe))
      )
        probe = v;
      continue;
    }
    if (affinity) {
      // rendezvousScore(taskHash, v.addrHash), inlined: this loop is past V8's inlining budget.
      let score = taskMix ^ v.addrHash;
      score ^= score >>> 16;
      score = Math.imul(score, 0x85ebca6b);
      score ^= score >>> 13;
      score = Math.imul(score, 0xc2b2ae35);
      score ^= score >>> 16;
      if (best === undefined || affinityRanksBefore(v, score, best, bestKey)) {
        best = v;
        bestKey = score;
      }
    } else if (best === undefined || candidateRanksBefore(v, free, best, bestKey)) {
      best = v;
      bestKey = free;
    }
  }
  return { best: best ?? probe, fresh, filtered, details };
}

/** Older counts first, then the smaller address. */
function probeRanksBefore(a: WorkerView, b: WorkerView): boolean {
  if (a.capacityAtMs !== b.capacityAtMs) return a.capacityAtMs < b.capacityAtMs;
  return a.workerAddr < b.workerAddr;
}

function noteOverload(v: WorkerView, cfg: CoordinatorCoreConfig, d: FilterDetails): void {
  if (v.cpuPercent > cfg.cpuRedLine) {
    d.cpuOver++;
    if (v.cpuPercent > d.worstCpu) d.worstCpu = v.cpuPercent;
  }
  if (v.memoryPercent > cfg.memoryRedLine) {
    d.memoryOver++;
    if (v.memoryPercent > d.worstMemory) d.worstMemory = v.memoryPercent;
  }
  if (v.errorRate > cfg.errorRateRedLine) {
    d.errorRateOver++;
    if (v.errorRate > d.worstErrorRate) d.worstErrorRate = v.errorRate;
  }
}

// A hand-written identity scan: for the usual 1-3 exclusions it is several times cheaper per Worker than
// Array.prototype.includes, which matters in a loop over 10,000 Workers.
function isExcluded(
  v: WorkerView,
  few: readonly WorkerView[],
  many: ReadonlySet<WorkerView> | undefined,
): boolean {
  if (many !== undefined) return many.has(v);
  for (let j = 0; j < few.length; j++) if (few[j] === v) return true;
  return false;
}
