// CoordinatorCore: the Sans-IO decision engine of the Task Resource Coordinator (docs/coordinator.md).
//
// Theory of operation. The core holds a disposable view of the Worker fleet rebuilt from etcd heartbeats
// and answers one question: which Worker should the next ReserveWorkerSlot try? It never reads a clock
// and never does IO; every input carries `now` (UTC ms). It has no lock of its own: the adapter's single
// read-write lock serialises writers (watcher, feedback) against readers (selection).
//
// Two global flags, no state machine:
//   - `initialized` turns true on the first full list and never reverts. Before it, everything is
//     Unavailable: an empty view is not evidence of an empty fleet.
//   - `watchDisconnectedAtMs` holds the FIRST disconnect of an outage (later disconnects of other prefixes
//     do not extend the grace). Once `now - watchDisconnectedAtMs > watchGracePeriodMs` the view is no
//     longer trusted and selection is Unavailable until `markWatchReconnected`.
//
// Per Worker, three local-only fields bias routing away from recently failing Workers: a failure count,
// a penalty equal to it, and a circuit-breaker deadline (circuit-breaker.ts has the rules; the feedback
// methods here apply them). Full lists preserve the local fields of surviving Workers; a removal forgets
// them, so a Worker that comes back starts from zero.
//
// Between heartbeats the core counts its own work against a Worker's free capacity (worker-view.ts,
// docs/placement.md), or a burst of reservations would all see the same snapshot and land on one Worker:
//   - `claimCandidate` is `selectCandidate` that also puts a pending claim on the chosen Worker; the
//     handler settles every claim exactly once (`settleClaim`) when its RequestTaskSlot is decided;
//   - a settled claim that got a slot ('slot') or may have ('maybeSlot', an uncertain outcome) becomes a
//     local reservation stamped with the settling `now`;
//   - a local reservation stamped `t` is forgotten when a heartbeat with lastHeartbeatMs > t arrives (that
//     snapshot was taken after the grant, so it counts the slot itself; a heartbeat taken before the grant
//     but received after it leaves the adjustment in place) or when `now - t > slotTtlMs` (the slot has
//     expired on the Worker or runs, and any later heartbeat shows it).
//   - the Workers' answers carry their slot counts (`applyCapacityReport`), which replace the heartbeat's
//     counts when newer and drop the local reservations they reflect, so released and submitted slots
//     are seen without etcd (docs/placement.md § Capacity from the Workers' answers); while the watch is
//     down, a Worker whose last counts showed it full is asked anyway when no other passes (selection.ts),
//     since only its answer can show the slots it freed since.
// Free capacity = taskSlots - (reservedSlots + runningTasks) - pendingClaims - live local reservations;
// every filter and ranking rule of docs/coordinator.md applies to that number. The placement policy decides
// how the survivors are ranked: `capacity` (the default ranking) or `affinity` (rendezvous hashing of task id
// and Worker address, rendezvous.ts).
//
// One execution per task id (placement-memory.ts, docs/placement.md § One execution per task id):
// `claimCandidate` remembers the Worker each task id was sent to, and a later request for the same id
// goes back to it — before any ranking, and whatever its free capacity or red lines (it answers a
// duplicate from its task table, without a new slot) — while its heartbeat is fresh, its breaker closed
// and the request has not tried it yet. Otherwise the policy picks as usual.
//
// Time-based decisions (heartbeat age, breaker expiry, grace expiry, adjustment expiry) are evaluated
// lazily against the `now` of each query, so the core needs no timers.

