// Ports of the Worker orchestrator: what it needs from the parts of the Worker that other subsystems
// supply. The orchestrator is written against interfaces only, so each side can be replaced by a fake in
// tests and by the real implementation when it lands:
//
//   TaskIoScopeFactory  the task-scoped storage access of the IO subsystem (here)
//   CallPhaseRunner, CodeEpochSource, ExecutorReadiness
//                       the call host's, declared by the call host and imported from its index
//                       (src/services/call-host/ports.ts): the dependency runs Worker → call host
//
// Trivial implementations for standalone use live in default-ports.ts.

import type { TaskIo } from '../../../../kernel/plugin-types.js';

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
