// The orchestrator's clock: one OS timer armed for the core's next deadline (re-armed after every
// step, replaced only when that deadline changes), plus the fixed `timerScanMs` scan (docs/task-lifecycle.md
// § Deadlines) as a safety net. Both call the same `onFire` (tickTimers). Timers are unref'd: the gRPC server
// keeps the process alive, not its timers.

const MAX_TIMER_DELAY_MS = 2_147_483_647;

export class DeadlineTimer {
  private started = false;
  private timer: NodeJS.Timeout | undefined;
  private armedAt: number | undefined;
  private scan: NodeJS.Timeout | undefined;

  constructor(private readonly onFire: () => void) {}

  start(scanMs: number): void {
    if (this.started) return;
    this.started = true;
    this.scan = setInterval(this.onFire, scanMs);
    this.scan.unref();
  }

  stop(): void {
    this.started = false;
    if (this.scan !== undefined) clearInterval(this.scan);
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.scan = undefined;
    this.timer = undefined;
    this.armedAt = undefined;
  }

  /** Makes the one timer fire at `deadline` (absolute ms; undefined = nothing scheduled). */
  arm(deadline: number | undefined, now: number): void {
    if (!this.started || deadline === this.armedAt) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = deadline;
    if (deadline === undefined) return;
    const delay = Math.min(Math.max(0, deadline - now), MAX_TIMER_DELAY_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.armedAt = undefined;
      this.onFire();
    }, delay);
    this.timer.unref();
  }
}
