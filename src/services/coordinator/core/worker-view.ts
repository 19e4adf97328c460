// What the Coordinator knows about one Worker: the last heartbeat it read from etcd plus fields that exist
// only in this process and are never written back (docs/coordinator.md § Penalties and the circuit breaker).
// Losing them on restart only loses routing bias, never correctness: the Worker's slot table is the source of
// truth.
//
// Local reservation adjustment (issue 14; docs/placement.md). A heartbeat is a snapshot: between two of
// them the Coordinator would otherwise see the same free capacity however many slots it has just
// reserved, and a burst would land on one Worker. So each view also counts this Coordinator's own work:
//   - `pendingClaims`: candidates handed out by `claimCandidate` whose RequestTaskSlot is still open;
//     settled (released) by the handler whatever the outcome.
//   - `localReservedAtMs`: the `now` of each slot this Coordinator obtained (or may have obtained, after an
//     uncertain outcome) that no heartbeat has shown yet, ascending.
// An entry stamped `t` is dropped when counts taken after `t` arrive (`capacityAtMs > t`: that snapshot
// was taken after the Worker granted the slot, so its reservedSlots/runningTasks include it; counts taken
// earlier but received later do not erase it), or once `now - t > slotTtlMs` (by then the slot has
// either expired on the Worker or turned into a running task that any later snapshot shows; this bounds
// the error of a Worker whose clock lags ours). Effective free capacity =
//   taskSlots - (reservedSlots + runningTasks) - pendingClaims - (live entries of localReservedAtMs).
//
// The counts come from two sources, both stamped by the Worker's clock: its heartbeats (through etcd) and
// the capacity reports it sends with its answers to RequestTaskSlot(s) (docs/placement.md § Capacity from
// the Workers' answers). `capacityAtMs` is the stamp of the counts applied last. A report older than the
// view's counts is ignored (answers to concurrent requests may arrive out of order); a heartbeat is always
// taken, as before reports existed, so a Worker whose clock stepped back is not frozen at its old counts.
// A heartbeat delayed behind a newer report can therefore show older counts until the next one: the
// Worker's own pool refuses any surplus (backpressure). The reports keep the view current while etcd is
// unreachable: without them every grant would count against its Worker for a whole TTL, and placement
// would stop within about a second of an outage.

import type { WorkerHeartbeat } from '../../../contracts/heartbeat.js';
import type { BreakerFields } from './circuit-breaker.js';
import type { CapacityReport } from './inputs.js';
import { hashString32 } from './rendezvous.js';

/** The breaker's fields (circuit-breaker.ts) and the local reservation counts. */
export interface WorkerLocalState extends BreakerFields {
  /** Claims handed out by claimCandidate and not settled yet. */
  pendingClaims: number;
  /** `now` of each slot obtained here and not yet reflected by a heartbeat, ascending. */
  localReservedAtMs: number[];
  /**
   * pendingClaims + localReservedAtMs.length, kept in step by every function here that changes either:
   * the selection loop reads this one field and looks further only when it is not 0.
   */
  localHeld: number;
}

/** The heartbeat fields are writable here: the core refreshes a view in place on every update. */
export type WorkerView = { -readonly [K in keyof WorkerHeartbeat]: WorkerHeartbeat[K] } & WorkerLocalState & {
    /** hashString32(workerAddr) as an int32, computed once: the Worker's half of the rendezvous score. */
    readonly addrHash: number;
    /**
     * When the slot counts of this view were taken, by the Worker's clock: the heartbeat's lastHeartbeatMs
     * or a newer capacity report's takenAtMs.
     */
    capacityAtMs: number;
  };

/** A fresh view for a heartbeat, carrying over the local fields of `previous` when given. */
export function createWorkerView(
  hb: WorkerHeartbeat,
  previous?: WorkerLocalState,
  slotTtlMs = Infinity,
  now = 0,
): WorkerView {
  // Explicit fields (not a spread of `hb`): every view has the same shape, which keeps the selection loop
  // monomorphic, and stray properties of the input never leak into the view.
  const v: WorkerView = {
    workerAddr: hb.workerAddr,
    taskSlots: hb.taskSlots,
    reservedSlots: hb.reservedSlots,
    runningTasks: hb.runningTasks,
    cpuPercent: hb.cpuPercent,
    memoryPercent: hb.memoryPercent,
    memoryAvailableBytes: hb.memoryAvailableBytes,
    memoryTotalBytes: hb.memoryTotalBytes,
    processRssBytes: hb.processRssBytes,
    errorRate: hb.errorRate,
    lastHeartbeatMs: hb.lastHeartbeatMs,
    reclaimableSlots: hb.reclaimableSlots ?? 0,
    codeVersion: hb.codeVersion ?? '',
    codeVersionError: hb.codeVersionError ?? '',
    circuitBreakerDeadlineMs: previous?.circuitBreakerDeadlineMs ?? 0,
    recentFailureCount: previous?.recentFailureCount ?? 0,
    penalty: previous?.penalty ?? 0,
    pendingClaims: previous?.pendingClaims ?? 0,
    localReservedAtMs: previous === undefined ? [] : previous.localReservedAtMs,
    localHeld: 0,
    addrHash: hashString32(hb.workerAddr) | 0,
    capacityAtMs: hb.lastHeartbeatMs,
  };
  forgetReflectedReservations(v, now, slotTtlMs);
  return v;
}

