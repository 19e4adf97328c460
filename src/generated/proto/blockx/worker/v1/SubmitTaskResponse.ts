// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskState as _blockx_worker_v1_TaskState, TaskState__Output as _blockx_worker_v1_TaskState__Output } from '../../../blockx/worker/v1/TaskState.js';
import type { TaskResult as _blockx_worker_v1_TaskResult, TaskResult__Output as _blockx_worker_v1_TaskResult__Output } from '../../../blockx/worker/v1/TaskResult.js';

export interface SubmitTaskResponse {
  /**
   * Echo of the submitted task_id.
   */
  'taskId'?: (string);
  /**
   * RUNNING once admitted, or the terminal state if a retained result exists.
   */
  'state'?: (_blockx_worker_v1_TaskState);
  /**
   * The retained result when state is terminal; unset otherwise.
   */
  'result'?: (_blockx_worker_v1_TaskResult | null);
}

export interface SubmitTaskResponse__Output {
  /**
   * Echo of the submitted task_id.
   */
  'taskId': (string);
  /**
   * RUNNING once admitted, or the terminal state if a retained result exists.
   */
  'state': (_blockx_worker_v1_TaskState__Output);
  /**
   * The retained result when state is terminal; unset otherwise.
   */
  'result': (_blockx_worker_v1_TaskResult__Output | null);
}
