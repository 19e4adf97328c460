// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker_admin.proto

import type { Long } from '@grpc/proto-loader';

/**
 * One task as the Worker last recorded it.
 */
export interface RecentTask {
  'taskId'?: (string);
  /**
   * "RUNNING", "SUCCEEDED" or "FAILED".
   */
  'state'?: (string);
  /**
   * When the task was admitted (UTC ms, the Worker's clock).
   */
  'startedAtMs'?: (number | string | Long);
  /**
   * When it ended (UTC ms), 0 while it runs.
   */
  'endedAtMs'?: (number | string | Long);
  /**
   * The builder plugin type (e.g. "CallListCallConfig").
   */
  'builder'?: (string);
  /**
   * Empty on success.
   */
  'failureCode'?: (string);
  /**
   * Empty on success; at most 512 characters (cut with an ellipsis).
   */
  'failureMessage'?: (string);
  /**
   * The code version the task ran; empty when unknown.
   */
  'codeVersion'?: (string);
  /**
   * The sequence number of this record's last change.
   */
  'seq'?: (number | string | Long);
  /**
   * Who submitted the task (the caller's identity, docs/security.md § Roles); sent only to a caller that
   * may see every client's tasks (the Coordinator's dashboard feed, a viewer, an admin), empty otherwise
   * and when unknown.
   */
  'client'?: (string);
}

/**
 * One task as the Worker last recorded it.
 */
export interface RecentTask__Output {
  'taskId': (string);
  /**
   * "RUNNING", "SUCCEEDED" or "FAILED".
   */
  'state': (string);
  /**
   * When the task was admitted (UTC ms, the Worker's clock).
   */
  'startedAtMs': (number);
  /**
   * When it ended (UTC ms), 0 while it runs.
   */
  'endedAtMs': (number);
  /**
   * The builder plugin type (e.g. "CallListCallConfig").
   */
  'builder': (string);
  /**
   * Empty on success.
   */
  'failureCode': (string);
  /**
   * Empty on success; at most 512 characters (cut with an ellipsis).
   */
  'failureMessage': (string);
  /**
   * The code version the task ran; empty when unknown.
   */
  'codeVersion': (string);
  /**
   * The sequence number of this record's last change.
   */
  'seq': (number);
  /**
   * Who submitted the task (the caller's identity, docs/security.md § Roles); sent only to a caller that
   * may see every client's tasks (the Coordinator's dashboard feed, a viewer, an admin), empty otherwise
   * and when unknown.
   */
  'client': (string);
}
