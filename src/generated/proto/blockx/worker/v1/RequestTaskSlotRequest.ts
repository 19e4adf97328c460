// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { Long } from '@grpc/proto-loader';

export interface RequestTaskSlotRequest {
  /**
   * The task to reserve a slot for; must not be empty.
   */
  'taskId'?: (string);
  /**
   * How long the reservation lives without a SubmitTask, in ms; must be positive.
   */
  'ttlMs'?: (number | string | Long);
}

export interface RequestTaskSlotRequest__Output {
  /**
   * The task to reserve a slot for; must not be empty.
   */
  'taskId': (string);
  /**
   * How long the reservation lives without a SubmitTask, in ms; must be positive.
   */
  'ttlMs': (number);
}
