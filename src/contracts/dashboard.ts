// The dashboard's data (docs/dashboard.md): what the Coordinator's dashboard feed assembles every second
// and what the page receives as JSON over Server-Sent Events. One shape for the feed (services/
// coordinator) and the server that sends it (services/dashboard); plain JSON (numbers are UTC ms or
// counts), nothing secret (no task inputs, no configs, no tokens). Types and one pure check: no IO.

import type { ClusterStatusView } from './cluster-status.js';
import type { FollowJobStatus } from './follow-job.js';
import { TaskState } from './task.js';

/** Everything the page shows, at one instant. */
export interface DashboardSnapshot {
  /** When the snapshot was assembled (UTC ms, the Coordinator's clock). */
  readonly atMs: number;
  /** The Coordinator's view of its Workers (the same view as `blockx status`). */
  readonly cluster: ClusterStatusView;
  /** Terminal tasks per time bucket over the last minutes, oldest first (docs/dashboard.md § Charts). */
  readonly throughput: readonly ThroughputPoint[];
  /** The most recent tasks across all Workers, newest first (bounded; docs/dashboard.md § Tasks). */
  readonly recentTasks: readonly RecentTaskView[];
  /** Backfill jobs that reported progress recently, newest first. */
  readonly backfills: readonly BackfillJobView[];
  /**
   * Follow jobs (`backfill --follow`, `ingest --follow`) of the storage database, by id: present where the
   * serving process reads them (`blockx up`; docs/dashboard.md § Follow jobs).
   */
  readonly followJobs?: readonly FollowJobView[];
}

/** Tasks that ended in one bucket `[atMs, atMs + bucketMs)`. */
export interface ThroughputPoint {
  readonly atMs: number;
  readonly bucketMs: number;
  readonly succeeded: number;
  readonly failed: number;
}

/** A recent task's state: the one `TaskState` (./task.ts) but UNSPECIFIED, which names no task. */
export type RecentTaskState = Exclude<TaskState, 'UNSPECIFIED'>;

const RECENT_TASK_STATES: ReadonlySet<string> = new Set(
  Object.values(TaskState).filter((s) => s !== TaskState.UNSPECIFIED),
);

/** True for a state a recent task may be in (for values read from a Worker or a frame). */
export function isRecentTaskState(state: string): state is RecentTaskState {
  return RECENT_TASK_STATES.has(state);
}

/** One task as a Worker last reported it. */
export interface RecentTaskView {
  readonly taskId: string;
  readonly workerAddr: string;
  readonly state: RecentTaskState;
  /** When the task was admitted (UTC ms), 0 if it has not started. */
  readonly startedAtMs: number;
  /** When it ended (UTC ms), 0 while it runs. */
  readonly endedAtMs: number;
  /** endedAtMs - startedAtMs once ended, else 0. */
  readonly durationMs: number;
  /** The builder plugin type (e.g. "CallListCallConfig"). */
  readonly builder: string;
  /** Empty on success. */
  readonly failureCode: string;
  /** Empty on success; bounded in length by the Worker. */
  readonly failureMessage: string;
  /** The code version the task ran (docs/functions-deploy.md); empty when unknown. */
  readonly codeVersion: string;
  /**
   * Who submitted it (the caller's identity, docs/security.md § Roles), when the Worker said: the
   * dashboard shows a task to its submitter and to the roles that see every client, never sent to the page.
   */
  readonly client?: string;
}

/**
 * What a backfill client reports of its job (CoordinatorJobsService.ReportBackfillProgress,
 * proto/blockx/coordinator/v1/jobs.proto, in camelCase; docs/dashboard-data.md).
 */
export interface BackfillProgress {
  readonly jobId: string;
  /** The run of the job (a rerun after `--fresh` is a new run). */
  readonly run: string;
  readonly per: 'block' | 'bundle';
  readonly fromBlock: number;
  readonly toBlock: number;
  /** Units (blocks or bundles) in the job. */
  readonly units: number;
  readonly succeeded: number;
  readonly failed: number;
  /** Units a previous run already did. */
  readonly skipped: number;
  readonly inFlight: number;
  readonly startedAtMs: number;
  /** The client reported the end of the job. */
  readonly finished: boolean;
}

/** A backfill job's progress, as its client last reported it. */
export interface BackfillJobView extends BackfillProgress {
  /** When the client last reported (UTC ms). */
  readonly updatedAtMs: number;
  /** The identity that reported it first, its owner (as RecentTaskView.client; never sent to the page). */
  readonly client?: string;
}

/** A follow job as the dashboard shows it: its status, and how often this process restarted its runner. */
export interface FollowJobView extends FollowJobStatus {
  /**
   * Runs its supervisor started again after a failure: `blockx up`'s own count for the jobs it supervises,
   * or the count the runner published to etcd (docs/follow.md § Watching a job); null: not supervised.
   */
  readonly restarts: number | null;
}

/** What the dashboard server needs from its feed. */
export interface DashboardSource {
  /** The latest snapshot. */
  snapshot(): DashboardSnapshot;
  /** Calls `listener` after each new snapshot; returns the unsubscribe function. */
  onSnapshot(listener: (snapshot: DashboardSnapshot) => void): () => void;
}
