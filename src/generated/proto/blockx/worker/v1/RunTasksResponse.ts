// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskAdmission as _blockx_worker_v1_TaskAdmission, TaskAdmission__Output as _blockx_worker_v1_TaskAdmission__Output } from '../../../blockx/worker/v1/TaskAdmission.js';
import type { TaskUpdate as _blockx_worker_v1_TaskUpdate, TaskUpdate__Output as _blockx_worker_v1_TaskUpdate__Output } from '../../../blockx/worker/v1/TaskUpdate.js';

export interface RunTasksResponse {
  /**
   * Credits granted by this message, added to the client's balance. The first message of a stream
   * carries the initial grant; a credit comes back with every refused admission, every admission
   * answered with a retained terminal result, and every terminal update.
   */
  'credits'?: (number);
  /**
   * Admissions, in the order the tasks were received.
   */
  'admissions'?: (_blockx_worker_v1_TaskAdmission)[];
  /**
   * Terminal updates of tasks admitted RUNNING on this stream: exactly one per admitted task id.
   */
  'updates'?: (_blockx_worker_v1_TaskUpdate)[];
}

export interface RunTasksResponse__Output {
  /**
   * Credits granted by this message, added to the client's balance. The first message of a stream
   * carries the initial grant; a credit comes back with every refused admission, every admission
   * answered with a retained terminal result, and every terminal update.
   */
  'credits': (number);
  /**
   * Admissions, in the order the tasks were received.
   */
  'admissions': (_blockx_worker_v1_TaskAdmission__Output)[];
  /**
   * Terminal updates of tasks admitted RUNNING on this stream: exactly one per admitted task id.
   */
  'updates': (_blockx_worker_v1_TaskUpdate__Output)[];
}
