// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker_admin.proto


export interface DescribeServingRequest {
}

export interface DescribeServingRequest__Output {
}
