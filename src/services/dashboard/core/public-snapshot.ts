// The snapshot as the page receives it: every field copied by name from the contract
// (src/contracts/dashboard.ts), nothing else, and every list and string bounded. The feed is meant to
// hold nothing secret; this makes it so whatever an object in it carries besides the contract's fields
// (a core row, a raw heartbeat), and keeps one frame's size bounded however large the cluster grows.
// Pure: no IO.
import type { ClusterStatusView, WorkerStatusView } from '../../../contracts/cluster-status.js';
import {
  isRecentTaskState,
  type BackfillJobView,
  type DashboardSnapshot,
  type FollowJobView,
  type RecentTaskView,
  type ThroughputPoint,
} from '../../../contracts/dashboard.js';

/** Bounds of one frame (docs/dashboard.md § Limits). */
export const SNAPSHOT_LIMITS = Object.freeze({
  workers: 512,
  throughputPoints: 720,
  recentTasks: 200,
  backfills: 50,
  followJobs: 100,
  /** Characters of any one string (failure messages are bounded by the Worker already). */
  text: 1_024,
});

const text = (v: unknown): string => {
  const s = typeof v === 'string' ? v : '';
  return s.length > SNAPSHOT_LIMITS.text ? `${s.slice(0, SNAPSHOT_LIMITS.text)}…` : s;
};
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function publicSnapshot(s: DashboardSnapshot): DashboardSnapshot {
  return {
    atMs: num(s.atMs),
    cluster: publicCluster(s.cluster),
    throughput: s.throughput.slice(-SNAPSHOT_LIMITS.throughputPoints).map(publicPoint),
    recentTasks: s.recentTasks.slice(0, SNAPSHOT_LIMITS.recentTasks).map(publicTask),
    backfills: s.backfills.slice(0, SNAPSHOT_LIMITS.backfills).map(publicBackfill),
    followJobs: (s.followJobs ?? []).slice(0, SNAPSHOT_LIMITS.followJobs).map(publicFollowJob),
  };
}

function publicCluster(c: ClusterStatusView): ClusterStatusView {
  const l = c.limits;
  return {
    ready: c.ready === true,
    unavailableReason: text(c.unavailableReason),
    nowMs: num(c.nowMs),
    initialized: c.initialized === true,
    watchDisconnectedAtMs: num(c.watchDisconnectedAtMs),
    registryPrefixes: c.registryPrefixes.slice(0, 16).map(text),
    limits:
      l === null
        ? null
        : {
            heartbeatTimeoutMs: num(l.heartbeatTimeoutMs),
            watchGracePeriodMs: num(l.watchGracePeriodMs),
            slotTtlMs: num(l.slotTtlMs),
            maxCandidates: num(l.maxCandidates),
            circuitBreakerThreshold: num(l.circuitBreakerThreshold),
            circuitBreakerCooldownMs: num(l.circuitBreakerCooldownMs),
            cpuRedLine: num(l.cpuRedLine),
            memoryRedLine: num(l.memoryRedLine),
            errorRateRedLine: num(l.errorRateRedLine),
          },
    workers: c.workers.slice(0, SNAPSHOT_LIMITS.workers).map(publicWorker),
  };
}

function publicWorker(w: WorkerStatusView): WorkerStatusView {
  return {
    workerAddr: text(w.workerAddr),
    taskSlots: num(w.taskSlots),
    reservedSlots: num(w.reservedSlots),
    runningTasks: num(w.runningTasks),
    cpuPercent: num(w.cpuPercent),
    memoryPercent: num(w.memoryPercent),
    memoryAvailableBytes: num(w.memoryAvailableBytes),
    memoryTotalBytes: num(w.memoryTotalBytes),
    processRssBytes: num(w.processRssBytes),
    errorRate: num(w.errorRate),
    lastHeartbeatMs: num(w.lastHeartbeatMs),
    freeSlots: num(w.freeSlots),
    heartbeatAgeMs: num(w.heartbeatAgeMs),
    consecutiveFailures: num(w.consecutiveFailures),
    penalty: num(w.penalty),
    routable: w.routable === true,
    registryPrefix: text(w.registryPrefix),
    registryFormat: text(w.registryFormat),
    breakerState: text(w.breakerState),
    breakerOpenUntilMs: num(w.breakerOpenUntilMs),
    notRoutableCode: text(w.notRoutableCode),
    notRoutableReason: text(w.notRoutableReason),
    // Optional in the view (an older Coordinator's rows lack them): kept absent when absent.
    ...(typeof w.codeVersion === 'string' ? { codeVersion: text(w.codeVersion) } : {}),
    ...(typeof w.codeVersionError === 'string' ? { codeVersionError: text(w.codeVersionError) } : {}),
  };
}

function publicPoint(p: ThroughputPoint): ThroughputPoint {
  return { atMs: num(p.atMs), bucketMs: num(p.bucketMs), succeeded: num(p.succeeded), failed: num(p.failed) };
}

function publicTask(t: RecentTaskView): RecentTaskView {
  return {
    taskId: text(t.taskId),
    workerAddr: text(t.workerAddr),
    state: isRecentTaskState(t.state) ? t.state : 'RUNNING',
    startedAtMs: num(t.startedAtMs),
    endedAtMs: num(t.endedAtMs),
    durationMs: num(t.durationMs),
    builder: text(t.builder),
    failureCode: text(t.failureCode),
    failureMessage: text(t.failureMessage),
    codeVersion: text(t.codeVersion),
  };
}

function publicBackfill(b: BackfillJobView): BackfillJobView {
  return {
    jobId: text(b.jobId),
    run: text(b.run),
    per: b.per === 'bundle' ? 'bundle' : 'block',
    fromBlock: num(b.fromBlock),
    toBlock: num(b.toBlock),
    units: num(b.units),
    succeeded: num(b.succeeded),
    failed: num(b.failed),
    skipped: num(b.skipped),
    inFlight: num(b.inFlight),
    startedAtMs: num(b.startedAtMs),
    updatedAtMs: num(b.updatedAtMs),
    finished: b.finished === true,
  };
}

/** A count or height the job may not know yet: null stays null. */
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));
const textOrNull = (v: unknown): string | null => (typeof v === 'string' ? text(v) : null);

function publicFollowJob(j: FollowJobView): FollowJobView {
  const r = j.lastReorg;
  return {
    jobId: text(j.jobId),
    kind: text(j.kind),
    chainId: num(j.chainId),
    state: text(j.state),
    runner: textOrNull(j.runner),
    term: numOrNull(j.term),
    head: numOrNull(j.head),
    finalized: numOrNull(j.finalized),
    lagBlocks: numOrNull(j.lagBlocks),
    lagSeconds: numOrNull(j.lagSeconds),
    reorgs: num(j.reorgs),
    deepestReorg: num(j.deepestReorg),
    lastReorg:
      r === null || typeof r !== 'object'
        ? null
        : {
            atMs: num(r.atMs),
            ancestor: num(r.ancestor),
            depth: num(r.depth),
            oldTip: text(r.oldTip),
            newTip: textOrNull(r.newTip),
          },
    lastError: textOrNull(j.lastError),
    updatedMs: num(j.updatedMs),
    restarts: numOrNull(j.restarts),
  };
}
