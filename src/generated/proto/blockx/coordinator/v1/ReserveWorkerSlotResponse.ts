// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/coordinator.proto


export interface ReserveWorkerSlotResponse {
  /**
   * Echo of the request's task_id.
   */
  'taskId'?: (string);
  /**
   * Address of the Worker holding the slot; submit the task there.
   */
  'workerAddr'?: (string);
  /**
   * Opaque slot id to pass to WorkerService.SubmitTask.
   */
  'slotId'?: (string);
}

export interface ReserveWorkerSlotResponse__Output {
  /**
   * Echo of the request's task_id.
   */
  'taskId': (string);
  /**
   * Address of the Worker holding the slot; submit the task there.
   */
  'workerAddr': (string);
  /**
   * Opaque slot id to pass to WorkerService.SubmitTask.
   */
  'slotId': (string);
}
