// CoordinatorServer: the public ReserveWorkerSlot handler and its orchestration loop
// (seeds/coordinator.md § Data flow, the four steps):
//
//   1. Validate (empty task id → InvalidArgument) and check readiness (not ready → Unavailable; no Worker
//      is contacted).
//   2. Up to `maxCandidates` times: claim a candidate under the write lock (core.claimCandidate: select,
//      skipping the ones already tried, and count the claim against that Worker's free capacity so that
//      concurrent reservations spread; docs/placement.md), and send it RequestTaskSlot(task_id,
//      ttl_ms = slotTtlMs) with a deadline of workerRpcTimeoutMs. Serial, never hedged. Every claim is
//      settled exactly once (core.settleClaim), in the same write section as the feedback below when
//      there is one, otherwise in a `finally`.
//   3. A slot id comes back → recordSlotSuccess → answer. An explicit rejection (the Worker refused, or
//      the request never reached it) → record it (a full pool is backpressure and does not count toward
//      the breaker) and try the next candidate. An uncertain outcome (the Worker may hold a slot: timeout,
//      dropped connection, empty slot id, ...) → retry the SAME Worker with the SAME task id up to
//      maxTimeoutRetries times (the Worker's RequestTaskSlot is idempotent per task id); an explicit
//      rejection during those retries moves on to the next candidate; still uncertain → recordSlotTimeout
//      and Aborted "unable to confirm slot reservation" (SlotUncertain): never switch Workers then, or one
//      task could hold slots on two.
//   4. Every candidate rejected → ResourceExhausted "all candidates rejected". No candidate at all →
//      the core's error (NoExecutableSlot → ResourceExhausted, or Unavailable).
//
// The core has no lock of its own: `lock` is the only synchronisation point, shared with the watcher.
//
// Observability: every reservation ends in one debug line with its task_id, outcome, duration and the
// candidates tried, and in one `observer.onReservation` call (coordinator-metrics.ts); explicit
// rejections and breaker trips are reported to the observer as they happen.

import type * as grpc from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import type { CoordinatorServiceHandlers } from '../../../grpc/proto.js';
import { cancelSignalOf } from '../../../grpc/server.js';
import type { CancelSignal } from '../../../kernel/cancel.js';
import { MAX_ID_BYTES, cutText } from '../../../kernel/input-bounds.js';
import type { CoordinatorCore } from '../core/coordinator-core.js';
import { CoordinatorError, CoordinatorErrorCode } from '../core/errors.js';
import type { ClaimResult, SlotOutcome } from '../core/inputs.js';
import { validateReserveRequest } from '../core/validate.js';
import { silentLogger } from '../../registry/registry-port.js';
import type { Logger } from '../../registry/registry-port.js';
import { toServiceError } from './grpc-status.js';
import { RwLock } from './rw-lock.js';
import type { SlotError, SlotReserver } from './slot-reserver.js';

export interface HandlerConfig {
  /** Retries on the same Worker after an uncertain outcome (COORDINATOR_MAX_TIMEOUT_RETRIES); 0 allowed. */
  readonly maxTimeoutRetries: number;
  /** Deadline of one RequestTaskSlot (COORDINATOR_WORKER_RPC_TIMEOUT_MS). */
  readonly workerRpcTimeoutMs: number;
}

export const DEFAULT_HANDLER_CONFIG: HandlerConfig = Object.freeze({
  maxTimeoutRetries: 1,
  workerRpcTimeoutMs: 3_000,
});

export type ReserveResult =
  | { readonly ok: true; readonly taskId: string; readonly workerAddr: string; readonly slotId: string }
  | { readonly ok: false; readonly error: CoordinatorError };

export const ALL_CANDIDATES_REJECTED = 'all candidates rejected';
export const UNABLE_TO_CONFIRM = 'unable to confirm slot reservation';

/** A RequestTaskSlot answer for a task id the Worker holds a retained terminal result of. */
export function isTerminalGrant(state: string): boolean {
  return state === 'TASK_STATE_SUCCEEDED' || state === 'TASK_STATE_FAILED';
}

/**
 * What a granted RequestTaskSlot means for the local capacity adjustment: a new slot, unless the Worker
 * answered for a task it already runs (the same slot, already in its heartbeat's runningTasks) or holds
 * a retained result of (no slot at all).
 */
