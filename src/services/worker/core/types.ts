// Domain types of the Worker core: the shared task vocabulary (src/contracts/task.ts), internal phases
// and the terminal result. These mirror `proto/blockx/worker/v1/worker.proto` in plain
// TypeScript values; the gRPC adapter converts bytes/int64 to and from these shapes.

import type { FailureCode } from './errors.js';

// The shared task vocabulary (docs/task-lifecycle.md) is defined once in src/contracts/task.ts.
export {
  TaskState,
  isTerminalState,
  type PluginConfig,
  type PluginResult,
  type TaskInput,
  type TerminalTaskState,
} from '../../../contracts/task.js';
import type { PluginResult } from '../../../contracts/task.js';

/**
 * Internal phase of a submitted task. Every phase but `Terminal` is shown to clients as RUNNING.
 * `Preparing`: accepted, waiting for activation (code epoch pinned, IO scope created).
 * `Builder` → `Calls` → `Plugin`: the three execution phases. `Terminal`: converged, result retained.
 */
export const TaskPhase = {
  Preparing: 'Preparing',
  Builder: 'Builder',
  Calls: 'Calls',
  Plugin: 'Plugin',
  Terminal: 'Terminal',
} as const;
export type TaskPhase = (typeof TaskPhase)[keyof typeof TaskPhase];
/** A phase in which a task still holds its slot. */
export type ActivePhase = Exclude<TaskPhase, 'Terminal'>;
/** A phase whose work runs in the adapter and finishes with `handleTaskPhaseFinished`. */
export type ExecutionPhase = typeof TaskPhase.Builder | typeof TaskPhase.Calls | typeof TaskPhase.Plugin;

/** Task-level result detail (proto `ExecuteResult`). */
export interface ExecuteResult {
  /** Empty string when the task succeeded. */
  readonly failureCode: FailureCode | '';
  /** Whether resubmitting the task may succeed; decided per failure code (see errors.ts). */
  readonly retryable: boolean;
  readonly pluginResults: readonly PluginResult[];
  /** Empty string when the task succeeded. */
  readonly failureMessage: string;
}

/** The terminal result of a task (proto `TaskResult`). The state is carried next to it, not inferred. */
export interface TaskResult {
  readonly success: boolean;
  readonly executeResult: ExecuteResult;
  /**
   * The code version the task ran on: its pinned code epoch (docs/functions-deploy.md). Set by
   * convergence; absent (empty on the wire) when the task ended before activation pinned one.
   */
  readonly codeVersion?: string;
}

/** The function code version pinned at activation; opaque to the core. */
export type CodeEpoch = string | number;
