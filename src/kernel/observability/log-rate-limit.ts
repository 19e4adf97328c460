// A bound on how often one kind of log line is written, for lines a stranger can cause at will
// (docs/security.md § Logs): a refused connection to the executor socket costs its sender one connect(),
// and the Worker one warn line, so a loop of connects would otherwise fill the disk.
//
// A token bucket: `burst` lines at once, then one per `intervalMs`. A suppressed line is counted, and
// the next line written says how many were suppressed since the previous one. Pure: `now` is an argument.

export interface LogRateLimitOptions {
  /** Lines written before the limit applies (and regained at one per interval). Default 10. */
  readonly burst?: number;
  /** One more line per this many ms once the burst is spent. Default 10 s. */
  readonly intervalMs?: number;
}

/**
 * Returns `gate(nowMs, write)`: calls `write(suppressed)` when a line may be written now, where
 * `suppressed` is how many lines were dropped since the last one written; otherwise counts the line.
 */
export function logRateLimit(
  options: LogRateLimitOptions = {},
): (nowMs: number, write: (suppressed: number) => void) => void {
  const burst = Math.max(1, options.burst ?? 10);
  const intervalMs = Math.max(1, options.intervalMs ?? 10_000);
  let tokens = burst;
  let lastRefillMs: number | undefined;
  let suppressed = 0;
  return (nowMs, write) => {
    if (lastRefillMs === undefined) lastRefillMs = nowMs;
    const earned = Math.floor((nowMs - lastRefillMs) / intervalMs);
    if (earned > 0) {
      tokens = Math.min(burst, tokens + earned);
      lastRefillMs += earned * intervalMs;
    } else if (nowMs < lastRefillMs) lastRefillMs = nowMs; // the clock went back: start the interval again
    if (tokens === 0) {
      suppressed++;
      return;
    }
    tokens--;
    const dropped = suppressed;
    suppressed = 0;
    write(dropped);
  };
}

/** The suffix a rate-limited line carries when lines were suppressed before it ("" when none were). */
export function suppressedSuffix(suppressed: number): string {
  return suppressed > 0
    ? ` (${suppressed} similar line${suppressed === 1 ? '' : 's'} suppressed before this one)`
    : '';
}