export function claimResultOfGrant(state: string): ClaimResult {
  return isTerminalGrant(state) || state === 'TASK_STATE_RUNNING' ? 'noSlot' : 'slot';
}

/** One claimed candidate of a reservation (core.claimCandidate), settled exactly once. */
interface Claim {
  readonly workerAddr: string;
  /** A RequestTaskSlot was sent: an unsettled claim may then hold a slot. */
  sent: boolean;
  settled: boolean;
}

/** How the core should count an explicit rejection: a full pool is backpressure, the rest failures. */
export function slotOutcomeOf(err: SlotError): SlotOutcome {
  return err.code === CoordinatorErrorCode.NoSlot ? 'backpressure' : 'rejection';
}

/** One ReserveWorkerSlot as a whole, for metrics. */
export interface ReservationRecord {
  readonly taskId: string;
  /** undefined when the orchestration itself threw (an Internal error reaches the Client). */
  readonly result: ReserveResult | undefined;
  /** Wall time of the whole reservation (monotonic clock). */
  readonly durationMs: number;
  /** Distinct Workers sent a RequestTaskSlot. */
  readonly candidatesTried: number;
}

/** What the reservation loop reports as it goes (CoordinatorMetrics implements it). All optional. */
export interface ReservationObserver {
  onReservation?(record: ReservationRecord): void;
  /** A Worker explicitly refused (a full pool is `backpressure`, anything else `rejection`). */
  onRejection?(workerAddr: string, outcome: SlotOutcome): void;
  /** This feedback opened the Worker's circuit breaker. */
  onBreakerTripped?(workerAddr: string, cause: 'rejection' | 'timeout'): void;
}

export interface CoordinatorServerOptions {
  readonly core: CoordinatorCore;
  readonly reserver: SlotReserver;
  readonly config?: Partial<HandlerConfig>;
  /** UTC ms (default Date.now). */
  readonly clock?: () => number;
  readonly logger?: Logger;
  readonly observer?: ReservationObserver;
}

type Attempt =
  | { readonly type: 'reserved'; readonly slotId: string }
  | { readonly type: 'rejected' }
  | { readonly type: 'uncertain' }
  | { readonly type: 'cancelled' };

function settle(core: CoordinatorCore, claim: Claim, result: ClaimResult, now: number): void {
  if (claim.settled) return;
  claim.settled = true;
  core.settleClaim(claim.workerAddr, result, now);
}

/** The request/response shape shared by CoordinatorService and BundleCoordinatorService. */
interface ReserveRequestLike {
  readonly taskId: string;
}
interface ReserveResponseLike {
  taskId?: string;
  workerAddr?: string;
  slotId?: string;
}

export class CoordinatorServer {
  readonly core: CoordinatorCore;
  readonly lock = new RwLock();
  readonly config: HandlerConfig;
  private readonly reserver: SlotReserver;
  private readonly clock: () => number;
  private readonly logger: Logger;
  private readonly observer: ReservationObserver;

  constructor(opts: CoordinatorServerOptions) {
    this.core = opts.core;
    this.reserver = opts.reserver;
    this.config = { ...DEFAULT_HANDLER_CONFIG, ...opts.config };
    if (!Number.isSafeInteger(this.config.maxTimeoutRetries) || this.config.maxTimeoutRetries < 0) {
      throw new RangeError(
        `maxTimeoutRetries must be a non-negative integer, got ${this.config.maxTimeoutRetries}`,
      );
    }
    if (!Number.isSafeInteger(this.config.workerRpcTimeoutMs) || this.config.workerRpcTimeoutMs <= 0) {
      throw new RangeError(
        `workerRpcTimeoutMs must be a positive integer, got ${this.config.workerRpcTimeoutMs}`,
      );
    }
    this.clock = opts.clock ?? Date.now;
    this.logger = opts.logger ?? silentLogger;
    this.observer = opts.observer ?? {};
  }

  /** Runs `fn` on the core under the write lock (the watcher's entry point). */
  withCoreWrite<T>(fn: (core: CoordinatorCore) => T): Promise<T> {
    return this.lock.write(() => fn(this.core));
  }

