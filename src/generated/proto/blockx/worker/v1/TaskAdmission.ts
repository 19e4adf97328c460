// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskState as _blockx_worker_v1_TaskState, TaskState__Output as _blockx_worker_v1_TaskState__Output } from '../../../blockx/worker/v1/TaskState.js';
import type { TaskResult as _blockx_worker_v1_TaskResult, TaskResult__Output as _blockx_worker_v1_TaskResult__Output } from '../../../blockx/worker/v1/TaskResult.js';
import type { TaskError as _blockx_worker_v1_TaskError, TaskError__Output as _blockx_worker_v1_TaskError__Output } from '../../../blockx/worker/v1/TaskError.js';

/**
 * One task's admission on a RunTasks stream: what SubmitTask would have answered.
 */
export interface TaskAdmission {
  /**
   * The submitted task id.
   */
  'taskId'?: (string);
  /**
   * RUNNING once admitted, or the terminal state of a retained result; UNSPECIFIED when refused.
   */
  'state'?: (_blockx_worker_v1_TaskState);
  /**
   * The retained result when state is terminal; unset otherwise.
   */
  'result'?: (_blockx_worker_v1_TaskResult | null);
  /**
   * Set when the task was refused (NoSlot, InvalidSlot, InvalidArgument, Unavailable); the task then
   * holds no credit and no terminal update follows for it.
   */
  'error'?: (_blockx_worker_v1_TaskError | null);
}

/**
 * One task's admission on a RunTasks stream: what SubmitTask would have answered.
 */
export interface TaskAdmission__Output {
  /**
   * The submitted task id.
   */
  'taskId': (string);
  /**
   * RUNNING once admitted, or the terminal state of a retained result; UNSPECIFIED when refused.
   */
  'state': (_blockx_worker_v1_TaskState__Output);
  /**
   * The retained result when state is terminal; unset otherwise.
   */
  'result': (_blockx_worker_v1_TaskResult__Output | null);
  /**
   * Set when the task was refused (NoSlot, InvalidSlot, InvalidArgument, Unavailable); the task then
   * holds no credit and no terminal update follows for it.
   */
  'error': (_blockx_worker_v1_TaskError__Output | null);
}
