// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskState as _blockx_worker_v1_TaskState, TaskState__Output as _blockx_worker_v1_TaskState__Output } from '../../../blockx/worker/v1/TaskState.js';
import type { TaskResult as _blockx_worker_v1_TaskResult, TaskResult__Output as _blockx_worker_v1_TaskResult__Output } from '../../../blockx/worker/v1/TaskResult.js';

export interface GetTaskResultResponse {
  /**
   * Echo of the requested task_id.
   */
  'taskId'?: (string);
  /**
   * The task's current state.
   */
  'state'?: (_blockx_worker_v1_TaskState);
  /**
   * The result when state is terminal; unset otherwise.
   */
  'result'?: (_blockx_worker_v1_TaskResult | null);
}

export interface GetTaskResultResponse__Output {
  /**
   * Echo of the requested task_id.
   */
  'taskId': (string);
  /**
   * The task's current state.
   */
  'state': (_blockx_worker_v1_TaskState__Output);
  /**
   * The result when state is terminal; unset otherwise.
   */
  'result': (_blockx_worker_v1_TaskResult__Output | null);
}
