// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

import type { TaskState as _blockx_worker_v1_TaskState, TaskState__Output as _blockx_worker_v1_TaskState__Output } from '../../../blockx/worker/v1/TaskState.js';
import type { TaskResult as _blockx_worker_v1_TaskResult, TaskResult__Output as _blockx_worker_v1_TaskResult__Output } from '../../../blockx/worker/v1/TaskResult.js';
import type { Long } from '@grpc/proto-loader';

/**
 * One state change of a task, pushed on a WatchTasks stream.
 */
export interface TaskUpdate {
  /**
   * The task this update is about.
   */
  'taskId'?: (string);
  /**
   * The task's state at timestamp_ms.
   */
  'state'?: (_blockx_worker_v1_TaskState);
  /**
   * True when no further update will follow for this task.
   */
  'isTerminal'?: (boolean);
  /**
   * The advertised address of the Worker that owns the task.
   */
  'workerAddr'?: (string);
  /**
   * Worker wall-clock time of the update, ms since the Unix epoch.
   */
  'timestampMs'?: (number | string | Long);
  /**
   * The result when the update is terminal and the task ran; unset otherwise.
   */
  'result'?: (_blockx_worker_v1_TaskResult | null);
  /**
   * Non-empty when the task cannot be followed, e.g. "not_found".
   */
  'error'?: (string);
}

/**
 * One state change of a task, pushed on a WatchTasks stream.
 */
export interface TaskUpdate__Output {
  /**
   * The task this update is about.
   */
  'taskId': (string);
  /**
   * The task's state at timestamp_ms.
   */
  'state': (_blockx_worker_v1_TaskState__Output);
  /**
   * True when no further update will follow for this task.
   */
  'isTerminal': (boolean);
  /**
   * The advertised address of the Worker that owns the task.
   */
  'workerAddr': (string);
  /**
   * Worker wall-clock time of the update, ms since the Unix epoch.
   */
  'timestampMs': (number);
  /**
   * The result when the update is terminal and the task ran; unset otherwise.
   */
  'result': (_blockx_worker_v1_TaskResult__Output | null);
  /**
   * Non-empty when the task cannot be followed, e.g. "not_found".
   */
  'error': (string);
}
