// Placement on real processes (docs/placement.md): a real etcd, `blockx coordinator` and three
// `blockx worker` per cluster (test/support/cluster.ts).
//   - A burst of 64 concurrent ReserveWorkerSlot calls against 3 idle Workers spreads over all three:
//     the Coordinator counts its own reservations between heartbeats.
//   - With COORDINATOR_PLACEMENT=affinity, a task id sent twice (0-600 ms apart) runs on one Worker;
//     the same load under `capacity` is measured alongside (bench/double-run.ts prints the full table).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureDoubleRuns, placementCluster, reserveBurst } from '../../bench/double-run.js';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import type { TestCluster } from '../support/cluster.js';

describe('placement (real etcd, real blockx processes)', () => {
  let etcd: EtcdServer;
  // One cluster at a time: eight node processes starting together overload a 2-core box.
  let capacity: TestCluster | undefined;
  let affinity: TestCluster | undefined;

  beforeAll(async () => {
    etcd = await startEtcd();
    capacity = await placementCluster('capacity', etcd);
  }, 90_000);
  afterAll(async () => {
    await capacity?.stop();
    await affinity?.stop();
    await etcd?.stop();
  });

  it('a burst of 64 reservations against 3 idle workers spreads across all three', async () => {
    const cluster = capacity!;
    const got = await reserveBurst(cluster.coordinatorAddr, 64, 'burst');
    const counts = cluster.workers.map((w) => got.filter((a) => a === w.addr).length);
    expect(
      got.filter((a) => a.startsWith('error')),
      cluster.output(),
    ).toEqual([]);
    for (const n of counts) {
      expect(n, `per worker: ${counts.join(' / ')}`).toBeGreaterThanOrEqual(16);
      expect(n, `per worker: ${counts.join(' / ')}`).toBeLessThanOrEqual(26);
    }
  });

  it('affinity: a task id sent twice runs on one worker (under 1 %; capacity measured alongside)', async () => {
    const opts = { tasks: 60, maxGapMs: 600, inFlight: 6 };
    const c = await measureDoubleRuns(capacity!, { ...opts, label: 'cap' });
    await capacity!.stop();
    affinity = await placementCluster('affinity', etcd);
    const a = await measureDoubleRuns(affinity, { ...opts, label: 'aff' });
    console.log(
      `double runs: capacity ${c.doubleRuns}/${c.tasks}, affinity ${a.doubleRuns}/${a.tasks} (failed runs ${c.failedRuns} / ${a.failedRuns})`,
    );
    expect(a.failedRuns + c.failedRuns).toBe(0);
    expect(a.doubleRuns / a.tasks).toBeLessThan(0.01);
    // The problem affinity solves is real under the default policy on the same load.
    expect(c.doubleRuns).toBeGreaterThan(a.doubleRuns);
  }, 240_000);
});
