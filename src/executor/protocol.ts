// The Worker ⇄ Executor protocol: every frame on the Unix domain socket is one of these messages,
// discriminated by `type`. PROTOCOL.md next to this file documents directions, fields and sequences.
// Frames are length-prefixed UTF-8 JSON (frame-codec.ts); a message is a plain JSON object.

/** Bumped on an incompatible change; the Worker refuses a Hello with another version. */
export const PROTOCOL_VERSION = 1;

/**
 * Optional frames an executor announces in its Hello (`features`); the Worker sends a frame of this list
 * only to an executor that announced it. Adding one is a compatible change: an executor that does not
 * announce it keeps getting the frames it always got.
 */
export const ExecutorFeature = {
  /** The executor takes `ExecuteCalls`: many attempts of one task in one frame (docs/executor.md). */
  ExecuteCalls: 'ExecuteCalls',
  /**
   * The executor answers an `ExecuteCalls` that asks for it (`bulkResults`) with `CallsCompleted`: the
   * successful outcomes of its attempts in bulk (docs/executor.md § Calls in bulk).
   */
  CallsCompleted: 'CallsCompleted',
  /**
   * The executor takes an ExecuteCalls entry's arguments as JSON text (`argsJson`) in place of `args`:
   * its main thread then routes the text without building the values, and the execution thread that
   * runs the call parses it (docs/executor.md § Calls in bulk).
   */
  ArgsJson: 'ArgsJson',
  /**
   * The executor takes a task's `tenant` (an opaque key of its submitter) and never runs calls of two
   * tenants on one execution unit at the same time (docs/executor.md § Tenants on threads).
   */
  Tenants: 'Tenants',
  /**
   * The executor takes page entries in ExecuteCalls (`page`): one attempt that runs many calls of the
   * function, each with its own row of arguments and block, answering one list of their values
   * (docs/executor.md § Pages).
   */
  Pages: 'Pages',
  /**
   * The executor takes ExecuteCalls frames with an attachment (src/executor/frame-codec.ts), whose entries
   * point at their arguments' JSON text in it (`argsAt: [offset, length]`) in place of `args` or
   * `argsJson`: rows read as bytes travel as the bytes the database wrote (docs/executor.md § Arguments
   * as bytes).
   */
  ArgsBytes: 'ArgsBytes',
} as const;
export type ExecutorFeature = (typeof ExecutorFeature)[keyof typeof ExecutorFeature];

/** Why a call attempt failed. `retryable` travels separately: the executor decides it per failure. */
export type CallFailureKind = 'user' | 'executor_crash' | 'deadline' | 'io' | 'load';
export const CALL_FAILURE_KINDS: readonly CallFailureKind[] = [
  'user',
  'executor_crash',
  'deadline',
  'io',
  'load',
];

/** Identity of one attempt of one call. `callId` is unique within the Worker; attempts count from 1. */
export interface CallAttemptRef {
  readonly callId: string;
  readonly attempt: number;
}

/** The block a builder attached to a call (`{chain_id, number, hash, ...}`); opaque to the executor. */
export type CallBlock = { readonly [field: string]: unknown };

/** What a running call waits for: an IO read through the Worker's task IO scope, or a subfunction call. */
export type WaitRequest =
  | { readonly kind: 'io'; readonly op: 'get'; readonly table: string; readonly key: unknown }
  | { readonly kind: 'io'; readonly op: 'getMany'; readonly table: string; readonly keys: readonly unknown[] }
  | {
      readonly kind: 'io';
      readonly op: 'scan';
      readonly table: string;
      readonly options: { readonly [option: string]: unknown };
    }
  | { readonly kind: 'subcall'; readonly function: string; readonly args: readonly unknown[] };

/** The error side of a ResumeCall: thrown into the function as an Error with these fields. */
export interface WaitError {
  readonly message: string;
  /** `io` for an IO failure, the child's kind for a failed subcall; decides the kind if it escapes. */
  readonly kind?: CallFailureKind;
  readonly retryable?: boolean;
  readonly code?: string;
}

/** One function file of an epoch snapshot, as the Worker's code view captured it. */
export interface EpochFile {
  /** Function name: the file name without its extension. */
  readonly name: string;
  /** File name inside the functions directory, e.g. `hello_world.ts`. */
  readonly fileName: string;
  /** Source text at the time the epoch was created. */
  readonly source: string;
}

// ---- Executor → Worker ----------------------------------------------------------------------------

