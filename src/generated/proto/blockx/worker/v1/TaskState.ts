// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.
// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.
// Original file: proto/blockx/worker/v1/worker.proto

/**
 * Lifecycle of a task as seen by a caller. TIMED_OUT etc. are failure codes under FAILED.
 */
export const TaskState = {
  /**
   * Unknown or not set.
   */
  TASK_STATE_UNSPECIFIED: 'TASK_STATE_UNSPECIFIED',
  /**
   * A slot is reserved for the task; it has not started.
   */
  TASK_STATE_ALLOCATED: 'TASK_STATE_ALLOCATED',
  /**
   * The task was admitted and is running its phases (builder, calls, plugin).
   */
  TASK_STATE_RUNNING: 'TASK_STATE_RUNNING',
  /**
   * Terminal: the task finished successfully.
   */
  TASK_STATE_SUCCEEDED: 'TASK_STATE_SUCCEEDED',
  /**
   * Terminal: the task failed; see TaskResult.execute_result.failure_code.
   */
  TASK_STATE_FAILED: 'TASK_STATE_FAILED',
} as const;

/**
 * Lifecycle of a task as seen by a caller. TIMED_OUT etc. are failure codes under FAILED.
 */
export type TaskState =
  /**
   * Unknown or not set.
   */
  | 'TASK_STATE_UNSPECIFIED'
  | 0
  /**
   * A slot is reserved for the task; it has not started.
   */
  | 'TASK_STATE_ALLOCATED'
  | 1
  /**
   * The task was admitted and is running its phases (builder, calls, plugin).
   */
  | 'TASK_STATE_RUNNING'
  | 2
  /**
   * Terminal: the task finished successfully.
   */
  | 'TASK_STATE_SUCCEEDED'
  | 3
  /**
   * Terminal: the task failed; see TaskResult.execute_result.failure_code.
   */
  | 'TASK_STATE_FAILED'
  | 4

/**
 * Lifecycle of a task as seen by a caller. TIMED_OUT etc. are failure codes under FAILED.
 */
export type TaskState__Output = typeof TaskState[keyof typeof TaskState]
