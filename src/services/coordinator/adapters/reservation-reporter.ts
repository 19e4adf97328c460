// Reporting of reservations (docs/coordinator.md § Observability): the observer calls (metrics) and the
// debug/warn lines of CoordinatorServer (coordinator-server.ts), kept apart from how requests go out.
// Every reservation of a task ends in one `observer.onReservation` call; explicit rejections and breaker
// trips are reported as they happen. A unary reservation also ends in one debug line with its task_id,
// outcome, duration and candidates tried; a batch ends in one debug line with its counts.

import type { ServiceLogger } from '../../../kernel/observability/service-logger.js';
import { performance } from 'node:perf_hooks';
import { MAX_ID_BYTES, cutText } from '../../../kernel/input-bounds.js';
import type { SlotOutcome } from '../core/inputs.js';
import type { ReservationEvent, ReserveResult } from '../core/reservation-types.js';

/** One task's reservation as a whole, for metrics. */
export interface ReservationRecord {
  readonly taskId: string;
  /** undefined when the orchestration itself threw (an Internal error reaches the Client). */
  readonly result: ReserveResult | undefined;
  /** Wall time of the reservation (monotonic clock); in a batch, from the call's start to this task's end. */
  readonly durationMs: number;
  /** Distinct Workers sent a RequestTaskSlot(s) for this task. */
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

/** At most this many ids of one request in a log line. */
const LOGGED_IDS = 5;

export class ReservationReporter {
  constructor(
    private readonly logger: ServiceLogger,
    private readonly observer: ReservationObserver,
  ) {}

  /** Reports one step's events; `batch` is undefined for a unary reservation. */
  report(events: readonly ReservationEvent[], batch: BatchStats | undefined): void {
    for (const e of events) {
      switch (e.type) {
        case 'rejected':
          this.notify(() => this.observer.onRejection?.(e.workerAddr, e.outcome));
          if (batch === undefined) {
            this.logger.debug(
              {
                workerAddr: e.workerAddr,
                task_id: e.taskId,
                code: e.code,
                kind: e.kind,
                outcome: e.outcome,
                reason: e.reason,
              },
              'worker rejected the reservation',
            );
          }
          break;
        case 'uncertain':
          this.logger.debug(
            { workerAddr: e.workerAddr, ...idsField(e.taskIds, batch), attempt: e.attempt, reason: e.reason },
            'reservation outcome uncertain',
          );
          break;
        case 'breakerOpened':
          this.notify(() => this.observer.onBreakerTripped?.(e.workerAddr, e.cause));
          if (e.cause === 'rejection') {
            this.logger.warn({ workerAddr: e.workerAddr, cause: e.cause }, 'worker circuit breaker opened');
          }
          break;
        case 'gaveUp':
          this.logger.warn(
            {
              workerAddr: e.workerAddr,
              ...idsField(e.taskIds, batch),
              retries: e.retries,
              reason: e.reason,
              breakerOpened: e.breakerOpened,
            },
            'slot reservation still uncertain after retries; the worker may hold a slot until its TTL',
          );
          break;
        case 'finished':
          // A unary reservation reports itself once it returns (`finished`), also when it throws.
          if (batch !== undefined) {
            batch.distinct += 1;
            const outcome = e.result.ok ? 'ok' : e.result.error.code;
            batch.outcomes[outcome] = (batch.outcomes[outcome] ?? 0) + 1;
            const record = {
              taskId: e.taskId,
              result: e.result,
              durationMs: performance.now() - batch.startedAt,
              candidatesTried: e.candidatesTried,
            };
            this.notify(() => this.observer.onReservation?.(record));
          }
          break;
        default: {
          const _exhaustive: never = e;
          throw new Error(`unknown reservation event ${JSON.stringify(_exhaustive)}`);
        }
      }
    }
  }

  finished(record: ReservationRecord): void {
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
    this.notify(() => this.observer.onReservation?.(record), taskId);
  }

  /** An observer that throws must not fail a reservation. */
  notify(fn: () => void, taskId?: string): void {
    try {
      fn();
    } catch (err) {
      this.logger.error({ task_id: taskId, err: String(err) }, 'reservation observer failed');
    }
  }
}

/** What a batch's debug line reports. */
export interface BatchStats {
  readonly startedAt: number;
  readonly outcomes: Record<string, number>;
  requests: number;
  readonly workers: Set<string>;
  distinct: number;
}

/** `task_id` for a unary reservation; a count and the first few ids (cut) for a batch. */
function idsField(taskIds: readonly string[], batch: BatchStats | undefined): Record<string, unknown> {
  if (batch === undefined) return { task_id: cutText(taskIds[0] ?? '', MAX_ID_BYTES) };
  return {
    task_ids: taskIds.length,
    first_task_ids: taskIds.slice(0, LOGGED_IDS).map((id) => cutText(id, MAX_ID_BYTES)),
  };
}
