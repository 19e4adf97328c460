// Ports of the Worker orchestrator: what it needs from the parts of the Worker that other subsystems
// supply. The orchestrator is written against these interfaces only, so each side can be replaced by a
// fake in tests and by the real implementation when it lands:
//
//   CallPhaseRunner     the Calls phase: dispatcher core + executor link (the in-process link for dev/tests)
//   CodeEpochSource     pins the Function Code View at activation (FunctionCodeView from src/executor/)
//   TaskIoScopeFactory  the task-scoped storage access of the IO subsystem
//   ExecutorReadiness   executor ready / lost, which opens and closes admissions in the core
//
// Trivial implementations for standalone use live in default-ports.ts.

import type { CallSpec, TaskIo } from '../../../../kernel/plugin-types.js';
import type { FailureCode } from '../../core/index.js';

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

/** How a Calls phase ended (success, failure code, outputs; docs/task-lifecycle.md § The three phases). */
export interface CallPhaseOutcome {
  readonly success: boolean;
  /** On failure: CALL_FAILED (fastFail), OUTPUT_BYTES_EXCEEDED, ...; CALL_FAILED when omitted. */
  readonly failureCode?: FailureCode;
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

/** Retry scopes (docs/task-lifecycle.md): which phase an IO operation belongs to decides its retry budget. */
export type IoPhase = 'builder' | 'calls' | 'result';

/**
 * A task's IO scope (docs/task-lifecycle.md § Retry scopes): created at activation, closed when the task
 * converges (pending operations are cancelled). `io(phase)` is the TaskIo of one retry scope: the Builder
 * gets `io('builder')`, the Writer Plugin `io('result')`, calls' `ctx.io` reads go through `io('calls')`.
 * All views share one task-scoped read cache. `writer` is the writer's type, for the one rule that depends on
 * it (the chain import writer may write the chain tables: docs/storage.md, "Which tables tasks may write").
 */
export interface TaskIoScope {
  io(phase: IoPhase, writer?: string): TaskIo;
  close(): Promise<void>;
}

export interface TaskIoScopeFactory {
  /** Rejects → the task fails IO_SCOPE_FAILED. */
  open(taskId: string): Promise<TaskIoScope>;
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
