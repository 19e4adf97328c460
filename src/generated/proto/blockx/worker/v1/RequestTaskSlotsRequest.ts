// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

export interface RequestTaskSlotsRequest {
  /**
   * Tasks to reserve slots for (each as RequestTaskSlot's task_id); 1 to 10,000 ids.
   */
  'taskIds'?: (string)[];
  /**
   * How long each reservation lives without a submission, in ms (as RequestTaskSlot's ttl_ms).
   */
  'ttlMs'?: (number | string | Long);
}

export interface RequestTaskSlotsRequest__Output {
  /**
   * Tasks to reserve slots for (each as RequestTaskSlot's task_id); 1 to 10,000 ids.
   */
  'taskIds': (string)[];
  /**
   * How long each reservation lives without a submission, in ms (as RequestTaskSlot's ttl_ms).
   */
  'ttlMs': (number);
}
