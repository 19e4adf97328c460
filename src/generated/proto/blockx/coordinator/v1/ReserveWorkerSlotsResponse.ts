// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/coordinator.proto

import type { WorkerSlotReservation as _blockx_coordinator_v1_WorkerSlotReservation, WorkerSlotReservation__Output as _blockx_coordinator_v1_WorkerSlotReservation__Output } from '../../../blockx/coordinator/v1/WorkerSlotReservation.js';

export interface ReserveWorkerSlotsResponse {
  /**
   * One reservation per requested id, in request order (a repeated id gets the same answer).
   */
  'reservations'?: (_blockx_coordinator_v1_WorkerSlotReservation)[];
}

export interface ReserveWorkerSlotsResponse__Output {
  /**
   * One reservation per requested id, in request order (a repeated id gets the same answer).
   */
  'reservations': (_blockx_coordinator_v1_WorkerSlotReservation__Output)[];
}
