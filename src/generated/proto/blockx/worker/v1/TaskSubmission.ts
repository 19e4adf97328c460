// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskInput as _blockx_worker_v1_TaskInput, TaskInput__Output as _blockx_worker_v1_TaskInput__Output } from '../../../blockx/worker/v1/TaskInput.js';

/**
 * One task sent on a RunTasks stream (the fields of SubmitTaskRequest).
 */
export interface TaskSubmission {
  /**
   * The task to run.
   */
  'task'?: (_blockx_worker_v1_TaskInput | null);
  /**
   * The slot from RequestTaskSlot(s) or a reservation; empty asks the Worker to reserve one inline.
   */
  'slotId'?: (string);
}

/**
 * One task sent on a RunTasks stream (the fields of SubmitTaskRequest).
 */
export interface TaskSubmission__Output {
  /**
   * The task to run.
   */
  'task': (_blockx_worker_v1_TaskInput__Output | null);
  /**
   * The slot from RequestTaskSlot(s) or a reservation; empty asks the Worker to reserve one inline.
   */
  'slotId': (string);
}
