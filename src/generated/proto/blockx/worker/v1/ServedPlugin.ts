// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker_admin.proto


/**
 * One plugin the Worker has registered.
 */
export interface ServedPlugin {
  /**
   * The plugin type a task names (e.g. "TableUpsertsResultHandler").
   */
  'type'?: (string);
  /**
   * "builder" or "writer".
   */
  'kind'?: (string);
  /**
   * The JSON Schema its config is checked against, as JSON text.
   */
  'schemaJson'?: (string);
}

/**
 * One plugin the Worker has registered.
 */
export interface ServedPlugin__Output {
  /**
   * The plugin type a task names (e.g. "TableUpsertsResultHandler").
   */
  'type': (string);
  /**
   * "builder" or "writer".
   */
  'kind': (string);
  /**
   * The JSON Schema its config is checked against, as JSON text.
   */
  'schemaJson': (string);
}
