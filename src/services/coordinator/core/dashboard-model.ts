// The dashboard model (docs/dashboard-data.md): what the Coordinator's dashboard feed remembers between
// polls of its Workers' ListRecentTasks, and how it turns that into the snapshot's throughput and
// recent tasks (src/contracts/dashboard.ts).
//
// Theory of operation.
//  - Throughput comes from counters, not from task records: each Worker reports cumulative
//    succeeded/failed totals since its process started, with a random `instance` id. The model keeps the
//    last totals per Worker; a report's delta is counted into the bucket of the poll's `now`. The first
//    report of a Worker only sets the baseline (what it did before the feed saw it is not "now"). A new
//    instance is a restarted process whose counters began at 0: its totals are the delta. Totals that go
//    down under the same instance (impossible from a sane Worker) are treated the same way, so a delta is
//    never negative.
//  - Buckets are THROUGHPUT_BUCKET_MS wide, aligned to multiples of it, kept for THROUGHPUT_WINDOW_MS;
//    `throughput(now)` returns every bucket of the window, oldest first, zeros included, so a chart has a
//    fixed x axis.
//  - Recent tasks: each report carries the records that changed after the cursor the feed sent; the
//    model keeps the latest record per task (at most MAX_TASKS_PER_WORKER per Worker, the most recently
//    changed) and merges all Workers newest first (by end time, else start time), at most
//    MAX_RECENT_TASKS. A report from a new instance, or one that says it is truncated, starts that
//    Worker's cursor over, so the next poll re-reads what the Worker still holds.
//  - Workers that are not in the cluster any more keep their tasks for THROUGHPUT_WINDOW_MS after their
//    last report (a crashed Worker's last tasks are what an operator wants to see), then are dropped.
// No IO, no clock: every input carries `now`.

import {
  isRecentTaskState,
  type RecentTaskView,
  type ThroughputPoint,
} from '../../../contracts/dashboard.js';

export const THROUGHPUT_BUCKET_MS = 5_000;
export const THROUGHPUT_WINDOW_MS = 10 * 60_000;
/** Tasks in a snapshot at most. */
export const MAX_RECENT_TASKS = 100;
/** Task records kept per Worker at most. */
export const MAX_TASKS_PER_WORKER = 256;
/** Workers remembered at most (a Worker beyond it, least recently reported, is dropped). */
export const MAX_TRACKED_WORKERS = 4_096;

/** One task record as a Worker reported it (ListRecentTasks' RecentTask). */
export interface ReportedTask {
  readonly taskId: string;
  readonly state: string;
  readonly startedAtMs: number;
  readonly endedAtMs: number;
  readonly builder: string;
  readonly failureCode: string;
  readonly failureMessage: string;
  readonly codeVersion: string;
  readonly seq: number;
  /** The submitter; empty or absent when the Worker did not say (an older Worker). */
  readonly client?: string;
}

/** One ListRecentTasks answer. */
export interface WorkerReport {
  readonly workerAddr: string;
  /** The `afterSeq` the request was sent with. */
  readonly afterSeq: number;
  readonly instance: string;
  readonly lastSeq: number;
  readonly succeededTotal: number;
  readonly failedTotal: number;
  readonly truncated: boolean;
  readonly tasks: readonly ReportedTask[];
}

interface WorkerState {
  instance: string;
  succeededTotal: number;
  failedTotal: number;
  cursor: number;
  lastReportMs: number;
  readonly tasks: Map<string, RecentTaskView>;
}

interface Bucket {
  succeeded: number;
  failed: number;
}

