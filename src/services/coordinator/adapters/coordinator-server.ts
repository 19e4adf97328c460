// CoordinatorServer: the public ReserveWorkerSlot and ReserveWorkerSlots handlers. The protocol itself
// — validate, readiness, the candidate loop with exclusions, same-Worker retries of uncertain outcomes,
// breaker feedback, claims settled exactly once — is the Sans-IO ReservationMachine
// (core/reservation.ts, docs/coordinator.md § ReserveWorkerSlot); reservation-driver.ts performs the
// requests it asks for. This file chooses how a request goes out and reports what happened:
//
//   - ReserveWorkerSlot drives a machine for one id and sends each request as one RequestTaskSlot
//     (ttl_ms = slotTtlMs, deadline workerRpcTimeoutMs), exactly as before the batched protocol.
//   - ReserveWorkerSlots (1..MAX_BATCH_TASKS ids, else INVALID_ARGUMENT for the whole call) drives one
//     machine for the whole batch and sends one RequestTaskSlots per chosen Worker; an older Worker gets
//     unary calls instead (worker-rpc-client.ts). Each id is answered with what ReserveWorkerSlot would
//     have returned, mapped by the same function (grpc-status.ts `statusPartsOf`).
//     docs/batched-protocol.md § Coordinator: ReserveWorkerSlots.
//
// The core has no lock of its own: `lock` is the only synchronisation point, shared with the watcher;
// every machine input is fed under `lock.write`.
//
// Observability (metrics and log lines) is reservation-reporter.ts.

import { type ServiceLogger, silentLogger } from '../../../kernel/observability/service-logger.js';
import type * as grpc from '@grpc/grpc-js';
import { callerIdentity } from '../../../grpc/peer-identity.js';
import { performance } from 'node:perf_hooks';
import type { CoordinatorServiceHandlers } from '../../../grpc/proto.js';
import { cancelSignalOf } from '../../../grpc/server.js';
import type { CancelSignal } from '../../../kernel/cancel.js';
import { MAX_BATCH_TASKS, MAX_ID_BYTES, cutText } from '../../../kernel/input-bounds.js';
import type { CoordinatorCore } from '../core/coordinator-core.js';
import { CoordinatorError, CoordinatorErrorCode } from '../core/errors.js';
import type { SlotOutcome } from '../core/inputs.js';
import { ReservationMachine, rejectionOutcome } from '../core/reservation.js';
import type { RequestSlotsCommand, ReserveResult } from '../core/reservation-types.js';
import { statusPartsOf, toServiceError } from './grpc-status.js';
import { driveReservation } from './reservation-driver.js';
import { ReservationReporter, type BatchStats, type ReservationObserver } from './reservation-reporter.js';
import { RwLock } from './rw-lock.js';
import { SlotError, requestSlotsOneByOne } from './slot-reserver.js';
import type { SlotReply, SlotReserver } from './slot-reserver.js';

export type { ReserveResult } from '../core/reservation-types.js';
export type { ReservationObserver, ReservationRecord } from './reservation-reporter.js';
export {
  ALL_CANDIDATES_REJECTED,
  UNABLE_TO_CONFIRM,
  claimResultOfGrant,
  isTerminalGrant,
} from '../core/reservation.js';

export interface HandlerConfig {
  /** Retries on the same Worker after an uncertain outcome (COORDINATOR_MAX_TIMEOUT_RETRIES); 0 allowed. */
  readonly maxTimeoutRetries: number;
  /** Deadline of one RequestTaskSlot(s) (COORDINATOR_WORKER_RPC_TIMEOUT_MS). */
  readonly workerRpcTimeoutMs: number;
}

export const DEFAULT_HANDLER_CONFIG: HandlerConfig = Object.freeze({
  maxTimeoutRetries: 1,
  workerRpcTimeoutMs: 3_000,
});

/** How the core should count an explicit rejection: a full pool is backpressure, the rest failures. */
export function slotOutcomeOf(err: SlotError): SlotOutcome {
  return rejectionOutcome(err.code);
}

