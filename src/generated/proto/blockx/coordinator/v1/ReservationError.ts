// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/coordinator.proto


/**
 * A per-task refusal inside ReserveWorkerSlots: what ReserveWorkerSlot would have returned as a status.
 */
export interface ReservationError {
  /**
   * The business code, as in the `blockx-error-code` metadata of ReserveWorkerSlot: "InvalidArgument",
   * "Unavailable", "NoExecutableSlot", "AllCandidatesRejected", "SlotUncertain".
   */
  'code'?: (string);
  /**
   * The gRPC status code ReserveWorkerSlot would have returned (3, 14, 8 or 10).
   */
  'status'?: (number);
  /**
   * Human-readable detail (at most 4 KiB).
   */
  'message'?: (string);
}

/**
 * A per-task refusal inside ReserveWorkerSlots: what ReserveWorkerSlot would have returned as a status.
 */
export interface ReservationError__Output {
  /**
   * The business code, as in the `blockx-error-code` metadata of ReserveWorkerSlot: "InvalidArgument",
   * "Unavailable", "NoExecutableSlot", "AllCandidatesRejected", "SlotUncertain".
   */
  'code': (string);
  /**
   * The gRPC status code ReserveWorkerSlot would have returned (3, 14, 8 or 10).
   */
  'status': (number);
  /**
   * Human-readable detail (at most 4 KiB).
   */
  'message': (string);
}
