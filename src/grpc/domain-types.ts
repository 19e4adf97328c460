// Plain domain shapes that the wire types convert to and from (src/grpc/convert.ts).
// They follow the worker core's types (src/services/worker/core/types.ts): readonly fields, and a
// `resultHandler` that may be absent or null, so the core's values can be passed to the *ToWire
// converters as they are. One difference remains: the core's TaskState is the proto enum number
// (TaskState.RUNNING === 2), this one is the name; the converters accept both.
// JSON payloads (`config`, `result`) are decoded values here, never bytes.

/** Task lifecycle state without the wire's `TASK_STATE_` prefix. */
export type TaskState = 'UNSPECIFIED' | 'ALLOCATED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';

/** A plugin selector and its decoded JSON config. */
export interface PluginConfig {
  readonly type: string;
  readonly config: unknown;
}

export interface TaskInput {
  readonly taskId: string;
  readonly functionCallConfig: PluginConfig;
  /** No Writer Plugin: absent (as decoded from an empty `type` on the wire) or null. */
  readonly resultHandler?: PluginConfig | null;
  /** 0 means "use the Worker default". */
  readonly taskTimeoutMs: number;
}

export interface PluginResult {
  readonly pluginName: string;
  readonly success: boolean;
  readonly failureCode: string;
  /** Decoded JSON output; absent when the plugin sent none (empty bytes on the wire). */
  readonly result?: unknown;
  readonly failureMessage: string;
}

export interface ExecuteResult {
  readonly failureCode: string;
  readonly retryable: boolean;
  readonly pluginResults: readonly PluginResult[];
  readonly failureMessage: string;
}

export interface TaskResult {
  readonly success: boolean;
  readonly executeResult: ExecuteResult;
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
