// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { ExecuteResult as _blockx_worker_v1_ExecuteResult, ExecuteResult__Output as _blockx_worker_v1_ExecuteResult__Output } from '../../../blockx/worker/v1/ExecuteResult.js';

/**
 * The terminal result of a task (per-call return values are not included).
 */
export interface TaskResult {
  /**
   * True when the task succeeded.
   */
  'success'?: (boolean);
  /**
   * Details of the execution outcome.
   */
  'executeResult'?: (_blockx_worker_v1_ExecuteResult | null);
  /**
   * The code version (content hash of the function files, docs/functions-deploy.md) the task's calls
   * ran on: the epoch pinned at activation. Empty when the task ended before it pinned one.
   */
  'codeVersion'?: (string);
}

/**
 * The terminal result of a task (per-call return values are not included).
 */
export interface TaskResult__Output {
  /**
   * True when the task succeeded.
   */
  'success': (boolean);
  /**
   * Details of the execution outcome.
   */
  'executeResult': (_blockx_worker_v1_ExecuteResult__Output | null);
  /**
   * The code version (content hash of the function files, docs/functions-deploy.md) the task's calls
   * ran on: the epoch pinned at activation. Empty when the task ended before it pinned one.
   */
  'codeVersion': (string);
}
