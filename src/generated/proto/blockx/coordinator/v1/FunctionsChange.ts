// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto

import type { FunctionsVersion as _blockx_coordinator_v1_FunctionsVersion, FunctionsVersion__Output as _blockx_coordinator_v1_FunctionsVersion__Output } from '../../../blockx/coordinator/v1/FunctionsVersion.js';

export interface FunctionsChange {
  /**
   * The version now current.
   */
  'entry'?: (_blockx_coordinator_v1_FunctionsVersion | null);
  /**
   * False when it was already current.
   */
  'changed'?: (boolean);
  /**
   * Deploy only: false when the same version had been stored before.
   */
  'newVersion'?: (boolean);
  /**
   * The version current before, empty if none.
   */
  'previous'?: (string);
  /**
   * Deploy only: versions dropped beyond the kept history.
   */
  'pruned'?: (string)[];
}

export interface FunctionsChange__Output {
  /**
   * The version now current.
   */
  'entry': (_blockx_coordinator_v1_FunctionsVersion__Output | null);
  /**
   * False when it was already current.
   */
  'changed': (boolean);
  /**
   * Deploy only: false when the same version had been stored before.
   */
  'newVersion': (boolean);
  /**
   * The version current before, empty if none.
   */
  'previous': (string);
  /**
   * Deploy only: versions dropped beyond the kept history.
   */
  'pruned': (string)[];
}
