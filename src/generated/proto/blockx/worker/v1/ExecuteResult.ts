// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { PluginResult as _blockx_worker_v1_PluginResult, PluginResult__Output as _blockx_worker_v1_PluginResult__Output } from '../../../blockx/worker/v1/PluginResult.js';

/**
 * Task-level execution outcome.
 */
export interface ExecuteResult {
  /**
   * Stable failure code when the task failed, e.g. "CALL_FAILED", "TIMED_OUT"; empty on success.
   */
  'failureCode'?: (string);
  /**
   * Whether resubmitting the same task may succeed; the Client decides.
   */
  'retryable'?: (boolean);
  /**
   * Results of the Writer Plugin (at most one plugin per task).
   */
  'pluginResults'?: (_blockx_worker_v1_PluginResult)[];
  /**
   * Human-readable failure detail; empty on success.
   */
  'failureMessage'?: (string);
}

/**
 * Task-level execution outcome.
 */
export interface ExecuteResult__Output {
  /**
   * Stable failure code when the task failed, e.g. "CALL_FAILED", "TIMED_OUT"; empty on success.
   */
  'failureCode': (string);
  /**
   * Whether resubmitting the same task may succeed; the Client decides.
   */
  'retryable': (boolean);
  /**
   * Results of the Writer Plugin (at most one plugin per task).
   */
  'pluginResults': (_blockx_worker_v1_PluginResult__Output)[];
  /**
   * Human-readable failure detail; empty on success.
   */
  'failureMessage': (string);
}