/**
 * Overwrites the heartbeat fields of `view` in place, keeping its local fields (and its identity), and
 * drops the local reservations this heartbeat reflects or that have aged past `slotTtlMs`. A heartbeat's
 * counts are always taken, even when a capacity report was stamped later: the heartbeat is the authority
 * that resets the stamp after the Worker's clock steps back (docs/placement.md).
 */
export function assignHeartbeat(view: WorkerView, hb: WorkerHeartbeat, slotTtlMs = Infinity, now = 0): void {
  view.taskSlots = hb.taskSlots;
  view.reservedSlots = hb.reservedSlots;
  view.runningTasks = hb.runningTasks;
  view.reclaimableSlots = hb.reclaimableSlots ?? 0;
  view.capacityAtMs = hb.lastHeartbeatMs;
  view.cpuPercent = hb.cpuPercent;
  view.memoryPercent = hb.memoryPercent;
  view.memoryAvailableBytes = hb.memoryAvailableBytes;
  view.memoryTotalBytes = hb.memoryTotalBytes;
  view.processRssBytes = hb.processRssBytes;
  view.errorRate = hb.errorRate;
  view.lastHeartbeatMs = hb.lastHeartbeatMs;
  view.codeVersion = hb.codeVersion ?? '';
  view.codeVersionError = hb.codeVersionError ?? '';
  forgetReflectedReservations(view, now, slotTtlMs);
}

/**
 * Applies a capacity report (counts taken at `report.takenAtMs` by the Worker's clock) unless the view's
 * counts are newer, and drops the local reservations it reflects or that have aged past `slotTtlMs`.
 * Returns whether the counts were taken.
 */
export function assignCapacityReport(
  view: WorkerView,
  report: CapacityReport,
  slotTtlMs: number,
  now: number,
): boolean {
  const newer = report.takenAtMs >= view.capacityAtMs;
  if (newer) {
    view.taskSlots = report.taskSlots;
    view.reservedSlots = report.reservedSlots;
    view.runningTasks = report.runningTasks;
    view.reclaimableSlots = report.reclaimableSlots;
    view.capacityAtMs = report.takenAtMs;
  }
  forgetReflectedReservations(view, now, slotTtlMs);
  return newer;
}

/** Records a slot obtained (or possibly obtained) at `now`, keeping the list ascending. */
export function addLocalReservation(v: WorkerView, now: number, slotTtlMs: number): void {
  forgetReflectedReservations(v, now, slotTtlMs);
  const list = v.localReservedAtMs;
  let i = list.length;
  // `now` normally never goes backwards; if the clock stepped back, insert in order.
  while (i > 0 && list[i - 1]! > now) i--;
  list.splice(i, 0, now);
  syncLocalHeld(v);
}

/** Counts a claim handed out by selection. */
export function addPendingClaim(v: WorkerView): void {
  v.pendingClaims++;
  syncLocalHeld(v);
}

/** Releases a claim (never below zero: a stray settle is harmless). */
export function releasePendingClaim(v: WorkerView): void {
  if (v.pendingClaims > 0) v.pendingClaims--;
  syncLocalHeld(v);
}

function syncLocalHeld(v: WorkerView): void {
  v.localHeld = v.pendingClaims + v.localReservedAtMs.length;
}

/** Drops the prefix of entries shown by the current counts (`capacityAtMs > t`) or expired. */
export function forgetReflectedReservations(v: WorkerView, now: number, slotTtlMs: number): void {
  const list = v.localReservedAtMs;
  let k = 0;
  while (k < list.length && (list[k]! < v.capacityAtMs || now - list[k]! > slotTtlMs)) k++;
  if (k > 0) list.splice(0, k);
  syncLocalHeld(v);
}

/**
 * Local reservations still counted at `now` (not reflected by the heartbeat, not older than the TTL).
 * No allocation, no mutation: selection runs under the read lock.
 */
export function localReservationsAt(v: WorkerView, now: number, slotTtlMs: number): number {
  const list = v.localReservedAtMs;
  const n = list.length;
  if (n === 0 || now - list[0]! <= slotTtlMs) return n;
  let k = 1;
  while (k < n && now - list[k]! > slotTtlMs) k++;
  return n - k;
}

/** Slots the Worker has committed: reserved plus running. */
export function usedTotal(v: WorkerHeartbeat): number {
  return v.reservedSlots + v.runningTasks;
}

/** Slots still free by the last heartbeat; may be negative if a heartbeat reports over-commitment. */
export function freeCapacity(v: WorkerHeartbeat): number {
  return v.taskSlots - (v.reservedSlots + v.runningTasks);
}

/**
 * What selection ranks and filters by: the heartbeat's free capacity plus the reservations a newcomer
 * could reclaim there (`reclaimableSlots`, docs/security.md § Reservations per client), minus this
 * Coordinator's own claims.
 */
export function freeCapacityAt(v: WorkerView, now: number, slotTtlMs: number): number {
  return (
    freeCapacity(v) + (v.reclaimableSlots ?? 0) - v.pendingClaims - localReservationsAt(v, now, slotTtlMs)
  );
}