export interface CoordinatorServerOptions {
  readonly core: CoordinatorCore;
  readonly reserver: SlotReserver;
  readonly config?: Partial<HandlerConfig>;
  /** UTC ms (default Date.now). */
  readonly clock?: () => number;
  readonly logger?: ServiceLogger;
  readonly observer?: ReservationObserver;
}

/** The request/response shapes shared by CoordinatorService and BundleCoordinatorService. */
interface ReserveRequestLike {
  readonly taskId: string;
}
interface ReserveResponseLike {
  taskId?: string;
  workerAddr?: string;
  slotId?: string;
}
interface ReserveBatchRequestLike {
  readonly taskIds: readonly string[];
}
interface ReservationLike {
  taskId?: string;
  workerAddr?: string;
  slotId?: string;
  error?: { code?: string; status?: number; message?: string } | null;
}
interface ReserveBatchResponseLike {
  reservations?: ReservationLike[];
}

/** Why a ReserveWorkerSlots request is refused as a whole, or undefined (docs/security.md § Input bounds). */
export function batchProblem(taskIds: readonly unknown[]): string | undefined {
  if (taskIds.length === 0) return 'taskIds must not be empty';
  if (taskIds.length > MAX_BATCH_TASKS) {
    return `taskIds must name at most ${MAX_BATCH_TASKS} ids, got ${taskIds.length}`;
  }
  return undefined;
}

/** One id's entry in a ReserveWorkerSlotsResponse; a refused over-long id is echoed cut. */
export function reservationOf(taskId: string, r: ReserveResult): ReservationLike {
  if (r.ok) return { taskId: r.taskId, workerAddr: r.workerAddr, slotId: r.slotId };
  return { taskId: cutText(taskId, MAX_ID_BYTES), workerAddr: '', slotId: '', error: statusPartsOf(r.error) };
}

