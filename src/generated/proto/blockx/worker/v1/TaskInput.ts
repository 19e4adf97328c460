// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { PluginConfig as _blockx_worker_v1_PluginConfig, PluginConfig__Output as _blockx_worker_v1_PluginConfig__Output } from '../../../blockx/worker/v1/PluginConfig.js';
import type { Long } from '@grpc/proto-loader';

/**
 * Everything a Worker needs to run a task.
 */
export interface TaskInput {
  /**
   * Client-generated stable unique id (uuid4 recommended); the idempotency key.
   */
  'taskId'?: (string);
  /**
   * Selects the Call Builder and carries its config.
   */
  'functionCallConfig'?: (_blockx_worker_v1_PluginConfig | null);
  /**
   * Optional Writer Plugin; an empty type means no writer.
   */
  'resultHandler'?: (_blockx_worker_v1_PluginConfig | null);
  /**
   * Task timeout in ms; 0 uses the Worker default, negative or above the Worker cap is rejected.
   */
  'taskTimeoutMs'?: (number | string | Long);
}

/**
 * Everything a Worker needs to run a task.
 */
export interface TaskInput__Output {
  /**
   * Client-generated stable unique id (uuid4 recommended); the idempotency key.
   */
  'taskId': (string);
  /**
   * Selects the Call Builder and carries its config.
   */
  'functionCallConfig': (_blockx_worker_v1_PluginConfig__Output | null);
  /**
   * Optional Writer Plugin; an empty type means no writer.
   */
  'resultHandler': (_blockx_worker_v1_PluginConfig__Output | null);
  /**
   * Task timeout in ms; 0 uses the Worker default, negative or above the Worker cap is rejected.
   */
  'taskTimeoutMs': (number);
}
