// The task input a client submits and the outcome of one Writer Plugin, in plain TypeScript values: the
// shapes of `TaskInput`, `PluginConfig` and `PluginResult` in `proto/blockx/worker/v1/worker.proto` after
// the gRPC adapters decoded their JSON bytes. The Worker core works on them and the gRPC layer and the
// client convert to and from them, so they live here, below both (docs/architecture.md § Code layout).

/** `{type, config}` of a Call Builder or Writer Plugin. `config` is parsed JSON, opaque to the core. */
export interface PluginConfig {
  readonly type: string;
  readonly config: unknown;
}

/** What a client submits (proto `TaskInput`), after the adapter decoded `config` bytes as JSON. */
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

/** The outcome of one Writer Plugin (proto `PluginResult`). */
export interface PluginResult {
  readonly pluginName: string;
  readonly success: boolean;
  /** Empty when `success`. */
  readonly failureCode: string;
  /** A JSON value (ReturnValueResultHandler puts the array of call outputs here). */
  readonly result?: unknown;
  /** Empty when `success`. Not sent on the wire by the original Go worker; we keep it (proto field 5). */
  readonly failureMessage: string;
}
