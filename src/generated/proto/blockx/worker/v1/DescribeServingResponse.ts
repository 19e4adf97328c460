// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker_admin.proto

import type { ServedPlugin as _blockx_worker_v1_ServedPlugin, ServedPlugin__Output as _blockx_worker_v1_ServedPlugin__Output } from '../../../blockx/worker/v1/ServedPlugin.js';

export interface DescribeServingResponse {
  /**
   * The deployment this Worker serves.
   */
  'deployment'?: (string);
  /**
   * Every builder and writer, sorted by type.
   */
  'plugins'?: (_blockx_worker_v1_ServedPlugin)[];
  /**
   * The declared tables it serves (the config's `tables` section as now served), as JSON text.
   */
  'tablesJson'?: (string);
  /**
   * The function names (every language) of the code new tasks get now, sorted; meaningful only
   * when `functions_known`.
   */
  'functions'?: (string)[];
  /**
   * False when this Worker cannot list its functions (its code source does not say).
   */
  'functionsKnown'?: (boolean);
}

export interface DescribeServingResponse__Output {
  /**
   * The deployment this Worker serves.
   */
  'deployment': (string);
  /**
   * Every builder and writer, sorted by type.
   */
  'plugins': (_blockx_worker_v1_ServedPlugin__Output)[];
  /**
   * The declared tables it serves (the config's `tables` section as now served), as JSON text.
   */
  'tablesJson': (string);
  /**
   * The function names (every language) of the code new tasks get now, sorted; meaningful only
   * when `functions_known`.
   */
  'functions': (string)[];
  /**
   * False when this Worker cannot list its functions (its code source does not say).
   */
  'functionsKnown': (boolean);
}