import { outcomeError } from '../../../kernel/errors.js';
import type { WorkerHeartbeat } from '../../../contracts/heartbeat.js';
import { isBreakerOpen, recordBreakerFailure, recordBreakerSuccess } from './circuit-breaker.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG, validateCoordinatorCoreConfig } from './config.js';
import type { CoordinatorCoreConfig } from './config.js';
import { CoordinatorConfigError, CoordinatorError, CoordinatorErrorCode } from './errors.js';
import type { CapacityReport, ClaimResult, CoordinatorInput, SlotOutcome } from './inputs.js';
import { noExecutableSlotMessage } from './no-slot-message.js';
import { PlacementMemory } from './placement-memory.js';
import { hashString32 } from './rendezvous.js';
import { heartbeatFreshness } from './freshness.js';
import { scanCandidates } from './selection.js';
import { validateReserveRequest } from './validate.js';
import {
  addLocalReservation,
  addPendingClaim,
  assignCapacityReport,
  assignHeartbeat,
  createWorkerView,
  releasePendingClaim,
} from './worker-view.js';
import type { WorkerView } from './worker-view.js';
import { workerStatus } from './worker-status.js';
import type { WorkerStatus } from './worker-status.js';

export type { WorkerStatus } from './worker-status.js';

export type CandidateResult =
  | { readonly ok: true; readonly workerAddr: string }
  | { readonly ok: false; readonly error: CoordinatorError };

export class CoordinatorCore {
  readonly config: CoordinatorCoreConfig;
  private workers = new Map<string, WorkerView>();
  /**
   * The views of `workers` as a dense array for the selection loop (indexed iteration over an array is
   * markedly cheaper than a Map iterator at 10,000 Workers). Updates refresh views in place and arrivals
   * append, so it stays valid; only removals and full lists invalidate it (rebuilt on the next select).
   */
  private dense: WorkerView[] | undefined = [];
  private initialized = false;
  private disconnectedAtMs: number | undefined = undefined;
  private lastViewUpdateMs: number | undefined = undefined;
  private readonly placements: PlacementMemory;

  /** Throws CoordinatorConfigError (listing every problem) on an invalid config. */
  constructor(config: CoordinatorCoreConfig = DEFAULT_COORDINATOR_CORE_CONFIG) {
    const problems = validateCoordinatorCoreConfig(config);
    if (problems.length > 0) throw new CoordinatorConfigError(problems);
    this.config = Object.freeze({ ...config });
    this.placements = new PlacementMemory(config.placementMemoryMs, config.placementMemoryMaxEntries);
  }

  // ---- inputs -------------------------------------------------------------------------------------

  /** Dispatches one input value to the matching method. */
  apply(input: CoordinatorInput): void {
    switch (input.type) {
      case 'fullWorkerList':
        return this.applyFullWorkerList(input.workers, input.now);
      case 'workerUpdate':
        return this.applyWorkerUpdate(input.heartbeat, input.now);
      case 'workerRemoval':
        return this.applyWorkerRemoval(input.workerAddr, input.now);
      case 'watchDisconnected':
        return this.markWatchDisconnected(input.now);
      case 'watchReconnected':
        return this.markWatchReconnected(input.now);
      case 'slotOutcome':
        this.recordSlotOutcome(input.workerAddr, input.outcome, input.now);
        return;
      case 'claimSettled':
        return this.settleClaim(input.workerAddr, input.result, input.now);
      case 'capacityReported':
        this.applyCapacityReport(input.workerAddr, input.report, input.now);
        return;
      default: {
        const _exhaustive: never = input;
        throw new CoordinatorError(
          CoordinatorErrorCode.Internal,
          `unknown input ${JSON.stringify(_exhaustive)}`,
        );
      }
    }
  }

  /**
   * Replaces the view with `list` (the merged result of listing every prefix) and marks the core
   * initialized. Survivors keep their local fields; Workers missing from the list are dropped. If the list
   * names a Worker twice, the later entry wins.
   */
  applyFullWorkerList(list: readonly WorkerHeartbeat[], now: number): void {
    const next = new Map<string, WorkerView>();
    for (const hb of list) {
      checkAddr(hb.workerAddr);
      next.set(
        hb.workerAddr,
        createWorkerView(hb, this.workers.get(hb.workerAddr), this.config.slotTtlMs, now),
      );
    }
    this.workers = next;
    this.dense = undefined;
    this.initialized = true;
    this.lastViewUpdateMs = now;
  }

