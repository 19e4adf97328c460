// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskState as _blockx_worker_v1_TaskState, TaskState__Output as _blockx_worker_v1_TaskState__Output } from '../../../blockx/worker/v1/TaskState.js';
import type { TaskError as _blockx_worker_v1_TaskError, TaskError__Output as _blockx_worker_v1_TaskError__Output } from '../../../blockx/worker/v1/TaskError.js';

/**
 * One task's outcome in RequestTaskSlotsResponse.
 */
export interface SlotGrant {
  /**
   * The requested task id.
   */
  'taskId'?: (string);
  /**
   * The reserved slot (as RequestTaskSlotResponse.slot_id); empty when `error` is set.
   */
  'slotId'?: (string);
  /**
   * The task's state after the call (as RequestTaskSlotResponse.state).
   */
  'state'?: (_blockx_worker_v1_TaskState);
  /**
   * Set when this id was refused; the other fields are then empty.
   */
  'error'?: (_blockx_worker_v1_TaskError | null);
}

/**
 * One task's outcome in RequestTaskSlotsResponse.
 */
export interface SlotGrant__Output {
  /**
   * The requested task id.
   */
  'taskId': (string);
  /**
   * The reserved slot (as RequestTaskSlotResponse.slot_id); empty when `error` is set.
   */
  'slotId': (string);
  /**
   * The task's state after the call (as RequestTaskSlotResponse.state).
   */
  'state': (_blockx_worker_v1_TaskState__Output);
  /**
   * Set when this id was refused; the other fields are then empty.
   */
  'error': (_blockx_worker_v1_TaskError__Output | null);
}
