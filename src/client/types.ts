// The shapes the TypeScript client takes and returns.
import type { ChannelOptions } from '@grpc/grpc-js';
import type { GetClusterStatusResponse__Output } from '../generated/proto/blockx/coordinator/v1/GetClusterStatusResponse.js';
import type { ClusterStatusView } from '../contracts/cluster-status.js';
import type { TerminalTaskState } from '../contracts/task.js';
import type { TlsPem } from '../kernel/tls-files.js';
import type { PluginConfig, PluginResult, TaskResult, TaskState, TaskUpdate } from '../grpc/domain-types.js';

export interface BlockxClientOptions {
  /** Coordinator address (`host:port`): reserve → submit → watch. */
  readonly coordinator?: string;
  /** Worker address for direct-to-worker mode: SubmitTask without a slot id (the Worker reserves inline). */
  readonly worker?: string;
  /** The Coordinator's slot TTL: how long to wait after Aborted (SlotUncertain). Default 5000. */
  readonly slotTtlMs?: number;
  /** Deadline of each unary RPC. Default 10000. */
  readonly rpcTimeoutMs?: number;
  /** Reserve/submit calls per task before giving up. Default 20. */
  readonly maxReserveAttempts?: number;
  /** Backoff after no-capacity answers and repeated Unavailable. Default {initialMs: 50, maxMs: 2000}. */
  readonly backoff?: { readonly initialMs?: number; readonly maxMs?: number };
  /** WatchTasks streams opened per task when the stream breaks (Unavailable). Default 5. */
  readonly maxWatchAttempts?: number;
  /**
   * 'auto' (default): concurrent run() calls, runMany and backfill use the batched protocol
   * (docs/batched-protocol.md); 'off': every task takes the unary RPCs.
   */
  readonly batching?: 'auto' | 'off';
  /**
   * Batched path through a Coordinator: after a task SUCCEEDED, the next waiting task goes straight to
   * the same Worker (its slot reserved inline, as SubmitTask without a slot id does), at most this many
   * times in a row before a task reserves through the Coordinator again (docs/batched-protocol.md § Slot
   * reuse). 0 (the default, CLIENT_DEFAULTS.reuseSlots): every task reserves through the Coordinator.
   * `blockx submit` and `blockx backfill` use CLI_REUSE_SLOTS.
   */
  readonly reuseSlots?: number;
  /** Extra gRPC channel options. */
  readonly channelOptions?: ChannelOptions;
  /**
   * Mutual TLS to the cluster (PEM contents): the cluster CA, and this client's certificate (signed by
   * that CA) and key. Omitted: plaintext. `readTlsFiles({ ca, cert, key })` reads them from files. docs/security.md
   * § TLS and authentication.
   */
  readonly tls?: TlsPem;
  /** Injected for tests: waits `ms` (resolving early when `signal` aborts). */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injected for tests: uniform in [0, 1), for backoff jitter. */
  readonly random?: () => number;
  /** Injected for tests: UTC ms. */
  readonly clock?: () => number;
}

/** A task as the client accepts it: the task id and timeout are optional. */
export interface ClientTaskInput {
  /** Default: a fresh crypto.randomUUID(). Reuse an id only to resubmit the same task (idempotency key). */
  readonly taskId?: string;
  readonly functionCallConfig: PluginConfig;
  readonly resultHandler?: PluginConfig | null;
  /** 0 or absent: the Worker's default. */
  readonly taskTimeoutMs?: number;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface WorkerCallOptions extends CallOptions {
  /** The Worker to ask; default the `worker` of the client options. */
  readonly workerAddr?: string;
}

/** The answer of submit(): the task is on `workerAddr` in `state` (RUNNING, or terminal if known). */
export interface SubmitOutcome {
  readonly taskId: string;
  readonly workerAddr: string;
  readonly state: TaskState;
  /** Present when the Worker already had a terminal result for this task id. */
  readonly result?: TaskResult;
  /** Reserve and submit calls it took. */
  readonly attempts: number;
}

/** A terminal task. A FAILED task is a result (success=false), not an exception. */
export interface TaskRunResult {
  readonly taskId: string;
  readonly workerAddr: string;
  readonly state: TerminalTaskState;
  readonly success: boolean;
  /** '' when it succeeded. */
  readonly failureCode: string;
  readonly failureMessage: string;
  /** Whether resubmitting the task may help (the client decides on task-level retries; docs/retries.md). */
  readonly retryable: boolean;
  readonly pluginResults: readonly PluginResult[];
  /**
   * The code version the task ran on (docs/functions-deploy.md): the content hash of the function files
   * its Worker pinned. '' (or absent, in results built by hand) when the Worker reported none (an older
   * Worker, or no activation).
   */
  readonly codeVersion?: string;
  /** The terminal update as the Worker sent it. */
  readonly update: TaskUpdate;
  /** Reserve and submit calls it took. */
  readonly attempts: number;
  /** From the first reserve to the terminal update. */
  readonly durationMs: number;
}

/** GetTaskResult: the state, and the result once terminal. */
export interface TaskStatusView {
  readonly taskId: string;
  readonly state: TaskState;
  readonly result?: TaskResult;
}

// The cluster status view is a shared contract (src/contracts/cluster-status.ts): the Coordinator builds
// it, the client returns it. Named here too, so client users import every shape from one module.
export type {
  ClusterStatusView,
  CoordinatorLimitsView,
  WorkerStatusView,
} from '../contracts/cluster-status.js';

// The wire type must fit the view: a proto change that drops or retypes a field fails type-checking here.
type Fits<T extends ClusterStatusView> = T;
type _WireCheck = Fits<GetClusterStatusResponse__Output>;
