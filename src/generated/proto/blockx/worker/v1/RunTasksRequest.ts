// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskSubmission as _blockx_worker_v1_TaskSubmission, TaskSubmission__Output as _blockx_worker_v1_TaskSubmission__Output } from '../../../blockx/worker/v1/TaskSubmission.js';

export interface RunTasksRequest {
  /**
   * Tasks to admit, each using one credit until its terminal update (or its refusal) comes back.
   */
  'tasks'?: (_blockx_worker_v1_TaskSubmission)[];
}

export interface RunTasksRequest__Output {
  /**
   * Tasks to admit, each using one credit until its terminal update (or its refusal) comes back.
   */
  'tasks': (_blockx_worker_v1_TaskSubmission__Output)[];
}
