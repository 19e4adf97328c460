// The snapshot the page receives: bounded lists and strings, the optional code version kept only when
// the view has one, unknown states and non-numbers normalised.
import { describe, expect, it } from 'vitest';
import type { FollowJobView, RecentTaskView } from '../../../../src/contracts/dashboard.js';
import { publicSnapshot, SNAPSHOT_LIMITS } from '../../../../src/services/dashboard/core/public-snapshot.js';
import { followJob, snapshotAt, task, worker } from './fakes.js';

describe('publicSnapshot', () => {
  it('keeps a snapshot within the contract unchanged', () => {
    const s = snapshotAt(5_000);
    expect(publicSnapshot(s)).toEqual(s);
    const withJobs = snapshotAt(5_000, {
      followJobs: [followJob('fl-a'), followJob('fl-b', { term: null })],
    });
    expect(publicSnapshot(withJobs)).toEqual(withJobs);
  });

  it('sends follow jobs bounded, an absent list as none, unknown figures as null, no fields beyond the contract', () => {
    const { followJobs: _none, ...older } = snapshotAt(1);
    expect(publicSnapshot(older).followJobs).toEqual([]);
    const many = Array.from({ length: 300 }, (_, i) => followJob(`fl-${i}`));
    expect(publicSnapshot(snapshotAt(1, { followJobs: many })).followJobs).toHaveLength(
      SNAPSHOT_LIMITS.followJobs,
    );
    const odd = {
      ...followJob('fl-odd', { head: null, lagBlocks: null, lastError: 'e'.repeat(5_000) }),
      lastReorg: 'yesterday',
      secret: 'postgres://user:pw@db',
      restarts: Number.NaN,
    } as unknown as FollowJobView;
    const [out] = publicSnapshot(snapshotAt(1, { followJobs: [odd] })).followJobs ?? [];
    expect(out).toMatchObject({ head: null, lagBlocks: null, lastReorg: null, restarts: 0 });
    expect(out?.lastError?.length).toBe(SNAPSHOT_LIMITS.text + 1);
    expect(out).not.toHaveProperty('secret');
  });

  it('bounds every list (newest tasks and latest throughput points kept) and every string', () => {
    const many = snapshotAt(5_000, {
      recentTasks: Array.from({ length: 500 }, (_, i) => task(`t-${i}`)),
      throughput: Array.from({ length: 1_000 }, (_, i) => ({
        atMs: i,
        bucketMs: 1,
        succeeded: i,
        failed: 0,
      })),
    });
    const long = { ...many, cluster: { ...many.cluster, unavailableReason: 'x'.repeat(10_000) } };
    const out = publicSnapshot(long);
    expect(out.recentTasks).toHaveLength(SNAPSHOT_LIMITS.recentTasks);
    expect(out.recentTasks[0]?.taskId).toBe('t-0');
    expect(out.throughput).toHaveLength(SNAPSHOT_LIMITS.throughputPoints);
    expect(out.throughput.at(-1)?.atMs).toBe(999);
    expect(out.cluster.unavailableReason.length).toBe(SNAPSHOT_LIMITS.text + 1);
    expect(JSON.stringify(out).length).toBeLessThan(JSON.stringify(long).length / 2);
  });

  it('keeps the code version and its error when the view has them, and omits them when it has not', () => {
    const s = snapshotAt(1, {
      cluster: {
        ...snapshotAt(1).cluster,
        workers: [worker('a:1', { codeVersion: 'sha256:ab', codeVersionError: '' }), worker('b:1')],
      },
    });
    const [a, b] = publicSnapshot(s).cluster.workers;
    expect(a).toMatchObject({ codeVersion: 'sha256:ab', codeVersionError: '' });
    expect(b).not.toHaveProperty('codeVersion');
  });

  it('normalises what is not in the contract: unknown states, NaN and non-numbers', () => {
    const odd = {
      ...task('t'),
      state: 'EXPLODED',
      durationMs: Number.NaN,
      startedAtMs: '12',
    } as unknown as RecentTaskView;
    const out = publicSnapshot(snapshotAt(1, { recentTasks: [odd] })).recentTasks[0];
    expect(out).toMatchObject({ state: 'RUNNING', durationMs: 0, startedAtMs: 0 });
  });
});
