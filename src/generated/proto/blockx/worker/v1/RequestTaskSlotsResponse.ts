// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { SlotGrant as _blockx_worker_v1_SlotGrant, SlotGrant__Output as _blockx_worker_v1_SlotGrant__Output } from '../../../blockx/worker/v1/SlotGrant.js';
import type { WorkerCapacity as _blockx_worker_v1_WorkerCapacity, WorkerCapacity__Output as _blockx_worker_v1_WorkerCapacity__Output } from '../../../blockx/worker/v1/WorkerCapacity.js';

export interface RequestTaskSlotsResponse {
  /**
   * One grant per requested id, in request order (a repeated id gets the same answer each time).
   */
  'grants'?: (_blockx_worker_v1_SlotGrant)[];
  /**
   * The Worker's slot counts right after this call, every grant included (as
   * RequestTaskSlotResponse.capacity). Unset from a Worker that predates it.
   */
  'capacity'?: (_blockx_worker_v1_WorkerCapacity | null);
}

export interface RequestTaskSlotsResponse__Output {
  /**
   * One grant per requested id, in request order (a repeated id gets the same answer each time).
   */
  'grants': (_blockx_worker_v1_SlotGrant__Output)[];
  /**
   * The Worker's slot counts right after this call, every grant included (as
   * RequestTaskSlotResponse.capacity). Unset from a Worker that predates it.
   */
  'capacity': (_blockx_worker_v1_WorkerCapacity__Output | null);
}
