// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto


export interface UseFunctionsRequest {
  /**
   * A kept version, or a unique prefix of at least 4 hex digits.
   */
  'version'?: (string);
}

export interface UseFunctionsRequest__Output {
  /**
   * A kept version, or a unique prefix of at least 4 hex digits.
   */
  'version': (string);
}
