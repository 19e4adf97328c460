// Formatting of the dashboard's numbers (docs/dashboard.md). Pure functions, no DOM: unit-tested in
// test/unit/services/dashboard/page-format.test.ts.

/** 850 ms, 5 s, 12.3 s, 4 min 05 s, 10 min, 2 h 03 min. */
export function formatDuration(ms) {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  // Number() drops trailing zeros: 5.00 → "5", 12.30 → "12.3".
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(ms < 10_000 ? 2 : 1))} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600)
    return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/** How long ago `thenMs` was, seen at `nowMs`: "0.4 s ago". */
export function formatAge(thenMs, nowMs) {
  if (!thenMs) return '–';
  return `${formatDuration(Math.max(0, nowMs - thenMs))} ago`;
}

/** A fraction in [0, 1] as a percentage: 0.4567 → "45.7%". */
export function formatPercent(fraction) {
  if (!Number.isFinite(fraction)) return '–';
  const p = fraction * 100;
  return `${p >= 10 || p === 0 ? p.toFixed(0) : p.toFixed(1)}%`;
}

/** Local wall-clock time of a UTC ms instant, HH:MM:SS. */
export function formatClock(ms) {
  if (!ms) return '–';
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** Share of a backfill job that is done (succeeded, failed or skipped), in [0, 1]. */
export function backfillProgress(job) {
  if (!(job.units > 0)) return job.finished ? 1 : 0;
  return Math.min(1, (job.succeeded + job.failed + job.skipped) / job.units);
}

/**
 * The reported runs of each backfill job, one entry a job: a rerun of a job (its `run` differs, the job id
 * does not) is the same job, so the page shows it once. `backfills` comes newest report first; each job's
 * `latest` is its run started last (the report order breaks a tie), `runs` all of them, started last first.
 * Jobs keep the order of their newest report.
 */
export function backfillJobs(backfills) {
  const byJob = new Map();
  for (const [i, b] of backfills.entries()) {
    const runs = byJob.get(b.jobId);
    if (runs) runs.push([i, b]);
    else byJob.set(b.jobId, [[i, b]]);
  }
  return [...byJob.values()].map((entries) => {
    const runs = entries.sort(([i, a], [j, b]) => b.startedAtMs - a.startedAtMs || i - j).map(([, b]) => b);
    return { latest: runs[0], runs };
  });
}

/** Slots taken on a Worker, as selection sees them: total minus free (never below 0). */
export function slotsUsed(worker) {
  return Math.max(0, worker.taskSlots - worker.freeSlots);
}

/** Shortens a long identifier for a table cell, keeping both ends: "0123456789…cdef". */
export function shortId(id, max = 18) {
  if (typeof id !== 'string' || id.length <= max) return id ?? '';
  const half = Math.floor((max - 1) / 2);
  return `${id.slice(0, half)}…${id.slice(-half)}`;
}

/** How far a follow job is behind its head: "3 blocks · 36 s", "caught up", or "–" before its first read. */
export function formatLag(lagBlocks, lagSeconds) {
  if (lagBlocks === null || lagBlocks === undefined) return '–';
  if (lagBlocks === 0) return 'caught up';
  const blocks = `${lagBlocks} block${lagBlocks === 1 ? '' : 's'}`;
  return lagSeconds === null || lagSeconds === undefined
    ? blocks
    : `${blocks} · ${formatDuration(lagSeconds * 1000)}`;
}

/** A follow job's last reorg, seen at `nowMs`: "3 blocks above 27, 12 s ago", or "none". */
export function formatReorg(reorg, nowMs) {
  if (!reorg) return 'none';
  const blocks = `${reorg.depth} block${reorg.depth === 1 ? '' : 's'}`;
  return `${blocks} above ${reorg.ancestor}, ${formatAge(reorg.atMs, nowMs)}`;
}
