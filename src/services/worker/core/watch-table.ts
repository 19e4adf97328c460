// Watch bookkeeping for the optional "run credential" (docs/task-lifecycle.md § WatchTasks, "Watch as a run
// credential").
//
// `counts` is a plain per-task-id counter of attached WatchTasks streams, kept whatever the task's state
// (a stream may attach before SubmitTask, or stay attached after convergence until it closes itself);
// entries vanish at zero, so the map holds only ids with live streams. `grace` holds the disconnect
// deadline of active, watched tasks whose last stream went away.

import { TimerTable } from './timer-table.js';

export class WatchTable {
  private readonly counts = new Map<string, number>();
  private readonly grace = new TimerTable<string>();

  /** Number of attached streams for `taskId`. */
  count(taskId: string): number {
    return this.counts.get(taskId) ?? 0;
  }

  /** One more stream; returns the new count. */
  attach(taskId: string): number {
    const next = this.count(taskId) + 1;
    this.counts.set(taskId, next);
    return next;
  }

  /** One stream fewer; returns the new count, or undefined when none was attached. */
  detach(taskId: string): number | undefined {
    const current = this.counts.get(taskId);
    if (current === undefined) return undefined;
    if (current <= 1) {
      this.counts.delete(taskId);
      return 0;
    }
    this.counts.set(taskId, current - 1);
    return current - 1;
  }

  startGrace(taskId: string, until: number): void {
    this.grace.set(taskId, until);
  }

  clearGrace(taskId: string): void {
    this.grace.delete(taskId);
  }

  graceDeadline(taskId: string): number | undefined {
    return this.grace.get(taskId);
  }

  nextGraceDeadline(): number | undefined {
    return this.grace.peek()?.at;
  }

  /** Pops one task whose grace is due at `now` (its timer is disarmed). */
  popGraceExpired(now: number): string | undefined {
    return this.grace.popDue(now);
  }

  /** Task ids with an armed grace timer (for invariant checks). */
  get graceCount(): number {
    return this.grace.size;
  }
}