  /** Runs `fn` on the core under the read lock. */
  withCoreRead<T>(fn: (core: CoordinatorCore) => T): Promise<T> {
    return this.lock.read(() => fn(this.core));
  }

  /** `signal`: the Client's call; once it aborts, no further Worker is tried (see tryWorker). */
  async reserveWorkerSlot(taskId: string, signal?: CancelSignal): Promise<ReserveResult> {
    const startedAt = performance.now();
    const tried = new Set<string>();
    let result: ReserveResult | undefined;
    try {
      result = await this.reserve(taskId, signal, tried);
      return result;
    } finally {
      this.finished({
        taskId,
        result,
        durationMs: performance.now() - startedAt,
        candidatesTried: tried.size,
      });
    }
  }

  private finished(record: ReservationRecord): void {
    const { result, durationMs, candidatesTried } = record;
    // A refused request may carry an id of any length: log a cut one (docs/security.md § Input bounds).
    const taskId = cutText(record.taskId, MAX_ID_BYTES);
    // One object of a fixed shape (no spread): this runs on every reservation.
    this.logger.debug(
      {
        task_id: taskId,
        outcome: result === undefined ? 'error' : result.ok ? 'ok' : result.error.code,
        worker_addr: result?.ok === true ? result.workerAddr : undefined,
        slot_id: result?.ok === true ? result.slotId : undefined,
        reason: result?.ok === false ? result.error.message : undefined,
        duration_ms: Math.round(durationMs * 1000) / 1000,
        candidates_tried: candidatesTried,
      },
      'reservation finished',
    );
    try {
      this.observer.onReservation?.(record);
    } catch (err) {
      this.logger.error({ task_id: taskId, err: String(err) }, 'reservation observer failed');
    }
  }

  /** Steps 1-4 of the orchestration; `tried` collects the Workers contacted. */
  private async reserve(
    taskId: string,
    signal: CancelSignal | undefined,
    tried: Set<string>,
  ): Promise<ReserveResult> {
    const invalid = validateReserveRequest(taskId);
    if (invalid !== undefined) return { ok: false, error: invalid };
    const notReady = await this.lock.read(() => this.core.unavailableReason(this.clock()));
    if (notReady !== undefined) {
      return { ok: false, error: new CoordinatorError(CoordinatorErrorCode.Unavailable, notReady) };
    }

    const exclude = new Set<string>();
    for (let i = 0; i < this.core.config.maxCandidates; i++) {
      const pick = await this.lock.write(() => this.core.claimCandidate(taskId, exclude, this.clock()));
      if (!pick.ok) {
        // Nothing tried yet, or the view stopped being trusted: the core's answer stands. After explicit
        // rejections, running out of candidates means every candidate rejected.
        if (exclude.size === 0 || pick.error.code === CoordinatorErrorCode.Unavailable) {
          return { ok: false, error: pick.error };
        }
        break;
      }
      tried.add(pick.workerAddr);
      const claim: Claim = { workerAddr: pick.workerAddr, sent: false, settled: false };
      let attempt: Attempt;
      try {
        attempt = await this.tryWorker(claim, taskId, signal);
      } finally {
        // Cancelled, or the reserver threw: a request that went out may have left a slot (until its TTL).
        if (!claim.settled) {
          const result: ClaimResult = claim.sent ? 'maybeSlot' : 'noSlot';
          await this.lock.write(() => settle(this.core, claim, result, this.clock()));
        }
      }
      switch (attempt.type) {
        case 'reserved':
          return { ok: true, taskId, workerAddr: pick.workerAddr, slotId: attempt.slotId };
        case 'rejected':
          exclude.add(pick.workerAddr);
          continue;
        case 'uncertain':
          return {
            ok: false,
            error: new CoordinatorError(CoordinatorErrorCode.SlotUncertain, UNABLE_TO_CONFIRM),
          };
        case 'cancelled':
          return {
            ok: false,
            error: new CoordinatorError(
              CoordinatorErrorCode.SlotUncertain,
              `${UNABLE_TO_CONFIRM}: request cancelled`,
            ),
          };
        default: {
          const _exhaustive: never = attempt;
          throw new Error(`unknown attempt ${JSON.stringify(_exhaustive)}`);
        }
      }
    }
    return {
      ok: false,
      error: new CoordinatorError(CoordinatorErrorCode.AllCandidatesRejected, ALL_CANDIDATES_REJECTED),
    };
  }

