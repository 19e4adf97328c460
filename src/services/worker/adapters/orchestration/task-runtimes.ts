// The orchestrator's per-task runtime table: from PrepareTaskActivation to ConvergeTask each active task
// has a TaskRuntime (its context's AbortController, its pinned code epoch, its IO scope). Disposing of a
// runtime on convergence aborts the context of a FAILED task (cancelling calls still in flight and
// phases waiting for admission), releases the epoch pin and closes the IO scope in the background;
// `settled()` waits for those closes.

import type { CallSpec } from '../../../../kernel/plugin-types.js';
import type { PluginRegistry } from '../../../../kernel/plugin-registry.js';
import type { PrepareTaskActivation } from '../../core/index.js';
import { describeError } from '../../../../kernel/errors.js';
import type { CodeEpochPin } from '../../../call-host/index.js';
import type { TaskIoScope } from './ports.js';
import type { ServiceLogger } from '../../../../kernel/observability/service-logger.js';

/** What the orchestrator keeps per active task, from PrepareTaskActivation to ConvergeTask. */
export interface TaskRuntime {
  readonly taskId: string;
  readonly deadlineMs: number;
  readonly acceptedAtMs: number;
  /** The submitter, when known (docs/security.md § Roles): its calls' tenant (CallPhaseTask.client). */
  readonly client: string | undefined;
  /** The task's context: aborted on convergence (or CancelTaskCalls, or shutdown). */
  readonly controller: AbortController;
  /**
   * The plugin tables when the task started running: its phases read these, so a task never mixes two
   * loads of a process whose plugins are loaded again (docs/plugins.md § Loading plugins again).
   */
  readonly plugins: Pick<PluginRegistry, 'builders' | 'writers'>;
  epoch: CodeEpochPin | undefined;
  io: TaskIoScope | undefined;
  /** A streaming builder's calls, opened in the Calls phase under scanSem (set by the Builder phase). */
  callStream: (() => AsyncIterable<CallSpec>) | undefined;
  /**
   * Set when the task's Builder phase ran fused with others (./phase-fusion.ts): the key under which its
   * Calls phase may fuse with theirs. Undefined: its calls run alone.
   */
  fusedCallsKey: string | undefined;
  /** Set by ConvergeTask; a continuation that finds it set disposes of what it acquired. */
  converged: boolean;
}

export class TaskRuntimes {
  private readonly byTask = new Map<string, TaskRuntime>();
  private readonly pendingCleanups = new Set<Promise<void>>();

  constructor(private readonly logger: ServiceLogger) {}

  get size(): number {
    return this.byTask.size;
  }

  get(taskId: string): TaskRuntime | undefined {
    return this.byTask.get(taskId);
  }

  create(cmd: PrepareTaskActivation, plugins: Pick<PluginRegistry, 'builders' | 'writers'>): TaskRuntime {
    const rt: TaskRuntime = {
      taskId: cmd.taskId,
      deadlineMs: cmd.deadlineMs,
      acceptedAtMs: cmd.acceptedAtMs,
      client: cmd.client,
      controller: new AbortController(),
      // The tables as they are now (a live registry's getters answer its current load).
      plugins: { builders: plugins.builders, writers: plugins.writers },
      epoch: undefined,
      io: undefined,
      callStream: undefined,
      fusedCallsKey: undefined,
      converged: false,
    };
    this.byTask.set(cmd.taskId, rt);
    return rt;
  }

  /**
   * The task converged: forget its runtime and release what it holds. `abortReason` is set for a task
   * that did not finish all its phases (a SUCCEEDED one did, so nothing can still listen to its signal
   * and the costly abort is skipped).
   */
  dispose(taskId: string, abortReason: string | undefined): TaskRuntime | undefined {
    const rt = this.byTask.get(taskId);
    if (rt === undefined) return undefined;
    this.byTask.delete(taskId);
    rt.converged = true;
    if (abortReason !== undefined && !rt.controller.signal.aborted) {
      rt.controller.abort(new DOMException(abortReason, 'AbortError'));
    }
    rt.epoch?.release();
    rt.epoch = undefined;
    if (rt.io !== undefined) {
      const cleanup = this.closeScope(taskId, rt.io);
      rt.io = undefined;
      this.pendingCleanups.add(cleanup);
      void cleanup.finally(() => this.pendingCleanups.delete(cleanup));
    }
    return rt;
  }

  /** Aborts the context of `taskId` (CancelTaskCalls). */
  abort(taskId: string, reason: string): void {
    const rt = this.byTask.get(taskId);
    if (rt !== undefined && !rt.controller.signal.aborted) {
      rt.controller.abort(new DOMException(reason, 'AbortError'));
    }
  }

  abortAll(reason: string): void {
    for (const taskId of this.byTask.keys()) this.abort(taskId, reason);
  }

  /** Closes a scope, logging (never throwing) a failure. */
  async closeScope(taskId: string, scope: TaskIoScope): Promise<void> {
    try {
      await scope.close();
    } catch (err) {
      this.logger.warn({ task_id: taskId, err: describeError(err) }, 'closing the task IO scope failed');
    }
  }

  /** Resolves once every IO scope of a converged task is closed. */
  async settled(): Promise<void> {
    while (this.pendingCleanups.size > 0) await Promise.all([...this.pendingCleanups]);
  }
}
