// The ports the call host implements for the Worker (docs/task-lifecycle.md § The three phases): the
// Worker's orchestrator is written against these interfaces and imports them from the call host's index,
// so the dependency runs one way, Worker → call host. Each side can be replaced by a fake in tests:
//
//   CallPhaseRunner     the Calls phase of a task: dispatcher core + executor links (adapters/), or the
//                       in-process link for development and tests
//   CodeEpochSource     pins the Function Code View at activation (FunctionCodeView from src/executor/)
//   ExecutorReadiness   executor ready / lost, which opens and closes the Worker's admissions
//
// With them, two small implementations both sides use: ManualExecutorReadiness (readiness pushed by hand:
// tests, the in-process link, ready at once) and codeEpochsFromView (the real CodeEpochSource over a
// Function Code View).

import { parseAnyFunctionFileName } from '../../executor/core/functions-inventory.js';
import type { CallSpec } from '../../kernel/plugin-types.js';
import type { CallPhaseFailureCode } from './core/dispatcher/index.js';

/** The task a Calls phase runs for. */
export interface CallPhaseTask {
  readonly taskId: string;
  /** The code epoch pinned at activation: every call of the task runs this version of the functions. */
  readonly codeEpoch: string;
  /** Absolute deadline of the task (epoch ms). The task times out in the core; calls past it are waste. */
  readonly deadlineMs: number;
  /** Aborted when the task converges early (timeout, watch disconnect, shutdown): stop every call. */
  readonly signal: AbortSignal;
  /**
   * The submitter, when known: calls of different submitters never share an execution thread or
   * process at the same time (docs/security.md § Task isolation). Absent: one tenant for all such tasks.
   */
  readonly client?: string;
}

/**
 * The failure codes a Calls phase ends with: the dispatcher's, and BUILDER_FAILED when a streaming
 * builder's source fails mid-phase. Each is one of the Worker's task failure codes (the Worker core's
 * `FailureCode`), which the Worker reports as the task's.
 */
export type CallPhaseOutcomeFailureCode = CallPhaseFailureCode | 'BUILDER_FAILED';

/** How a Calls phase ended (success, failure code, outputs; docs/task-lifecycle.md § The three phases). */
export interface CallPhaseOutcome {
  readonly success: boolean;
  /** On failure: CALL_FAILED (fastFail), OUTPUT_BYTES_EXCEEDED, ...; CALL_FAILED when omitted. */
  readonly failureCode?: CallPhaseOutcomeFailureCode;
  readonly retryable: boolean;
  readonly message?: string;
  /** Return values of the successful root calls, in call-list order; empty on failure. */
  readonly outputs: readonly unknown[];
}

/** Runs all calls of one task (fully parallel, bounded by its own in-flight cap) and reports once. */
export interface CallPhaseRunner {
  run(task: CallPhaseTask, calls: readonly CallSpec[]): Promise<CallPhaseOutcome>;
  /**
   * The Calls phase of a streaming builder: calls are dispatched while `calls` still produces them, in
   * bounded memory. A failing source ends the phase BUILDER_FAILED. Runners without it get the stream
   * collected into a list first (fine for tests and dev, not for million-row scans).
   */
  runStream?(task: CallPhaseTask, calls: AsyncIterable<CallSpec>): Promise<CallPhaseOutcome>;
}

/** A pinned code epoch; `release()` is called exactly once, when the task converges. */
export interface CodeEpochPin {
  readonly epoch: string;
  release(): void;
}

export interface CodeEpochSource {
  /** Resolves the current epoch and pins it in one step. Rejects → the task fails ACTIVATION_FAILED. */
  pin(): Promise<CodeEpochPin>;
  /**
   * The code version new tasks get now, and why it is not the cluster's deployed one (heartbeat fields
   * codeVersion / codeVersionError, docs/functions-deploy.md). No IO. Optional: sources without it
   * report no code version.
   */
  codeVersion?(): { readonly version?: string; readonly error?: string };
  /**
   * The function names of the current epoch, every language (WorkerAdminService.DescribeServing, for
   * `blockx validate --coordinator`). Optional: sources without it say nothing about their functions.
   */
  functionNames?(): Promise<readonly string[]>;
}

/** What the executor side reports about its readiness (Unavailable until its first heartbeat). */
export type ExecutorReadinessEvent =
  { readonly type: 'ready' } | { readonly type: 'lost'; readonly reason: string };

export interface ExecutorReadiness {
  /**
   * Subscribes to readiness changes; returns the unsubscribe function. An implementation that is already
   * ready reports `ready` to a new listener (asynchronously or during the call; both are fine).
   */
  subscribe(listener: (event: ExecutorReadinessEvent) => void): () => void;
}

/** Readiness pushed by hand; a new listener hears the last state at once. */
export class ManualExecutorReadiness implements ExecutorReadiness {
  private readonly listeners = new Set<(event: ExecutorReadinessEvent) => void>();
  private last: ExecutorReadinessEvent | undefined;

  constructor(initiallyReady = false) {
    if (initiallyReady) this.last = { type: 'ready' };
  }

  subscribe(listener: (event: ExecutorReadinessEvent) => void): () => void {
    this.listeners.add(listener);
    if (this.last !== undefined) listener(this.last);
    return () => this.listeners.delete(listener);
  }

  markReady(): void {
    this.emit({ type: 'ready' });
  }

  markLost(reason: string): void {
    this.emit({ type: 'lost', reason });
  }

  private emit(event: ExecutorReadinessEvent): void {
    this.last = event;
    for (const listener of [...this.listeners]) listener(event);
  }
}

/** What codeEpochsFromView needs of a Function Code View (src/executor/code-epochs.ts FunctionCodeView). */
export interface PinnableCodeView {
  /** Resolves the current epoch and pins it in one step. */
  pinCurrent(): Promise<string>;
  unpin(epoch: string): void;
  /** The files of a pinned epoch (gives the source its functionNames). */
  snapshot?(epoch: string): { readonly files: readonly { readonly fileName: string }[] } | undefined;
}

/** A CodeEpochSource over a Function Code View: pin at activation, unpin exactly once on convergence. */
export function codeEpochsFromView(view: PinnableCodeView): CodeEpochSource {
  const snapshot = view.snapshot?.bind(view);
  return {
    ...(snapshot === undefined
      ? {}
      : {
          async functionNames(): Promise<readonly string[]> {
            const epoch = await view.pinCurrent();
            try {
              const names = (snapshot(epoch)?.files ?? []).flatMap(
                (f) => parseAnyFunctionFileName(f.fileName)?.name ?? [],
              );
              return [...new Set(names)].sort();
            } finally {
              view.unpin(epoch);
            }
          },
        }),
    async pin(): Promise<CodeEpochPin> {
      const epoch = await view.pinCurrent();
      let released = false;
      return {
        epoch,
        release: () => {
          if (released) return;
          released = true;
          view.unpin(epoch);
        },
      };
    },
  };
}
