// The ports of the executor call path (ExecutorCallRunner): the link commands it issues, its one timer,
// its options, and the IO port: how the Worker answers `ctx.io.get / getMany / scan` of a running
// function. The IO subsystem supplies the real handler (reads through the task's IO scope); until it is
// wired, `noStorageIoHandler` fails every read clearly and not retryably.

import type { WaitRequest as ExecutorWaitRequest } from '../../../executor/protocol.js';
import type { DispatcherConfig } from '../core/dispatcher/index.js';
import { NoStorageError } from '../errors.js';
import type { ExecuteCallCommand, ResumeOutcome } from './executor-link.js';
import type { ServiceLogger } from '../../../kernel/observability/service-logger.js';

/** An IO read a running function asked for (`ctx.io.get / getMany / scan`). */
export type CallIoRequest = Extract<ExecutorWaitRequest, { kind: 'io' }>;

/**
 * Serves the IO reads of a task's calls. Resolves with the value the function's `await` gets; rejects
 * with an error whose `retryable` (and optional string `code`) says how the call should treat it.
 */
export type CallIoHandler = ((taskId: string, request: CallIoRequest) => Promise<unknown>) & {
  /**
   * Present when the answers are cached for the task (the read cache is on): the executor may then keep
   * read copies (executor/read-copies.ts) and reports the hits they served, counted here per task.
   */
  readonly countCopyHits?: (taskId: string, hits: number) => void;
};

/** Until the IO subsystem is wired: every read fails, not retryably, naming the missing storage. */
export const noStorageIoHandler: CallIoHandler = (taskId, request) =>
  Promise.reject(new NoStorageError(taskId, request.op));

/** The link commands the runner issues (ExecutorLink implements them; tests pass a fake). */
export interface ExecutorLinkCommands {
  /** Whether an executor is ready now (its first heartbeat arrived and it was not lost since). */
  readonly ready: boolean;
  /** One attempt; throws CallAlreadyInFlightError when that attempt is still in flight. */
  executeCall(command: ExecuteCallCommand): void;
  /**
   * Attempts in order (one task's, as one ExecuteCalls command sends them). Never throws: an attempt
   * still in flight is refused with a retryable `executor_crash` callFailed on a microtask. Optional:
   * without it each attempt goes through `executeCall` (`executeEach`).
   */
  executeCalls?(commands: readonly ExecuteCallCommand[]): void;
  cancelCall(callId: string, attempt: number, reason?: string): void;
  resumeCall(callId: string, attempt: number, outcome: ResumeOutcome): void;
  /** The Calls phase `ioCache` ended: the executor drops its read copies of it. */
  dropIoCache(ioCache: string): void;
}

/**
 * `link.executeCalls(commands)`, or, for a link without it, each attempt through `executeCall`; an
 * attempt it refuses (still in flight) goes to `refused` with the error, and the others go on.
 */
export function executeEach(
  link: ExecutorLinkCommands,
  commands: readonly ExecuteCallCommand[],
  refused: (command: ExecuteCallCommand, err: unknown) => void,
): void {
  if (link.executeCalls !== undefined) {
    link.executeCalls(commands);
    return;
  }
  for (const command of commands) {
    try {
      link.executeCall(command);
    } catch (err) {
      refused(command, err);
    }
  }
}

/** The one OS timer the runner arms (injectable so unit tests run on virtual time). */
export interface RunnerTimers {
  set(fn: () => void, delayMs: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: RunnerTimers = {
  set: (fn, delayMs) => {
    const t = setTimeout(fn, delayMs);
    // The gRPC server and the executor socket keep the process alive; this timer must not.
    t.unref();
    return t;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface ExecutorCallRunnerOptions {
  readonly link: ExecutorLinkCommands;
  /** Dispatcher settings; `dispatcherConfigFromWorker(config.deployments[d].worker)` for a deployment. */
  readonly dispatcher?: DispatcherConfig;
  /** IO reads of running calls. Default: `noStorageIoHandler`. */
  readonly io?: CallIoHandler;
  /**
   * Let executor threads keep read copies (ExecuteCall.ioCache) when the IO handler caches answers
   * (`io.countCopyHits`). Default true; false when the executor keeps none (readCopyMaxEntries 0).
   */
  readonly readCopies?: boolean;
  /** Milliseconds on the same clock as `CallPhaseTask.deadlineMs` (epoch ms). Default Date.now. */
  readonly clock?: () => number;
  readonly timers?: RunnerTimers;
  /** Retry jitter source in [0, 1); default none (exact backoff). */
  readonly random?: () => number;
  readonly logger?: ServiceLogger;
}
