// What one dashboard viewer may see of a snapshot (src/services/dashboard/core/viewer-scope.ts): a table
// of viewers against one snapshot holding two clients' tasks and jobs, one task of nobody's, and a
// follow job; and the bound on tasks per view.
import { describe, expect, it } from 'vitest';
import {
  ALL_VIEWER,
  scopeSnapshot,
  VIEW_RECENT_TASKS,
  viewerKey,
  type DashboardViewer,
} from '../../../../src/services/dashboard/core/viewer-scope.js';
import { backfillJob, followJob, snapshotAt, task } from './fakes.js';

const snapshot = snapshotAt(5_000, {
  recentTasks: [
    task('a1', { client: 'alice' }),
    task('m1', { client: 'mallory' }),
    task('n1'),
    task('e1', { client: '' }),
    task('a2', { client: 'alice' }),
  ],
  backfills: [
    backfillJob('ja', { client: 'alice' }),
    backfillJob('jm', { client: 'mallory' }),
    backfillJob('jn'),
  ],
  followJobs: [followJob('f1')],
});

describe('scopeSnapshot', () => {
  it.each<[string, DashboardViewer, string[], string[], number]>([
    ['a viewer that sees all', ALL_VIEWER, ['a1', 'm1', 'n1', 'e1', 'a2'], ['ja', 'jm', 'jn'], 1],
    ['alice', { kind: 'own', client: 'alice' }, ['a1', 'a2'], ['ja'], 0],
    ['mallory', { kind: 'own', client: 'mallory' }, ['m1'], ['jm'], 0],
    ['a client with nothing', { kind: 'own', client: 'carol' }, [], [], 0],
    // An empty identity never matches tasks whose submitter is unknown.
    ['the empty identity', { kind: 'own', client: '' }, [], [], 0],
  ])('%s', (_name, viewer, tasks, jobs, followJobs) => {
    const view = scopeSnapshot(snapshot, viewer);
    expect(view.recentTasks.map((t) => t.taskId)).toEqual(tasks);
    expect(view.backfills.map((j) => j.jobId)).toEqual(jobs);
    expect(view.followJobs).toHaveLength(followJobs);
    // Counts that name no task are the same for everyone.
    expect(view.cluster).toBe(snapshot.cluster);
    expect(view.throughput).toBe(snapshot.throughput);
  });

  it(`carries at most ${VIEW_RECENT_TASKS} tasks, the newest, in every view`, () => {
    const many = snapshotAt(1, {
      recentTasks: Array.from({ length: 3 * VIEW_RECENT_TASKS }, (_, i) =>
        task(`t${i}`, { client: i % 3 === 0 ? 'alice' : 'bob' }),
      ),
    });
    const all = scopeSnapshot(many, ALL_VIEWER).recentTasks;
    expect(all).toHaveLength(VIEW_RECENT_TASKS);
    expect(all[0]?.taskId).toBe('t0');
    const own = scopeSnapshot(many, { kind: 'own', client: 'alice' }).recentTasks;
    expect(own).toHaveLength(VIEW_RECENT_TASKS);
    expect(own.every((t) => t.client === 'alice')).toBe(true);
    expect(own.at(-1)?.taskId).toBe(`t${3 * (VIEW_RECENT_TASKS - 1)}`);
  });

  it('a snapshot without follow jobs stays without them', () => {
    const { followJobs: _f, ...rest } = snapshot;
    expect(scopeSnapshot(rest, { kind: 'own', client: 'alice' })).not.toHaveProperty('followJobs');
  });

  it('views are keyed by what they show', () => {
    expect(viewerKey(ALL_VIEWER)).toBe('all');
    expect(viewerKey({ kind: 'own', client: 'all' })).not.toBe(viewerKey(ALL_VIEWER));
    expect(viewerKey({ kind: 'own', client: 'a' })).not.toBe(viewerKey({ kind: 'own', client: 'b' }));
  });
});
