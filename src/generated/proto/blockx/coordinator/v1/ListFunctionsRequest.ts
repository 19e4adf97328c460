// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto


export interface ListFunctionsRequest {
}

export interface ListFunctionsRequest__Output {
}