function nonNegative(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

function bucketOf(now: number): number {
  return Math.floor(now / THROUGHPUT_BUCKET_MS) * THROUGHPUT_BUCKET_MS;
}

/** A reported record in the snapshot's shape; undefined for a state the contract does not know. */
export function recentTaskView(workerAddr: string, t: ReportedTask): RecentTaskView | undefined {
  if (!isRecentTaskState(t.state)) return undefined;
  const startedAtMs = nonNegative(t.startedAtMs);
  const endedAtMs = nonNegative(t.endedAtMs);
  return {
    taskId: t.taskId,
    workerAddr,
    state: t.state,
    startedAtMs,
    endedAtMs,
    durationMs: endedAtMs > 0 && startedAtMs > 0 ? Math.max(0, endedAtMs - startedAtMs) : 0,
    builder: t.builder,
    failureCode: t.failureCode,
    failureMessage: t.failureMessage,
    codeVersion: t.codeVersion,
    ...(t.client ? { client: t.client } : {}),
  };
}

/** Newest first: by end time, else start time; ties by task id, for a stable order. */
function newestFirst(a: RecentTaskView, b: RecentTaskView): number {
  const ta = a.endedAtMs || a.startedAtMs;
  const tb = b.endedAtMs || b.startedAtMs;
  if (ta !== tb) return tb - ta;
  return a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0;
}

export class DashboardModel {
  private readonly workers = new Map<string, WorkerState>();
  private readonly buckets = new Map<number, Bucket>();

  /** The `afterSeq` to send to `workerAddr` next (0 for a Worker not seen yet). */
  cursorOf(workerAddr: string): number {
    return this.workers.get(workerAddr)?.cursor ?? 0;
  }

  /** Applies one ListRecentTasks answer received at `now`. */
  applyReport(report: WorkerReport, now: number): void {
    const succeeded = nonNegative(report.succeededTotal);
    const failed = nonNegative(report.failedTotal);
    let state = this.workers.get(report.workerAddr);
    let restarted = false;
    if (state === undefined) {
      state = {
        instance: report.instance,
        succeededTotal: succeeded,
        failedTotal: failed,
        cursor: 0,
        lastReportMs: now,
        tasks: new Map(),
      };
      this.workers.set(report.workerAddr, state);
      this.boundWorkers();
    } else {
      restarted = state.instance !== report.instance;
      const reset = restarted || succeeded < state.succeededTotal || failed < state.failedTotal;
      const dSucceeded = reset ? succeeded : succeeded - state.succeededTotal;
      const dFailed = reset ? failed : failed - state.failedTotal;
      this.count(now, dSucceeded, dFailed);
      state.instance = report.instance;
      state.succeededTotal = succeeded;
      state.failedTotal = failed;
      state.lastReportMs = now;
      // Re-insert: the Map stays ordered by last report, for boundWorkers.
      this.workers.delete(report.workerAddr);
      this.workers.set(report.workerAddr, state);
    }
    // Oldest change first, so a later record of the same task wins.
    const changed = [...report.tasks].sort((a, b) => a.seq - b.seq);
    for (const t of changed) {
      const view = recentTaskView(report.workerAddr, t);
      if (view === undefined) continue;
      state.tasks.delete(view.taskId);
      state.tasks.set(view.taskId, view);
    }
    while (state.tasks.size > MAX_TASKS_PER_WORKER) {
      const oldest = state.tasks.keys().next().value as string;
      state.tasks.delete(oldest);
    }
    // A cursor from another instance, or a page that skipped changes, means: read everything next time.
    const stale = restarted && report.afterSeq > 0;
    state.cursor = stale || report.truncated ? 0 : nonNegative(report.lastSeq);
    this.prune(now);
  }

  /** Drops Workers absent from `present` whose last report is older than the window. */
  retainWorkers(present: ReadonlySet<string>, now: number): void {
    for (const [addr, state] of this.workers) {
      if (!present.has(addr) && now - state.lastReportMs >= THROUGHPUT_WINDOW_MS) this.workers.delete(addr);
    }
  }

  /** Every bucket of the window ending at `now`, oldest first. */
  throughput(now: number): ThroughputPoint[] {
    this.prune(now);
    const last = bucketOf(now);
    const n = THROUGHPUT_WINDOW_MS / THROUGHPUT_BUCKET_MS;
    const points: ThroughputPoint[] = [];
    for (let i = n - 1; i >= 0; i--) {
      const atMs = last - i * THROUGHPUT_BUCKET_MS;
      const b = this.buckets.get(atMs);
      points.push({
        atMs,
        bucketMs: THROUGHPUT_BUCKET_MS,
        succeeded: b?.succeeded ?? 0,
        failed: b?.failed ?? 0,
      });
    }
    return points;
  }

  /** The most recent tasks across Workers, newest first, at most `limit`. */
  recentTasks(limit: number = MAX_RECENT_TASKS): RecentTaskView[] {
    const all: RecentTaskView[] = [];
    for (const state of this.workers.values()) for (const t of state.tasks.values()) all.push(t);
    all.sort(newestFirst);
    return all.slice(0, Math.max(0, limit));
  }

  /** Workers remembered (for tests and diagnostics). */
  get trackedWorkers(): number {
    return this.workers.size;
  }

  private count(now: number, succeeded: number, failed: number): void {
    if (succeeded === 0 && failed === 0) return;
    const at = bucketOf(now);
    const b = this.buckets.get(at) ?? { succeeded: 0, failed: 0 };
    b.succeeded += succeeded;
    b.failed += failed;
    this.buckets.set(at, b);
  }

  private prune(now: number): void {
    const oldest = bucketOf(now) - THROUGHPUT_WINDOW_MS + THROUGHPUT_BUCKET_MS;
    for (const at of this.buckets.keys()) if (at < oldest) this.buckets.delete(at);
  }

  private boundWorkers(): void {
    while (this.workers.size > MAX_TRACKED_WORKERS) {
      const oldest = this.workers.keys().next().value as string;
      this.workers.delete(oldest);
    }
  }
}