  /** A Worker's heartbeat changed (or it appeared). Its local fields, if any, are kept. */
  applyWorkerUpdate(hb: WorkerHeartbeat, now: number): void {
    checkAddr(hb.workerAddr);
    const existing = this.workers.get(hb.workerAddr);
    if (existing !== undefined) {
      assignHeartbeat(existing, hb, this.config.slotTtlMs, now);
    } else {
      const v = createWorkerView(hb, undefined, this.config.slotTtlMs, now);
      this.workers.set(hb.workerAddr, v);
      this.dense?.push(v);
    }
    this.lastViewUpdateMs = now;
  }

  /** A Worker left the registry (key deleted or lease expired). Its local fields are forgotten. */
  applyWorkerRemoval(workerAddr: string, now: number): void {
    if (this.workers.delete(workerAddr)) this.dense = undefined;
    this.lastViewUpdateMs = now;
  }

  /** A watch disconnected. Only the first disconnect of an outage is recorded. */
  markWatchDisconnected(now: number): void {
    if (this.disconnectedAtMs === undefined) this.disconnectedAtMs = now;
  }

  /** Every prefix has re-listed and is watching again. */
  markWatchReconnected(_now: number): void {
    this.disconnectedAtMs = undefined;
  }

  // ---- decisions ----------------------------------------------------------------------------------

  /** Initialized, and not disconnected for longer than the grace period (exactly at the grace: ready). */
  isReady(now: number): boolean {
    return this.unavailableReason(now) === undefined;
  }

  /**
   * Picks the best Worker for `taskId`, skipping `excludeAddrs` (candidates already tried by this
   * request). One O(n) pass, no sort. Hard filters, in order; a Worker is counted under the first it fails:
   *   1. excluded;  2. heartbeat timed out (`now - lastHeartbeatMs > heartbeatTimeoutMs`);
   *   3. cpu / memory / error rate strictly above its red line;  4. circuit breaker open (`now < deadline`);
   *   5. no free capacity (`freeCapacityAt <= 0`: the heartbeat's figure net of this core's claims).
   * Ranking by the placement policy (selection.ts). A task id this core claimed a Worker for before goes
   * back to that Worker first (rememberedWorker). A pure read: it changes nothing (see claimCandidate).
   * Errors: empty taskId → InvalidArgument; not ready, or no Worker in the view has a fresh heartbeat
   * (excluded ones count as alive; an empty view counts as none) → Unavailable; otherwise, when nothing
   * passes → NoExecutableSlot.
   */
  selectCandidate(
    taskId: string,
    excludeAddrs: ReadonlySet<string> | readonly string[],
    now: number,
  ): CandidateResult {
    const invalid = validateReserveRequest(taskId);
    if (invalid !== undefined) return { ok: false, error: invalid };
    const reason = this.unavailableReason(now);
    if (reason !== undefined) {
      return { ok: false, error: new CoordinatorError(CoordinatorErrorCode.Unavailable, reason) };
    }

    const views = (this.dense ??= [...this.workers.values()]);
    // Exclusions are resolved to view objects once, so the loop compares identities, not strings.
    const excludedViews = this.resolveExclusions(excludeAddrs);
    const holder = this.rememberedWorker(taskId, excludedViews, now);
    if (holder !== undefined) return { ok: true, workerAddr: holder.workerAddr };
    const taskHash = this.config.placement === 'affinity' ? hashString32(taskId) | 0 : 0;
    const { best, fresh, filtered, details } = scanCandidates(
      views,
      excludedViews,
      now,
      this.config,
      taskHash,
      this.disconnectedAtMs !== undefined,
    );
    if (best !== undefined) return { ok: true, workerAddr: best.workerAddr };

    // A busy fleet is an outcome, not a bug: no stack trace (outcomeError).
    const fields = { filtered, workerCount: this.workers.size, details };
    if (fresh === 0) {
      const message = this.workers.size === 0 ? 'no workers registered' : 'all worker heartbeats timed out';
      const error = outcomeError(
        () => new CoordinatorError(CoordinatorErrorCode.Unavailable, message, fields),
      );
      return { ok: false, error };
    }
    const message = noExecutableSlotMessage(this.workers.size, filtered, details, this.config);
    const error = outcomeError(
      () => new CoordinatorError(CoordinatorErrorCode.NoExecutableSlot, message, fields),
    );
    return { ok: false, error };
  }

