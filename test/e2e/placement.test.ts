// Placement on real processes (docs/placement.md): a real etcd, `blockx coordinator` and three
// `blockx worker` per cluster (test/support/cluster.ts).
//   - A burst of 64 concurrent ReserveWorkerSlot calls against 3 idle Workers spreads over all three:
//     the Coordinator counts its own reservations between heartbeats.
//   - A task id sent twice (0-600 ms apart) runs on one Worker, under the default `capacity` placement
//     (1,000 ids) and under `affinity` (bench/double-run.ts prints the full table).
// The ids go IN_FLIGHT at a time: each lane spends most of its time in the 0-600 ms gap (about 330 ms an
// id), so the case's length is about ids / IN_FLIGHT x 0.33 s; more lanes check the same ids sooner, with
// more duplicates racing at once (issue 27: 16 lanes took 21 s for the 1,000 ids).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureDoubleRuns, placementCluster, reserveBurst } from '../../bench/double-run.js';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import type { TestCluster } from '../support/cluster.js';

/** Task ids in flight at once (a timing knob: the ids, their gaps and the checks are the same). */
const IN_FLIGHT = { capacity: 32, affinity: 16 } as const;

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

  it('the default placement: 1,000 task ids each sent twice 0-600 ms apart, none runs on two workers', async () => {
    // The Coordinator sends an id back to the Worker it placed it on (docs/placement.md § One execution
    // per task id), which answers the duplicate from its task table.
    const c = await measureDoubleRuns(capacity!, {
      tasks: 1_000,
      maxGapMs: 600,
      inFlight: IN_FLIGHT.capacity,
      label: 'cap',
    });
    console.log(
      `double runs (capacity): ${c.doubleRuns}/${c.tasks} in ${c.seconds} s, failed runs ${c.failedRuns}`,
    );
    expect(c.failedRuns).toBe(0);
    expect(c.doubleRuns).toBe(0);
  }, 240_000);

  it('affinity: the same, on a smaller load', async () => {
    await capacity!.stop();
    affinity = await placementCluster('affinity', etcd);
    const a = await measureDoubleRuns(affinity, {
      tasks: 200,
      maxGapMs: 600,
      inFlight: IN_FLIGHT.affinity,
      label: 'aff',
    });
    console.log(
      `double runs (affinity): ${a.doubleRuns}/${a.tasks} in ${a.seconds} s, failed runs ${a.failedRuns}`,
    );
    expect(a.failedRuns).toBe(0);
    expect(a.doubleRuns).toBe(0);
  }, 240_000);
});
