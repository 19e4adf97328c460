// Plain domain shapes that the wire types convert to and from (src/grpc/convert.ts).
// JSON payloads (`config`, `result`) are decoded values here, never bytes.

// The task vocabulary is the one of src/contracts/task.ts; ExecuteResult differs from the worker core's
// only in that a failure code decoded from the wire is any string, not the core's closed set.
export type { PluginConfig, PluginResult, TaskInput, TaskState } from '../contracts/task.js';
import type { PluginResult, TaskState } from '../contracts/task.js';

export interface ExecuteResult {
  readonly failureCode: string;
  readonly retryable: boolean;
  readonly pluginResults: readonly PluginResult[];
  readonly failureMessage: string;
}

export interface TaskResult {
  readonly success: boolean;
  readonly executeResult: ExecuteResult;
  /** The code version the task ran on (docs/functions-deploy.md); absent when the Worker sent none. */
  readonly codeVersion?: string;
}

/** One WatchTasks update in domain form. */
export interface TaskUpdate {
  readonly taskId: string;
  readonly state: TaskState;
  readonly isTerminal: boolean;
  readonly workerAddr: string;
  readonly timestampMs: number;
  /** Present when the update is terminal and the task ran. */
  readonly result?: TaskResult;
  /** Non-empty when the task cannot be followed, e.g. 'not_found'. */
  readonly error: string;
}