export class CoordinatorServer {
  readonly core: CoordinatorCore;
  readonly lock = new RwLock();
  readonly config: HandlerConfig;
  private readonly reserver: SlotReserver;
  private readonly clock: () => number;
  private readonly logger: ServiceLogger;
  private readonly reporter: ReservationReporter;

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
    this.reporter = new ReservationReporter(this.logger, opts.observer ?? {});
  }

  /** Runs `fn` on the core under the write lock (the watcher's entry point). */
  withCoreWrite<T>(fn: (core: CoordinatorCore) => T): Promise<T> {
    return this.lock.write(() => fn(this.core));
  }

  /** Runs `fn` on the core under the read lock. */
  withCoreRead<T>(fn: (core: CoordinatorCore) => T): Promise<T> {
    return this.lock.read(() => fn(this.core));
  }

  /**
   * `signal`: the Client's call; once it aborts, no further Worker is tried. `client`: its identity,
   * forwarded to the Workers (docs/security.md § Reservations per client).
   */
  async reserveWorkerSlot(taskId: string, signal?: CancelSignal, client?: string): Promise<ReserveResult> {
    const startedAt = performance.now();
    const machine = new ReservationMachine(this.core, [taskId], this.config);
    let result: ReserveResult | undefined;
    try {
      const { thrown } = await driveReservation({
        machine,
        lock: this.lock,
        clock: this.clock,
        send: (cmd, sig) => this.sendOne(cmd, sig, client),
        signal,
        onEvents: (events) => this.reporter.report(events, undefined),
      });
      if (thrown !== undefined) throw thrown;
      result = machine.results()[0]!;
      return result;
    } finally {
      this.reporter.finished({
        taskId,
        result,
        durationMs: performance.now() - startedAt,
        candidatesTried: machine.candidatesTriedOf(taskId),
      });
    }
  }

  /**
   * ReserveWorkerSlot for every id of `taskIds` (1..MAX_BATCH_TASKS, else a CoordinatorError
   * InvalidArgument is thrown): one result per id, in order; a repeated id is reserved once.
   */
  async reserveWorkerSlots(
    taskIds: readonly string[],
    signal?: CancelSignal,
    client?: string,
  ): Promise<ReserveResult[]> {
    const problem = batchProblem(taskIds);
    if (problem !== undefined) throw new CoordinatorError(CoordinatorErrorCode.InvalidArgument, problem);
    const batch: BatchStats = {
      startedAt: performance.now(),
      outcomes: {},
      requests: 0,
      workers: new Set(),
      distinct: 0,
    };
    const machine = new ReservationMachine(this.core, taskIds, this.config);
    let failed = true;
    try {
      const { thrown } = await driveReservation({
        machine,
        lock: this.lock,
        clock: this.clock,
        send: (cmd, sig) => {
          batch.requests += 1;
          batch.workers.add(cmd.workerAddr);
          return this.sendMany(cmd, sig, client);
        },
        signal,
        onEvents: (events) => this.reporter.report(events, batch),
      });
      if (thrown !== undefined) {
        this.logger.error({ err: String(thrown) }, 'slot reserver failed; its tasks answered Internal');
      }
      failed = false;
      return machine.results();
    } finally {
      this.logger.debug(
        {
          tasks: taskIds.length,
          distinct: batch.distinct,
          outcomes: batch.outcomes,
          requests: batch.requests,
          workers: batch.workers.size,
          failed,
          duration_ms: Math.round((performance.now() - batch.startedAt) * 1000) / 1000,
        },
        'bulk reservation finished',
      );
    }
  }

  /** The CoordinatorService implementation. */
  handlers(): CoordinatorServiceHandlers {
    return { ReserveWorkerSlot: this.unaryHandler(), ReserveWorkerSlots: this.batchHandler() };
  }

  /** ReserveWorkerSlot as a grpc-js unary handler; BundleCoordinatorServer serves the same one. */
  unaryHandler(): grpc.handleUnaryCall<ReserveRequestLike, ReserveResponseLike> {
    return (call, callback) => {
      this.reserveWorkerSlot(call.request.taskId, cancelSignalOf(call), callerIdentity(call)).then(
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

  /** ReserveWorkerSlots as a grpc-js unary handler; BundleCoordinatorServer serves the same one. */
  batchHandler(): grpc.handleUnaryCall<ReserveBatchRequestLike, ReserveBatchResponseLike> {
    return (call, callback) => {
      const { taskIds } = call.request;
      const problem = batchProblem(taskIds);
      if (problem !== undefined) {
        callback(toServiceError(new CoordinatorError(CoordinatorErrorCode.InvalidArgument, problem)));
        return;
      }
      this.reserveWorkerSlots(taskIds, cancelSignalOf(call), callerIdentity(call)).then(
        (results) => callback(null, { reservations: results.map((r, i) => reservationOf(taskIds[i]!, r)) }),
        (err: unknown) => {
          this.logger.error({ err: String(err) }, 'ReserveWorkerSlots failed unexpectedly');
          callback(toServiceError(err));
        },
      );
    };
  }

  /** A unary reservation's request: one RequestTaskSlot. */
  private async sendOne(
    cmd: RequestSlotsCommand,
    signal: CancelSignal | undefined,
    client: string | undefined,
  ): Promise<readonly SlotReply[]> {
    const opts = { timeoutMs: this.config.workerRpcTimeoutMs, signal, client };
    return [
      await this.reserver.requestTaskSlot(
        cmd.workerAddr,
        { taskId: cmd.taskIds[0]!, ttlMs: cmd.ttlMs },
        opts,
      ),
    ];
  }

  /** A batch's request: one RequestTaskSlots (or RequestTaskSlot per id without it). */
  private async sendMany(
    cmd: RequestSlotsCommand,
    signal: CancelSignal | undefined,
    client: string | undefined,
  ): Promise<SlotReply[]> {
    const req = { taskIds: cmd.taskIds, ttlMs: cmd.ttlMs };
    const opts = { timeoutMs: this.config.workerRpcTimeoutMs, signal, client };
    const replies =
      this.reserver.requestTaskSlots === undefined
        ? await requestSlotsOneByOne(this.reserver, cmd.workerAddr, req, opts)
        : await this.reserver.requestTaskSlots(cmd.workerAddr, req, opts);
    if (replies.length === cmd.taskIds.length) return replies;
    // A SlotReserver that broke its contract: an id without its own reply may have been reserved.
    const error = new SlotError('SlotUncertain', 'uncertain', 'no reply for this task id');
    return cmd.taskIds.map((_, i) => replies[i] ?? { ok: false, error });
  }
}
