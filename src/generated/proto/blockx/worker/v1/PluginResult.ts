// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto


/**
 * The outcome of one Writer Plugin run.
 */
export interface PluginResult {
  /**
   * The plugin type that produced this result.
   */
  'pluginName'?: (string);
  /**
   * Whether the plugin succeeded.
   */
  'success'?: (boolean);
  /**
   * Stable failure code when success is false, e.g. "PLUGIN_FAILED".
   */
  'failureCode'?: (string);
  /**
   * Plugin output as UTF-8 JSON (ReturnValueResultHandler: the array of call outputs); may be empty.
   */
  'result'?: (Buffer | Uint8Array | string);
  /**
   * Human-readable failure detail when success is false.
   */
  'failureMessage'?: (string);
}

/**
 * The outcome of one Writer Plugin run.
 */
export interface PluginResult__Output {
  /**
   * The plugin type that produced this result.
   */
  'pluginName': (string);
  /**
   * Whether the plugin succeeded.
   */
  'success': (boolean);
  /**
   * Stable failure code when success is false, e.g. "PLUGIN_FAILED".
   */
  'failureCode': (string);
  /**
   * Plugin output as UTF-8 JSON (ReturnValueResultHandler: the array of call outputs); may be empty.
   */
  'result': (Buffer);
  /**
   * Human-readable failure detail when success is false.
   */
  'failureMessage': (string);
}
