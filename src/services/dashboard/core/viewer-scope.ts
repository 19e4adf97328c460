// What one viewer of the dashboard may see of a snapshot (docs/security.md § Roles, docs/dashboard.md
// § Who sees what). Pure: the server decides who the viewer is from its client certificate; this
// decides what that viewer gets.
//
// Theory of operation:
// - A viewer whose roles see every client (SEES_EVERY_CLIENT in src/kernel/roles.ts: viewer, admin,
//   the Coordinator), and every viewer of a plaintext dashboard (where identities are only claims),
//   gets the whole snapshot.
// - Any other viewer (a submitter, a deployer) gets the tasks and backfill jobs whose `client` is its
//   own identity, and no follow job: follow jobs run with the storage credentials of the operator's
//   config, so they belong to no certificate. A task or job without a known client is nobody's.
// - The cluster view and the throughput chart are counts the same for everyone: a submitter may read the
//   cluster's status over gRPC anyway (GetClusterStatus), and the chart names no task.
// - Every view carries at most VIEW_RECENT_TASKS tasks, the newest: the feed keeps more than that so
//   that a submitter's own newest tasks are still there while other clients are busy.

import type { DashboardSnapshot } from '../../../contracts/dashboard.js';

/** Tasks one view carries at most (the page's list). */
export const VIEW_RECENT_TASKS = 100;

/** Who is looking: everything, or one client's own tasks and jobs. */
export type DashboardViewer = { readonly kind: 'all' } | { readonly kind: 'own'; readonly client: string };

export const ALL_VIEWER: DashboardViewer = Object.freeze({ kind: 'all' });

/** A key naming the view `viewer` gets: equal keys, equal views of one snapshot. */
export function viewerKey(viewer: DashboardViewer): string {
  return viewer.kind === 'all' ? 'all' : `own:${viewer.client}`;
}

/** What `viewer` may see of `snapshot` (see the header). */
export function scopeSnapshot(snapshot: DashboardSnapshot, viewer: DashboardViewer): DashboardSnapshot {
  if (viewer.kind === 'all') {
    return snapshot.recentTasks.length <= VIEW_RECENT_TASKS
      ? snapshot
      : { ...snapshot, recentTasks: snapshot.recentTasks.slice(0, VIEW_RECENT_TASKS) };
  }
  const own = (entry: { readonly client?: string | undefined }): boolean =>
    entry.client !== undefined && entry.client !== '' && entry.client === viewer.client;
  return {
    ...snapshot,
    recentTasks: snapshot.recentTasks.filter(own).slice(0, VIEW_RECENT_TASKS),
    backfills: snapshot.backfills.filter(own),
    ...(snapshot.followJobs === undefined ? {} : { followJobs: [] }),
  };
}
