// Retained terminal results (docs/task-lifecycle.md § Results and retention). A converged task's result is
// kept until `retainedUntilMs`; while it is, the task id answers GetTaskResult / WatchTasks and any
// RequestTaskSlot / SubmitTask with the same id gets the terminal state instead of a new execution.
// An entry counts as gone from `retainedUntilMs` on, whether or not the timer scan purged it yet.

import { TimerTable } from './timer-table.js';
import type { TaskResult, TerminalTaskState } from './types.js';

export interface RetainedResult {
  readonly taskId: string;
  readonly state: TerminalTaskState;
  readonly result: TaskResult;
  readonly convergedAtMs: number;
  readonly retainedUntilMs: number;
  /** The task's submitter (absent: anonymous). */
  readonly client?: string;
}

export class ResultStore {
  private readonly results = new Map<string, RetainedResult>();
  private readonly expiry = new TimerTable<string>();

  get size(): number {
    return this.results.size;
  }

  put(entry: RetainedResult): void {
    this.results.set(entry.taskId, entry);
    this.expiry.set(entry.taskId, entry.retainedUntilMs);
  }

  /** The live result of `taskId` at `now`; an expired entry is dropped on the spot. */
  get(taskId: string, now: number): RetainedResult | undefined {
    const entry = this.results.get(taskId);
    if (entry === undefined) return undefined;
    if (entry.retainedUntilMs <= now) {
      this.delete(taskId);
      return undefined;
    }
    return entry;
  }

  /** Whether an entry exists, expired or not (no side effect). */
  has(taskId: string): boolean {
    return this.results.has(taskId);
  }

  delete(taskId: string): void {
    this.results.delete(taskId);
    this.expiry.delete(taskId);
  }

  nextExpiry(): number | undefined {
    return this.expiry.peek()?.at;
  }

  /** Purges one result expired at `now`; returns its task id, or undefined when none is due. */
  purgeOneExpired(now: number): string | undefined {
    const taskId = this.expiry.popDue(now);
    if (taskId !== undefined) this.results.delete(taskId);
    return taskId;
  }

  entries(): IterableIterator<RetainedResult> {
    return this.results.values();
  }
}
