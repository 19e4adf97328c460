// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskState as _blockx_worker_v1_TaskState, TaskState__Output as _blockx_worker_v1_TaskState__Output } from '../../../blockx/worker/v1/TaskState.js';
import type { WorkerCapacity as _blockx_worker_v1_WorkerCapacity, WorkerCapacity__Output as _blockx_worker_v1_WorkerCapacity__Output } from '../../../blockx/worker/v1/WorkerCapacity.js';

export interface RequestTaskSlotResponse {
  /**
   * Echo of the request's task_id.
   */
  'taskId'?: (string);
  /**
   * Opaque id of the reserved slot; pass it to SubmitTask.
   */
  'slotId'?: (string);
  /**
   * The task's state after the call (ALLOCATED, or RUNNING if already submitted).
   */
  'state'?: (_blockx_worker_v1_TaskState);
  /**
   * The Worker's slot counts right after this call (docs/placement.md § Capacity from the Workers'
   * answers). Unset from a Worker that predates it.
   */
  'capacity'?: (_blockx_worker_v1_WorkerCapacity | null);
}

export interface RequestTaskSlotResponse__Output {
  /**
   * Echo of the request's task_id.
   */
  'taskId': (string);
  /**
   * Opaque id of the reserved slot; pass it to SubmitTask.
   */
  'slotId': (string);
  /**
   * The task's state after the call (ALLOCATED, or RUNNING if already submitted).
   */
  'state': (_blockx_worker_v1_TaskState__Output);
  /**
   * The Worker's slot counts right after this call (docs/placement.md § Capacity from the Workers'
   * answers). Unset from a Worker that predates it.
   */
  'capacity': (_blockx_worker_v1_WorkerCapacity__Output | null);
}
