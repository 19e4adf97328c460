// Plain domain shapes that the wire types convert to and from (src/grpc/convert.ts).
// The core's TaskState is the proto enum number (TaskState.RUNNING === 2); this one is the name, which
// reads better in clients and logs; the converters accept both.
// JSON payloads (`config`, `result`) are decoded values here, never bytes.

/** Task lifecycle state without the wire's `TASK_STATE_` prefix. */
export type TaskState = 'UNSPECIFIED' | 'ALLOCATED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';

// The task input and plugin shapes are the contracts' (one definition, shared with the worker core);
// ExecuteResult differs from the core's only in that a failure code decoded from the wire is any string,
// not the core's closed set.
export type { PluginConfig, PluginResult, TaskInput } from '../contracts/task.js';
import type { PluginResult } from '../contracts/task.js';

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