  /**
   * `selectCandidate`, and on success a pending claim on the chosen Worker, counted against its free
   * capacity until `settleClaim`, and the placement remembered for the task id. The handler calls this
   * (under the write lock) for every candidate it is about to send RequestTaskSlot, and settles each claim
   * exactly once.
   */
  claimCandidate(
    taskId: string,
    excludeAddrs: ReadonlySet<string> | readonly string[],
    now: number,
  ): CandidateResult {
    const r = this.selectCandidate(taskId, excludeAddrs, now);
    if (r.ok) {
      addPendingClaim(this.workers.get(r.workerAddr)!);
      this.placements.remember(taskId, r.workerAddr, now);
    }
    return r;
  }

  /**
   * A claim's RequestTaskSlot is decided: the pending claim goes, and a granted ('slot') or possibly
   * granted ('maybeSlot') slot stays counted as a local reservation stamped `now` until a heartbeat
   * taken after `now` shows it, or one slot TTL passes. Unknown Workers are ignored (removed meanwhile).
   */
  settleClaim(workerAddr: string, result: ClaimResult, now: number): void {
    const v = this.workers.get(workerAddr);
    if (v === undefined) return;
    releasePendingClaim(v);
    switch (result) {
      case 'slot':
      case 'maybeSlot':
        addLocalReservation(v, now, this.config.slotTtlMs);
        return;
      case 'noSlot':
        return;
      default: {
        const _exhaustive: never = result;
        throw new CoordinatorError(
          CoordinatorErrorCode.Internal,
          `unknown claim result ${String(_exhaustive)}`,
        );
      }
    }
  }

  /**
   * A Worker answered RequestTaskSlot(s) with its slot counts, read after the call's grants. They replace
   * the view's counts unless those are newer (a later heartbeat or report), and every local reservation
   * they reflect is dropped. Returns whether they were taken; unknown Workers are ignored. A report whose
   * counts are not non-negative safe integers (or whose stamp is not finite) is illegal input: the adapter
   * checks what it reads off the wire.
   */
  applyCapacityReport(workerAddr: string, report: CapacityReport, now: number): boolean {
    const problem = capacityReportProblem(report);
    if (problem !== undefined) {
      throw new CoordinatorError(CoordinatorErrorCode.InvalidArgument, `capacity report: ${problem}`);
    }
    const v = this.workers.get(workerAddr);
    return v !== undefined && assignCapacityReport(v, report, this.config.slotTtlMs, now);
  }

  // ---- feedback -----------------------------------------------------------------------------------

  /** The reservation succeeded: clears failure count, penalty and breaker. */
  recordSlotSuccess(workerAddr: string, _now: number): void {
    const v = this.workers.get(workerAddr);
    if (v !== undefined) recordBreakerSuccess(v);
  }

  /** An explicit rejection. Returns true when this call opened the breaker. */
  recordSlotRejection(workerAddr: string, now: number): boolean {
    return this.recordFailure(workerAddr, now);
  }

  /** Still uncertain after the same-Worker retries. Returns true when this call opened the breaker. */
  recordSlotTimeout(workerAddr: string, now: number): boolean {
    return this.recordFailure(workerAddr, now);
  }

  /** The Worker's pool is full: healthy but busy. Leaves every local field untouched. */
  recordSlotBackpressure(_workerAddr: string, _now: number): void {}

  /** Dispatches a classified outcome; returns true when it opened the breaker. */
  recordSlotOutcome(workerAddr: string, outcome: SlotOutcome, now: number): boolean {
    switch (outcome) {
      case 'success':
        this.recordSlotSuccess(workerAddr, now);
        return false;
      case 'rejection':
        return this.recordSlotRejection(workerAddr, now);
      case 'timeout':
        return this.recordSlotTimeout(workerAddr, now);
      case 'backpressure':
        this.recordSlotBackpressure(workerAddr, now);
        return false;
      default: {
        const _exhaustive: never = outcome;
        throw new CoordinatorError(
          CoordinatorErrorCode.Internal,
          `unknown slot outcome ${String(_exhaustive)}`,
        );
      }
    }
  }

