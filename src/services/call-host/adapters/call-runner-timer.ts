// The one OS timer of ExecutorCallRunner (executor-call-runner.ts), armed at the dispatcher's earliest
// deadline. It is re-armed at most once per event-loop turn (a microtask after a burst of events) and
// only when that deadline moved earlier; when it fires, the runner ticks the dispatcher (`onDue`).

import type { RunnerTimers } from './executor-call-io.js';

export class CallRunnerTimer {
  private timer: unknown = undefined;
  private timerAt: number | undefined = undefined;
  private armQueued = false;
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.timerAt = undefined;
    this.onDue();
    this.armTimer();
  };
  private readonly armTimerTask = (): void => {
    this.armQueued = false;
    this.armTimer();
  };

  constructor(
    private readonly timers: RunnerTimers,
    private readonly clock: () => number,
    /** The dispatcher's earliest deadline, if any. */
    private readonly nextDeadline: () => number | undefined,
    /** The timer fired: tick the dispatcher. */
    private readonly onDue: () => void,
    /** The runner is closed: the timer is never armed again. */
    private readonly closed: () => boolean,
  ) {}

  /** Re-arm once after the current burst of events (they arrive in one synchronous loop per chunk). */
  queueArm(): void {
    if (this.armQueued) return;
    this.armQueued = true;
    queueMicrotask(this.armTimerTask);
  }

  /** Stops the timer (the runner is closing). */
  clear(): void {
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
  }

  /** Arms the timer at the dispatcher's earliest deadline if it moved earlier; a late one just re-arms. */
  private armTimer(): void {
    if (this.closed()) return;
    const next = this.nextDeadline();
    if (next === undefined) {
      if (this.timer !== undefined) this.timers.clear(this.timer);
      this.timer = undefined;
      this.timerAt = undefined;
      return;
    }
    if (this.timerAt !== undefined && this.timerAt <= next) return;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timerAt = next;
    this.timer = this.timers.set(this.onTimer, Math.max(0, next - this.clock()));
  }
}