/** First frame on a connection. The executor is not ready until its first Heartbeat. */
export interface HelloMessage {
  readonly type: 'Hello';
  readonly protocolVersion: number;
  readonly executorVersion: string;
  readonly pid: number;
  readonly threads: number;
  readonly functionsDir: string;
  /**
   * The per-spawn secret the Worker handed this executor out of band (`--secret-fd`), hex. The Worker
   * drops a connection whose first frame is not a Hello with the right secret (docs/security.md).
   */
  readonly secret?: string;
  /** Optional frames this executor takes (ExecutorFeature); absent: none. */
  readonly features?: readonly string[];
}

/** Liveness and load, every `heartbeatIntervalMs`; the first one means "ready to execute". */
export interface HeartbeatMessage {
  readonly type: 'Heartbeat';
  readonly seq: number;
  readonly pid: number;
  /** Calls accepted and not yet finished (running, waiting or queued for a thread). */
  readonly inflight: number;
  /** Of those, calls queued in the executor because every thread is at its per-thread bound. */
  readonly queued: number;
  readonly threads: number;
  readonly epochs: number;
  readonly rssBytes: number;
}

/**
 * The attempt is running on an execution thread and has been for `elapsedMs` (sent once it has stayed
 * there ~25 ms; a call that finishes or waits sooner goes straight to that frame, which implies it).
 */
export interface CallStartedMessage extends CallAttemptRef {
  readonly type: 'CallStarted';
  /** How long the call had been on its thread when this was sent. */
  readonly elapsedMs: number;
}

/** A running call waits for the Worker; it resumes on the ResumeCall with the same `requestId`. */
export interface CallWaitingMessage extends CallAttemptRef {
  readonly type: 'CallWaiting';
  readonly taskId: string;
  /** Unique among this attempt's open requests. */
  readonly requestId: number;
  readonly request: WaitRequest;
}

export interface CallCompletedMessage extends CallAttemptRef {
  readonly type: 'CallCompleted';
  /** The function's JSON-serialisable return value (`undefined` travels as absent and reads as null). */
  readonly value?: unknown;
  /** Wall time on the execution unit, from start to completion. */
  readonly durationMs: number;
  /** Reads of this attempt answered from its thread's read copies (absent: none); see ReadCopies. */
  readonly ioHits?: number;
}

/**
 * The successful terminal outcomes of attempts of one task that came in `ExecuteCalls` frames with
 * `bulkResults`, in bulk: each entry is what that attempt's CallCompleted would have said. Sent at most
 * once per task per event-loop turn (more only when the entries would not fit one frame); a failure of
 * such an attempt still travels as its own CallFailed. Only from an executor that announced
 * `ExecutorFeature.CallsCompleted`, only for attempts the Worker asked it for.
 */
export interface CallsCompletedMessage {
  readonly type: 'CallsCompleted';
  readonly taskId: string;
  readonly results: readonly CompletedResult[];
}

/** One entry of a CallsCompleted: a CallCompleted without its `type`. */
export interface CompletedResult extends CallAttemptRef {
  readonly value?: unknown;
  readonly durationMs: number;
  readonly ioHits?: number;
}

export interface CallFailedMessage extends CallAttemptRef {
  readonly type: 'CallFailed';
  readonly kind: CallFailureKind;
  readonly retryable: boolean;
  readonly message: string;
  readonly stack?: string;
  /** A stable code when the executor knows one (e.g. FUNCTION_NOT_FOUND). */
  readonly code?: string;
  readonly durationMs?: number;
  /** As in CallCompleted. */
  readonly ioHits?: number;
}

// ---- Worker → Executor ----------------------------------------------------------------------------

export interface ExecuteCallMessage extends CallAttemptRef {
  readonly type: 'ExecuteCall';
  readonly taskId: string;
  readonly function: string;
  readonly args: readonly unknown[];
  readonly block?: CallBlock | null;
  /** The task's pinned code epoch; the call runs that snapshot of the function. */
  readonly codeEpoch: string;
  /** The Worker's per-call budget; the executor uses it only for a local safety net. 0 = none. */
  readonly budgetMs: number;
  /**
   * Read copies: the id of the task's current Calls phase, set when the Worker's read cache is on.
   * Answers to this attempt's `io.get` / `io.getMany` may then be kept by its execution thread and
   * reused by the other calls of the same id there, until `DropIoCache` names it.
   */
  readonly ioCache?: string;
  /**
   * The task's tenant, to an executor that announced `ExecutorFeature.Tenants`: an opaque key of its
   * submitter identity. Calls of different tenants never share an execution unit at the same time.
   */
  readonly tenant?: string;
}

/**
 * Many attempts of one task in one frame, to an executor that announced `ExecutorFeature.ExecuteCalls`:
 * the task-level fields once, then each attempt's `callId`, `attempt` and `args`. The executor treats
 * it exactly as the ExecuteCall frames it stands for, in order (each attempt keeps its own outcome,
 * budget and cancellation); `block` is one object shared by the batch's calls.
 */