  // ---- read-only views ----------------------------------------------------------------------------

  get isInitialized(): boolean {
    return this.initialized;
  }

  /** The first disconnect of the current outage, or undefined while connected. */
  get watchDisconnectedAtMs(): number | undefined {
    return this.disconnectedAtMs;
  }

  /** `now` of the last view change (full list, update or removal), or undefined before any. */
  get lastViewUpdateAtMs(): number | undefined {
    return this.lastViewUpdateMs;
  }

  get workerCount(): number {
    return this.workers.size;
  }

  /** A copy of one Worker's view, or undefined. */
  getWorker(workerAddr: string): WorkerView | undefined {
    const v = this.workers.get(workerAddr);
    return v === undefined ? undefined : { ...v, localReservedAtMs: [...v.localReservedAtMs] };
  }

  /** Why the core is not ready at `now`, or undefined when it is. */
  unavailableReason(now: number): string | undefined {
    if (!this.initialized) return 'worker view not initialized';
    if (this.disconnectedAtMs !== undefined && now - this.disconnectedAtMs > this.config.watchGracePeriodMs) {
      return `registry watch disconnected for ${now - this.disconnectedAtMs} ms (grace ${this.config.watchGracePeriodMs} ms)`;
    }
    return undefined;
  }

  /** Every Worker's status at `now`, sorted by address. */
  workersSnapshot(now: number): WorkerStatus[] {
    const rows: WorkerStatus[] = [];
    for (const v of this.workers.values()) rows.push(workerStatus(v, now, this.config));
    return rows.sort((a, b) => (a.workerAddr < b.workerAddr ? -1 : a.workerAddr > b.workerAddr ? 1 : 0));
  }

  /** Task ids whose placement is remembered (expired ones until pruned). */
  get rememberedPlacements(): number {
    return this.placements.size;
  }

  /**
   * The Worker `taskId` was last sent to, when this request may go there again: still in the view, not
   * tried by this request, heartbeat fresh, breaker closed. Free capacity and red lines do not apply.
   */
  private rememberedWorker(
    taskId: string,
    excluded: readonly WorkerView[],
    now: number,
  ): WorkerView | undefined {
    const addr = this.placements.workerOf(taskId, now);
    const v = addr === undefined ? undefined : this.workers.get(addr);
    if (v === undefined || excluded.includes(v)) return undefined;
    if (heartbeatFreshness(v.lastHeartbeatMs, now, this.config) !== 'fresh' || isBreakerOpen(v, now)) {
      return undefined;
    }
    return v;
  }

  private resolveExclusions(excludeAddrs: ReadonlySet<string> | readonly string[]): WorkerView[] {
    const out: WorkerView[] = [];
    for (const addr of excludeAddrs) {
      const v = this.workers.get(addr);
      if (v !== undefined && !out.includes(v)) out.push(v);
    }
    return out;
  }

  private recordFailure(workerAddr: string, now: number): boolean {
    const v = this.workers.get(workerAddr);
    return v !== undefined && recordBreakerFailure(v, now, this.config);
  }
}

function checkAddr(workerAddr: string): void {
  if (typeof workerAddr !== 'string' || workerAddr.length === 0) {
    throw new CoordinatorError(
      CoordinatorErrorCode.InvalidArgument,
      'heartbeat workerAddr must not be empty',
    );
  }
}

/** Why `report` is not a legal capacity report, or undefined when it is. */
export function capacityReportProblem(report: CapacityReport): string | undefined {
  for (const field of ['taskSlots', 'reservedSlots', 'runningTasks', 'reclaimableSlots'] as const) {
    const v = report[field];
    if (!Number.isSafeInteger(v) || v < 0) return `${field} must be a non-negative integer, got ${v}`;
  }
  if (!Number.isFinite(report.takenAtMs)) return `takenAtMs must be finite, got ${report.takenAtMs}`;
  return undefined;
}
