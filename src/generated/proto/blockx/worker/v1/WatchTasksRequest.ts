// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto


export interface WatchTasksRequest {
  /**
   * Tasks to follow; unknown ids get a terminal update with error "not_found".
   */
  'taskIds'?: (string)[];
}

export interface WatchTasksRequest__Output {
  /**
   * Tasks to follow; unknown ids get a terminal update with error "not_found".
   */
  'taskIds': (string)[];
}
