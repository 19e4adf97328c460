// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/bundlecoordinator/v1/bundle_coordinator.proto


export interface ReserveWorkerSlotRequest {
  /**
   * Client-generated task id; must not be empty.
   */
  'taskId'?: (string);
}

export interface ReserveWorkerSlotRequest__Output {
  /**
   * Client-generated task id; must not be empty.
   */
  'taskId': (string);
}
