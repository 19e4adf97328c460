// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto


/**
 * A plugin selector plus its opaque configuration.
 */
export interface PluginConfig {
  /**
   * The registered plugin type, e.g. "CallListCallConfig" or "ReturnValueResultHandler".
   */
  'type'?: (string);
  /**
   * The plugin's configuration as UTF-8 JSON, validated against the plugin's schema.
   */
  'config'?: (Buffer | Uint8Array | string);
}

/**
 * A plugin selector plus its opaque configuration.
 */
export interface PluginConfig__Output {
  /**
   * The registered plugin type, e.g. "CallListCallConfig" or "ReturnValueResultHandler".
   */
  'type': (string);
  /**
   * The plugin's configuration as UTF-8 JSON, validated against the plugin's schema.
   */
  'config': (Buffer);
}
