// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/coordinator.proto

import type { ReservationError as _blockx_coordinator_v1_ReservationError, ReservationError__Output as _blockx_coordinator_v1_ReservationError__Output } from '../../../blockx/coordinator/v1/ReservationError.js';

/**
 * One task's outcome in ReserveWorkerSlotsResponse (the fields of ReserveWorkerSlotResponse, or an error).
 */
export interface WorkerSlotReservation {
  /**
   * The requested task id.
   */
  'taskId'?: (string);
  /**
   * Address of the Worker holding the slot; empty when `error` is set.
   */
  'workerAddr'?: (string);
  /**
   * Opaque slot id to pass to SubmitTask or RunTasks; empty when `error` is set (or, as in the unary
   * RPC, when the Worker holds a retained result of the task).
   */
  'slotId'?: (string);
  /**
   * Set when the task could not be placed.
   */
  'error'?: (_blockx_coordinator_v1_ReservationError | null);
}

/**
 * One task's outcome in ReserveWorkerSlotsResponse (the fields of ReserveWorkerSlotResponse, or an error).
 */
export interface WorkerSlotReservation__Output {
  /**
   * The requested task id.
   */
  'taskId': (string);
  /**
   * Address of the Worker holding the slot; empty when `error` is set.
   */
  'workerAddr': (string);
  /**
   * Opaque slot id to pass to SubmitTask or RunTasks; empty when `error` is set (or, as in the unary
   * RPC, when the Worker holds a retained result of the task).
   */
  'slotId': (string);
  /**
   * Set when the task could not be placed.
   */
  'error': (_blockx_coordinator_v1_ReservationError__Output | null);
}
