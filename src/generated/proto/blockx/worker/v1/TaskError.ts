// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto


/**
 * A per-task refusal inside a batched call: the same outcome the unary RPC would return as a status.
 */
export interface TaskError {
  /**
   * The business code, as in the `blockx-error-code` metadata of the unary RPCs: "NoSlot",
   * "InvalidSlot", "InvalidArgument", "Unavailable", "NotFound".
   */
  'code'?: (string);
  /**
   * The gRPC status code the unary RPC would have returned (e.g. 8 RESOURCE_EXHAUSTED for NoSlot).
   */
  'status'?: (number);
  /**
   * Human-readable detail (at most 4 KiB).
   */
  'message'?: (string);
}

/**
 * A per-task refusal inside a batched call: the same outcome the unary RPC would return as a status.
 */
export interface TaskError__Output {
  /**
   * The business code, as in the `blockx-error-code` metadata of the unary RPCs: "NoSlot",
   * "InvalidSlot", "InvalidArgument", "Unavailable", "NotFound".
   */
  'code': (string);
  /**
   * The gRPC status code the unary RPC would have returned (e.g. 8 RESOURCE_EXHAUSTED for NoSlot).
   */
  'status': (number);
  /**
   * Human-readable detail (at most 4 KiB).
   */
  'message': (string);
}
