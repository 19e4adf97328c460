// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/coordinator/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface WorkerStatus {
  'workerAddr'?: (string);
  /**
   * The registry prefix the Worker's winning heartbeat came from, and its format ("legacy" or "v2");
   * empty when the Coordinator cannot tell (several prefixes and no per-Worker source).
   */
  'registryPrefix'?: (string);
  'registryFormat'?: (string);
  /**
   * Slots by the last heartbeat: free = task_slots - reserved_slots - running_tasks (may be negative).
   */
  'taskSlots'?: (number);
  'reservedSlots'?: (number);
  'runningTasks'?: (number);
  'freeSlots'?: (number);
  /**
   * Fractions 0..1, as the Worker reported them.
   */
  'cpuPercent'?: (number | string);
  'memoryPercent'?: (number | string);
  'memoryAvailableBytes'?: (number | string | Long);
  'memoryTotalBytes'?: (number | string | Long);
  'processRssBytes'?: (number | string | Long);
  'errorRate'?: (number | string);
  /**
   * Heartbeat time by the Worker's clock, and its age by the Coordinator's.
   */
  'lastHeartbeatMs'?: (number | string | Long);
  'heartbeatAgeMs'?: (number | string | Long);
  /**
   * "closed", "open" (until breaker_open_until_ms) or "half-open" (cooled down; one more failure re-opens).
   */
  'breakerState'?: (string);
  'breakerOpenUntilMs'?: (number | string | Long);
  /**
   * Rejections and timeouts since the last successful reservation; the ranking penalty.
   */
  'consecutiveFailures'?: (number);
  'penalty'?: (number | string);
  /**
   * Would the next ReserveWorkerSlot consider this Worker? If not, the first hard filter it fails:
   * not_routable_code is one of NOT_READY, HEARTBEAT_TIMED_OUT, OVERLOADED, BREAKER_OPEN, NO_FREE_SLOTS,
   * and not_routable_reason says it in words.
   */
  'routable'?: (boolean);
  'notRoutableCode'?: (string);
  'notRoutableReason'?: (string);
  /**
   * The code version the Worker serves new tasks from, by its last heartbeat (docs/functions-deploy.md);
   * empty for a Worker that does not report one.
   */
  'codeVersion'?: (string);
  /**
   * Why the Worker is not on the cluster's deployed version (a refused bundle, a failed fetch); empty
   * when it is, or when it serves its local folder.
   */
  'codeVersionError'?: (string);
}

export interface WorkerStatus__Output {
  'workerAddr': (string);
  /**
   * The registry prefix the Worker's winning heartbeat came from, and its format ("legacy" or "v2");
   * empty when the Coordinator cannot tell (several prefixes and no per-Worker source).
   */
  'registryPrefix': (string);
  'registryFormat': (string);
  /**
   * Slots by the last heartbeat: free = task_slots - reserved_slots - running_tasks (may be negative).
   */
  'taskSlots': (number);
  'reservedSlots': (number);
  'runningTasks': (number);
  'freeSlots': (number);
  /**
   * Fractions 0..1, as the Worker reported them.
   */
  'cpuPercent': (number);
  'memoryPercent': (number);
  'memoryAvailableBytes': (number);
  'memoryTotalBytes': (number);
  'processRssBytes': (number);
  'errorRate': (number);
  /**
   * Heartbeat time by the Worker's clock, and its age by the Coordinator's.
   */
  'lastHeartbeatMs': (number);
  'heartbeatAgeMs': (number);
  /**
   * "closed", "open" (until breaker_open_until_ms) or "half-open" (cooled down; one more failure re-opens).
   */
  'breakerState': (string);
  'breakerOpenUntilMs': (number);
  /**
   * Rejections and timeouts since the last successful reservation; the ranking penalty.
   */
  'consecutiveFailures': (number);
  'penalty': (number);
  /**
   * Would the next ReserveWorkerSlot consider this Worker? If not, the first hard filter it fails:
   * not_routable_code is one of NOT_READY, HEARTBEAT_TIMED_OUT, OVERLOADED, BREAKER_OPEN, NO_FREE_SLOTS,
   * and not_routable_reason says it in words.
   */
  'routable': (boolean);
  'notRoutableCode': (string);
  'notRoutableReason': (string);
  /**
   * The code version the Worker serves new tasks from, by its last heartbeat (docs/functions-deploy.md);
   * empty for a Worker that does not report one.
   */
  'codeVersion': (string);
  /**
   * Why the Worker is not on the cluster's deployed version (a refused bundle, a failed fetch); empty
   * when it is, or when it serves its local folder.
   */
  'codeVersionError': (string);
}
