// The alphabet of the ReservationMachine (reservation.ts): its inputs, the commands it asks the adapter
// to perform, the events it reports, and the per-task result. Every input carries `now` (UTC ms).
// docs/batched-protocol.md § Coordinator: ReserveWorkerSlots.

import type { CoordinatorError, CoordinatorErrorCode } from './errors.js';
import type { CapacityReport, SlotOutcome } from './inputs.js';

/** One task's reservation, as ReserveWorkerSlot answers it (and ReserveWorkerSlots per id). */
export type ReserveResult =
  | { readonly ok: true; readonly taskId: string; readonly workerAddr: string; readonly slotId: string }
  | { readonly ok: false; readonly error: CoordinatorError };

/**
 * What a Worker said about one task id of a request, as the adapter classified it (worker-rpc-client.ts
 * `grpcErrToSlotError`, for a whole-call failure and for a per-id TaskError alike):
 *  - `granted`: a slot id and the task's state (an empty slot id is uncertain unless the state is
 *    terminal: a retained result);
 *  - `rejected`: nothing was reserved — the Worker refused (`kind: 'rejected'`) or the request never
 *    reached it (`kind: 'transport'`);
 *  - `uncertain`: the Worker may hold a slot (deadline, dropped connection, cancel, internal error).
 */
export type SlotAnswer =
  | { readonly type: 'granted'; readonly slotId: string; readonly state: string }
  | {
      readonly type: 'rejected';
      readonly code: CoordinatorErrorCode;
      readonly kind: 'rejected' | 'transport';
      readonly reason: string;
    }
  | { readonly type: 'uncertain'; readonly reason: string };

export type ReservationInput =
  /** Validate, check readiness, claim the first candidates. Exactly once, first. */
  | { readonly type: 'start'; readonly now: number }
  /**
   * The request `requestId` came back: one answer per task id of the command, in its order, and the
   * Worker's slot counts read after every grant of that request when it sent them.
   */
  | {
      readonly type: 'answered';
      readonly requestId: number;
      readonly answers: readonly SlotAnswer[];
      readonly capacity?: CapacityReport | undefined;
      readonly now: number;
    }
  /** The request failed as a whole (deadline, connection refused, ...): `answer` holds for every id. */
  | {
      readonly type: 'callFailed';
      readonly requestId: number;
      readonly answer: SlotAnswer;
      readonly now: number;
    }
  /**
   * The adapter cannot tell what became of the request (the SlotReserver threw): its tasks end as
   * Internal, their claims as possibly holding a slot, and the Worker is not blamed.
   */
  | { readonly type: 'internalError'; readonly requestId: number; readonly now: number }
  /**
   * The Client went away. `unsent`: requests the machine asked for that the adapter did not send. No
   * further request is asked for; answers of requests in flight are still expected.
   */
  | { readonly type: 'cancelled'; readonly unsent: readonly number[]; readonly now: number }
  /** The adapter gives up on the machine (an unexpected failure): every open claim is settled. */
  | { readonly type: 'abandoned'; readonly now: number };

/** Send RequestTaskSlots(taskIds, ttlMs) — RequestTaskSlot for one id — to `workerAddr`. */
export interface RequestSlotsCommand {
  readonly type: 'requestSlots';
  readonly requestId: number;
  readonly workerAddr: string;
  readonly taskIds: readonly string[];
  readonly ttlMs: number;
  /** 0 for a new candidate; k for the k-th same-Worker retry of the same ids after an uncertain answer. */
  readonly attempt: number;
}

export type ReservationEvent =
  /** One task id explicitly refused by a Worker (`backpressure`: its pool is full). */
  | {
      readonly type: 'rejected';
      readonly workerAddr: string;
      readonly taskId: string;
      readonly code: CoordinatorErrorCode;
      readonly kind: 'rejected' | 'transport';
      readonly outcome: Extract<SlotOutcome, 'rejection' | 'backpressure'>;
      readonly reason: string;
    }
  /** These ids of one request came back uncertain (retried next unless retries are exhausted). */
  | {
      readonly type: 'uncertain';
      readonly workerAddr: string;
      readonly taskIds: readonly string[];
      readonly attempt: number;
      readonly reason: string;
    }
  /** Feedback of one request opened the Worker's circuit breaker. */
  | { readonly type: 'breakerOpened'; readonly workerAddr: string; readonly cause: 'rejection' | 'timeout' }
  /** These ids stayed uncertain after every retry: SlotUncertain, the Worker may hold their slots. */
  | {
      readonly type: 'gaveUp';
      readonly workerAddr: string;
      readonly taskIds: readonly string[];
      readonly retries: number;
      readonly reason: string;
      readonly breakerOpened: boolean;
    }
  /** One distinct task id has its final result; `candidatesTried`: Workers claimed for it. */
  | {
      readonly type: 'finished';
      readonly taskId: string;
      readonly result: ReserveResult;
      readonly candidatesTried: number;
    };

/** What one input produced. */
export interface ReservationStep {
  readonly commands: readonly RequestSlotsCommand[];
  readonly events: readonly ReservationEvent[];
}

export interface ReservationConfig {
  /** Retries on the same Worker after an uncertain answer (COORDINATOR_MAX_TIMEOUT_RETRIES); 0 allowed. */
  readonly maxTimeoutRetries: number;
}
