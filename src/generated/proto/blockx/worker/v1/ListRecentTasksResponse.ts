// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker_admin.proto

import type { RecentTask as _blockx_worker_v1_RecentTask, RecentTask__Output as _blockx_worker_v1_RecentTask__Output } from '../../../blockx/worker/v1/RecentTask.js';
import type { Long } from '@grpc/proto-loader';

export interface ListRecentTasksResponse {
  /**
   * Changed tasks, newest change first.
   */
  'tasks'?: (_blockx_worker_v1_RecentTask)[];
  /**
   * The highest sequence number the Worker has assigned (the next call's `after_seq`).
   */
  'lastSeq'?: (number | string | Long);
  /**
   * Tasks that ended SUCCEEDED / FAILED since this Worker process started (monotonic).
   */
  'succeededTotal'?: (number | string | Long);
  'failedTotal'?: (number | string | Long);
  /**
   * A random id of this Worker process: a new value means the counters and sequence restarted.
   */
  'workerInstance'?: (string);
  /**
   * The Worker's clock when it answered (UTC ms).
   */
  'nowMs'?: (number | string | Long);
  /**
   * Changes after `after_seq` are missing from this answer: records changed after a non-zero
   * `after_seq` were dropped from the ring, or `limit` was reached. The caller should read from 0.
   * (A read from 0 asks for what is retained; only `limit` truncates it.)
   */
  'truncated'?: (boolean);
}

export interface ListRecentTasksResponse__Output {
  /**
   * Changed tasks, newest change first.
   */
  'tasks': (_blockx_worker_v1_RecentTask__Output)[];
  /**
   * The highest sequence number the Worker has assigned (the next call's `after_seq`).
   */
  'lastSeq': (number);
  /**
   * Tasks that ended SUCCEEDED / FAILED since this Worker process started (monotonic).
   */
  'succeededTotal': (number);
  'failedTotal': (number);
  /**
   * A random id of this Worker process: a new value means the counters and sequence restarted.
   */
  'workerInstance': (string);
  /**
   * The Worker's clock when it answered (UTC ms).
   */
  'nowMs': (number);
  /**
   * Changes after `after_seq` are missing from this answer: records changed after a non-zero
   * `after_seq` were dropped from the ring, or `limit` was reached. The caller should read from 0.
   * (A read from 0 asks for what is retained; only `limit` truncates it.)
   */
  'truncated': (boolean);
}
