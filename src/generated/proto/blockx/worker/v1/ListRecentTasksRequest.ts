// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker_admin.proto

import type { Long } from '@grpc/proto-loader';

export interface ListRecentTasksRequest {
  /**
   * Return only tasks whose record changed after this sequence number (0: everything retained).
   * Use the previous response's `last_seq`; if `worker_instance` changed, start again from 0.
   */
  'afterSeq'?: (number | string | Long);
  /**
   * At most this many tasks (newest changes first); 0 or above the Worker's cap means the cap (256).
   */
  'limit'?: (number);
}

export interface ListRecentTasksRequest__Output {
  /**
   * Return only tasks whose record changed after this sequence number (0: everything retained).
   * Use the previous response's `last_seq`; if `worker_instance` changed, start again from 0.
   */
  'afterSeq': (number);
  /**
   * At most this many tasks (newest changes first); 0 or above the Worker's cap means the cap (256).
   */
  'limit': (number);
}
