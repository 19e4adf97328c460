// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/coordinator.proto


export interface ReserveWorkerSlotsRequest {
  /**
   * Client-generated task ids; 1 to 10,000 of them.
   */
  'taskIds'?: (string)[];
}

export interface ReserveWorkerSlotsRequest__Output {
  /**
   * Client-generated task ids; 1 to 10,000 of them.
   */
  'taskIds': (string)[];
}
