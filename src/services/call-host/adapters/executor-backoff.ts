// Restart delays for the executor: exponential from `initialMs` to `maxMs`. The streak of failures is
// forgiven once an executor has stayed ready for `resetAfterMs`, so a crash loop backs off while a rare
// crash after hours of service restarts at once. Pure: the caller passes `now`.

/** The first delay and the cap are the config table's (`executor.restartBackoffInitialMs`, `…MaxMs`). */
export interface BackoffOptions {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Ready this long and the streak is forgiven. Default RESET_AFTER_MS. */
  readonly resetAfterMs?: number;
}

/** How long an executor must stay ready before its earlier crashes stop counting. */
const RESET_AFTER_MS = 10_000;

export class RestartBackoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly resetAfterMs: number;
  private failures = 0;
  private readySinceMs: number | undefined;

  constructor(options: BackoffOptions) {
    this.initialMs = options.initialMs;
    this.maxMs = options.maxMs;
    this.resetAfterMs = options.resetAfterMs ?? RESET_AFTER_MS;
  }

  /** The executor became ready at `now`. */
  ready(now: number): void {
    this.readySinceMs = now;
  }

  /** The executor is gone at `now`: the delay before the next start. */
  nextDelay(now: number): number {
    if (this.readySinceMs !== undefined && now - this.readySinceMs >= this.resetAfterMs) this.failures = 0;
    this.readySinceMs = undefined;
    const delay = Math.min(this.maxMs, this.initialMs * 2 ** this.failures);
    this.failures++;
    return delay;
  }
}
