// The task vocabulary every room shares (docs/task-lifecycle.md): a task's state, what a client submits,
// and one Writer Plugin's outcome as the writer reports it and inside a task's result — the shapes of `TaskState`, `TaskInput`,
// `PluginConfig` and `PluginResult` in `proto/blockx/worker/v1/worker.proto` as plain values. The Worker
// core, the gRPC converters, the client, the dashboard and the public subpaths (`blockx`,
// `blockx/client`) all name these, defined here once, below every layer (docs/architecture.md § Code
// layout). A state is its name ('RUNNING') and JSON payloads are decoded values; the proto enum numbers
// and bytes live only in the converters (src/grpc/convert.ts). Pure data: no IO.

/**
 * The externally visible state of a task: the proto enum `TaskState` without its `TASK_STATE_` prefix.
 * A Worker answers UNSPECIFIED for a task it does not know; ALLOCATED holds a reserved slot; every
 * internal phase of a submitted task reads as RUNNING; SUCCEEDED and FAILED are terminal.
 */
export const TaskState = {
  UNSPECIFIED: 'UNSPECIFIED',
  ALLOCATED: 'ALLOCATED',
  RUNNING: 'RUNNING',
  SUCCEEDED: 'SUCCEEDED',
  FAILED: 'FAILED',
} as const;
export type TaskState = (typeof TaskState)[keyof typeof TaskState];
export type TerminalTaskState = typeof TaskState.SUCCEEDED | typeof TaskState.FAILED;

/** True for the two terminal states. */
export function isTerminalState(state: TaskState): state is TerminalTaskState {
  return state === TaskState.SUCCEEDED || state === TaskState.FAILED;
}

/** `{type, config}` of a Call Builder or Writer Plugin. `config` is parsed JSON, opaque to BlockX. */
export interface PluginConfig {
  readonly type: string;
  readonly config: unknown;
}

/** What a client submits (proto `TaskInput`), with the `config` bytes decoded as JSON. */
export interface TaskInput {
  /** Client-generated, stable, unique; the idempotency key. */
  readonly taskId: string;
  /** Selects the Call Builder by `type`. */
  readonly functionCallConfig: PluginConfig;
  /** Optional Writer Plugin; `null`, `undefined` or an empty `type` all mean "none". */
  readonly resultHandler?: PluginConfig | null;
  /** 0 = the worker default (`taskDeadlineMs`); negative or above `maxTaskTimeoutMs` is rejected. */
  readonly taskTimeoutMs: number;
}

/**
 * What a Writer Plugin reports, one entry per logical write (usually one): the plugin result with its
 * failure fields optional (`blockx/plugin`). The Worker turns each into the task result's `PluginResult`
 * below, filling absent failure fields with ''.
 */
export interface WriterResult {
  readonly pluginName: string;
  readonly success: boolean;
  readonly failureCode?: string;
  /**
   * A JSON value, sent as UTF-8 JSON bytes on the wire (ReturnValueResultHandler puts the array of call
   * outputs here).
   */
  readonly result?: unknown;
  readonly failureMessage?: string;
}

/**
 * The outcome of one Writer Plugin as a task's result carries it (proto `PluginResult`): a
 * `WriterResult` with every field present, the failure fields empty on success (`blockx/client`).
 * `blockx/plugin` and `blockx` still export the name `PluginResult` for `WriterResult`, as a deprecated
 * alias kept for writers written before the two were told apart (docs/plugins.md).
 */
export interface PluginResult extends WriterResult {
  /** Empty when `success`. */
  readonly failureCode: string;
  /** Empty when `success`. Not sent on the wire by the original Go worker; we keep it (proto field 5). */
  readonly failureMessage: string;
}