  /** The CoordinatorService implementation. */
  handlers(): CoordinatorServiceHandlers {
    return { ReserveWorkerSlot: this.unaryHandler() };
  }

  /** ReserveWorkerSlot as a grpc-js unary handler; BundleCoordinatorServer serves the same one. */
  unaryHandler(): grpc.handleUnaryCall<ReserveRequestLike, ReserveResponseLike> {
    return (call, callback) => {
      this.reserveWorkerSlot(call.request.taskId, cancelSignalOf(call)).then(
        (r) => {
          if (r.ok) callback(null, { taskId: r.taskId, workerAddr: r.workerAddr, slotId: r.slotId });
          else callback(toServiceError(r.error));
        },
        (err: unknown) => {
          this.logger.error({ err: String(err) }, 'ReserveWorkerSlot failed unexpectedly');
          callback(toServiceError(err));
        },
      );
    };
  }

  /** One candidate: the first RequestTaskSlot plus same-Worker retries while the outcome is uncertain. */
  private async tryWorker(claim: Claim, taskId: string, signal?: CancelSignal): Promise<Attempt> {
    const { workerAddr } = claim;
    const req = { taskId, ttlMs: this.core.config.slotTtlMs };
    const opts = { timeoutMs: this.config.workerRpcTimeoutMs, signal };
    let lastReason = '';
    for (let attempt = 0; attempt <= this.config.maxTimeoutRetries; attempt++) {
      if (signal?.aborted) return { type: 'cancelled' };
      claim.sent = true;
      const reply = await this.reserver.requestTaskSlot(workerAddr, req, opts);
      // A slot, or a retained terminal result of this task id on that Worker: the task ran there, and
      // SubmitTask (with the empty slot id) returns its result there. Routing it anywhere else would run
      // it a second time. Any other empty slot id is an uncertain outcome (seeds).
      if (reply.ok && (reply.grant.slotId !== '' || isTerminalGrant(reply.grant.state))) {
        const result = claimResultOfGrant(reply.grant.state);
        await this.lock.write(() => {
          const now = this.clock();
          this.core.recordSlotSuccess(workerAddr, now);
          settle(this.core, claim, result, now);
        });
        return { type: 'reserved', slotId: reply.grant.slotId };
      }
      if (!reply.ok && !reply.error.mayHaveAllocated) {
        const outcome = slotOutcomeOf(reply.error);
        const opened = await this.lock.write(() => {
          const now = this.clock();
          settle(this.core, claim, 'noSlot', now);
          return this.core.recordSlotOutcome(workerAddr, outcome, now);
        });
        const fields = {
          workerAddr,
          task_id: taskId,
          code: reply.error.code,
          kind: reply.error.kind,
          outcome,
        };
        this.observer.onRejection?.(workerAddr, outcome);
        if (opened) {
          this.observer.onBreakerTripped?.(workerAddr, 'rejection');
          this.logger.warn(fields, 'worker circuit breaker opened');
        } else {
          this.logger.debug({ ...fields, reason: reply.error.message }, 'worker rejected the reservation');
        }
        return { type: 'rejected' };
      }
      lastReason = reply.ok ? 'success without a slot id' : reply.error.message;
      this.logger.debug(
        { workerAddr, task_id: taskId, attempt, reason: lastReason },
        'reservation outcome uncertain',
      );
    }
    // The Client went away: the uncertainty is ours, not the Worker's, so it is not counted against it.
    if (signal?.aborted) return { type: 'cancelled' };
    const opened = await this.lock.write(() => {
      const now = this.clock();
      settle(this.core, claim, 'maybeSlot', now);
      return this.core.recordSlotTimeout(workerAddr, now);
    });
    if (opened) this.observer.onBreakerTripped?.(workerAddr, 'timeout');
    this.logger.warn(
      {
        workerAddr,
        task_id: taskId,
        retries: this.config.maxTimeoutRetries,
        reason: lastReason,
        breakerOpened: opened,
      },
      'slot reservation still uncertain after retries; the worker may hold a slot until its TTL',
    );
    return { type: 'uncertain' };
  }
}
