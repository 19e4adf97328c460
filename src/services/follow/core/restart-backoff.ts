// When a supervised job's runner is started again after it failed (docs/follow.md § Jobs in the config).
// A runner that exits 1 (a reorg deeper than finality, the lease held elsewhere or lost, the database or
// the cluster unreachable) is restarted after a delay that doubles with each failure in a row, from
// `initialMs` up to `maxMs`. A run that lasted at least `maxMs` counts as healthy: the failure after it is
// the first of a new row, so a job that runs for hours and then fails once restarts quickly. No IO, no
// clock: the supervisor passes when the run started and ended.

export interface RestartBackoff {
  /** The delay after the first failure in a row. */
  readonly initialMs: number;
  /** The longest delay; also how long a run must last to reset the row. */
  readonly maxMs: number;
}

/** The row of failures after a run from `startedMs` to `endedMs` failed, given the row before it. */
export function failuresInARow(
  previous: number,
  run: { readonly startedMs: number; readonly endedMs: number },
  backoff: RestartBackoff,
): number {
  return run.endedMs - run.startedMs >= backoff.maxMs ? 1 : previous + 1;
}

/** How long to wait before the restart that follows `failures` failures in a row (≥ 1). */
export function restartDelayMs(failures: number, backoff: RestartBackoff): number {
  if (!Number.isInteger(failures) || failures < 1)
    throw new RangeError(`failures must be ≥ 1, got ${failures}`);
  // 2^(failures-1) overflows to Infinity long before it matters; min() brings it back to maxMs.
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));
}