export interface ExecuteCallsMessage {
  readonly type: 'ExecuteCalls';
  readonly taskId: string;
  readonly function: string;
  readonly block?: CallBlock | null;
  readonly codeEpoch: string;
  readonly budgetMs: number;
  readonly ioCache?: string;
  /** The task's tenant (ExecuteCall.tenant), to an executor that announced `ExecutorFeature.Tenants`. */
  readonly tenant?: string;
  /**
   * The Worker takes the successful outcomes of these attempts in bulk (`CallsCompleted`); set only for
   * an executor that announced `ExecutorFeature.CallsCompleted`. Absent: one CallCompleted per attempt.
   */
  readonly bulkResults?: true;
  readonly calls: readonly BatchedCall[];
}

/**
 * The task-level fields of attempts: an ExecuteCalls frame's, once for all its entries, or those of one
 * ExecuteCall. Inside the executor the attempts of a frame share one such object (docs/executor.md §
 * Calls in bulk).
 */
export type CallTask = Omit<ExecuteCallsMessage, 'type' | 'calls'>;

/** One attempt of an ExecuteCalls frame. */
export interface BatchedCall extends CallAttemptRef {
  readonly args: readonly unknown[];
}

/**
 * An ExecuteCalls entry as an executor that announced `ExecutorFeature.ArgsJson` may get it: its
 * arguments either as values (`args`) or as the JSON text of that array (`argsJson`), exactly one.
 */
export type BatchedCallIn = CallAttemptRef &
  (
    | { readonly args: readonly unknown[] }
    | { readonly argsJson: string }
    /** Its arguments' JSON text as UTF-8: the bytes `argsAt` points at in the frame's attachment. */
    | { readonly argsBytes: Uint8Array }
  ) & {
    /** Set for a page (ExecutorFeature.Pages): the arguments are each call's argument array. */
    readonly page?: CallPageInfo;
  };

/**
 * What a page entry carries besides its arguments (docs/executor.md § Pages): the position of its first
 * call in its task's call list (its calls' ids are `<taskId>/<first + row>`), and the calls' blocks as
 * runs of equal ones, `[count, block]`, whose counts add up to the number of calls.
 */
export interface CallPageInfo {
  readonly first: number;
  readonly blocks: readonly (readonly [number, CallBlock | null])[];
}

/** Abort the attempt's `ctx.signal` now; past the hard limit its execution unit is terminated. */
export interface CancelCallMessage extends CallAttemptRef {
  readonly type: 'CancelCall';
  readonly reason?: string;
}

export type ResumeCallMessage = CallAttemptRef & {
  readonly type: 'ResumeCall';
  readonly requestId: number;
} & ({ readonly ok: true; readonly value?: unknown } | { readonly ok: false; readonly error: WaitError });

/** The sources of one epoch; sent once per connection before the first ExecuteCall that names it. */
export interface DefineEpochMessage {
  readonly type: 'DefineEpoch';
  readonly epoch: string;
  readonly functionsDir: string;
  readonly files: readonly EpochFile[];
}

/** No task uses the epoch any more: drop its sources and recycle the execution units that loaded it. */
export interface RetireEpochMessage {
  readonly type: 'RetireEpoch';
  readonly epoch: string;
}

/** The Calls phase `ioCache` ended: execution threads drop their read copies for it. */
export interface DropIoCacheMessage {
  readonly type: 'DropIoCache';
  readonly ioCache: string;
}

/** Stop: finish or abandon in-flight calls within `graceMs`, then exit 0. */
export interface ShutdownMessage {
  readonly type: 'Shutdown';
  readonly reason: string;
  readonly graceMs: number;
}

export type ExecutorToWorker =
  | HelloMessage
  | HeartbeatMessage
  | CallStartedMessage
  | CallWaitingMessage
  | CallCompletedMessage
  | CallsCompletedMessage
  | CallFailedMessage;

/** Every frame an executor may send, the optional ones included. */
export type ExecutorFrame = ExecutorToWorker;

export type WorkerToExecutor =
  | ExecuteCallMessage
  | ExecuteCallsMessage
  | CancelCallMessage
  | ResumeCallMessage
  | DefineEpochMessage
  | RetireEpochMessage
  | DropIoCacheMessage
  | ShutdownMessage;

export type ProtocolMessage = ExecutorFrame | WorkerToExecutor;

/** The map key of one attempt, used on both sides. */
export function attemptKey(callId: string, attempt: number): string {
  return `${callId}#${attempt}`;
}
