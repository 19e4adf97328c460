// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto

import type { FunctionsVersion as _blockx_coordinator_v1_FunctionsVersion, FunctionsVersion__Output as _blockx_coordinator_v1_FunctionsVersion__Output } from '../../../blockx/coordinator/v1/FunctionsVersion.js';

export interface ListFunctionsResponse {
  /**
   * Empty before the first deploy.
   */
  'current'?: (string);
  /**
   * Oldest first.
   */
  'versions'?: (_blockx_coordinator_v1_FunctionsVersion)[];
}

export interface ListFunctionsResponse__Output {
  /**
   * Empty before the first deploy.
   */
  'current': (string);
  /**
   * Oldest first.
   */
  'versions': (_blockx_coordinator_v1_FunctionsVersion__Output)[];
}
