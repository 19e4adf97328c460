// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto


export interface DeployFunctionsRequest {
  /**
   * One stored bundle (gzip JSON, docs/functions-deploy.md § What a bundle holds), at most 1 MiB.
   */
  'bundle'?: (Buffer | Uint8Array | string);
  /**
   * The version the bundle claims; the Coordinator verifies the files hash to it.
   */
  'version'?: (string);
}

export interface DeployFunctionsRequest__Output {
  /**
   * One stored bundle (gzip JSON, docs/functions-deploy.md § What a bundle holds), at most 1 MiB.
   */
  'bundle': (Buffer);
  /**
   * The version the bundle claims; the Coordinator verifies the files hash to it.
   */
  'version': (string);
}
