// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto


export interface GetTaskResultRequest {
  /**
   * The task to look up.
   */
  'taskId'?: (string);
}

export interface GetTaskResultRequest__Output {
  /**
   * The task to look up.
   */
  'taskId': (string);
}
