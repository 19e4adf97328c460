// A follow job's state and lease in the storage database (docs/follow.md § Where a job's state lives,
// § One runner per job), on PostgreSQL and on a SQLite file: the job tables are created on first use and
// hold what a resumed runner needs; of many runners that try to take one job's lease at once, each from a
// connection pool of its own (a machine of its own, as far as the database can tell), exactly one gets
// it and the others are told who holds it; an expired lease is taken over, and the old holder then hears
// it lost it.
import { describe, expect, it } from 'vitest';
import { JobStore, type FollowJobSpec } from '../../../src/services/follow/adapters/job-store.js';
import { StorageLease } from '../../../src/services/follow/adapters/storage-lease.js';
import { JobFencedError } from '../../../src/services/follow/core/errors.js';
import { conformanceSettings } from '../../support/storage-conformance.js';
import { testDatabases } from '../io/harness.js';

const dbs = testDatabases('jobs');
const RUNNERS = 8;

const SPEC: FollowJobSpec = {
  kind: 'follow',
  template: { functionCallConfig: { type: 'BlockTableCallConfig', config: {} } },
  from: 1,
  chainId: 1,
  blocksTable: 'blocks',
  storage: 'test',
  finality: 5,
  pollIntervalMs: 1000,
};

// On SQLite the runners share one connection: better-sqlite3 waits for a file lock synchronously, so two
// connections of one process would block the thread the lock holder needs to commit. Separate processes
// (the real case) each have their own; the compare-and-set is what this exercises.
describe.each([
  { name: 'PostgreSQL', make: () => dbs.makePg(), connections: RUNNERS },
  { name: 'SQLite', make: () => dbs.makeSqlite(), connections: 1 },
])('job store and lease on $name', ({ make, connections }) => {
  it('keeps a job row, its applied hashes and the cursor; a new store on the database reads them back', async () => {
    const url = await make();
    const store = await JobStore.open(conformanceSettings(url), process.cwd());
    try {
      await store.ensure('fl-a', SPEC);
      await store.setApplied('fl-a', 1, '0x01');
      await store.setApplied('fl-a', 2, '');
      await store.setApplied('fl-a', 3, '0x03');
      await store.setApplied('fl-a', 3, null);
      await store.setFinal('fl-a', 2, '0x01', { head: 9, reorgs: 1, deepestReorg: 2 });
      await store.requestStop('fl-a');
    } finally {
      await store.close();
    }
    const again = await JobStore.open(conformanceSettings(url), process.cwd());
    try {
      expect(await again.get('fl-a')).toMatchObject({
        jobId: 'fl-a',
        spec: SPEC,
        cursor: 2,
        finalHash: '0x01',
        head: 9,
        reorgs: 1,
        deepestReorg: 2,
      });
      expect([...(await again.applied('fl-a'))]).toEqual([[2, '']]);
      expect(await again.stopRequested('fl-a')).toBe(true);
      await again.clearStop('fl-a');
      expect(await again.stopRequested('fl-a')).toBe(false);
      expect((await again.list()).map((j) => j.jobId)).toEqual(['fl-a']);
    } finally {
      await again.close();
    }
  });

  it(`of ${RUNNERS} runners taking one job at once, exactly one holds it; an expired lease is taken over`, async () => {
    const url = await make();
    const stores = await Promise.all(
      Array.from({ length: connections }, () => JobStore.open(conformanceSettings(url), process.cwd())),
    );
    let now = 1_000_000;
    const clock = () => now;
    try {
      const leases = Array.from(
        { length: RUNNERS },
        (_, i) =>
          new StorageLease(stores[i % connections]!.backend, 'fl-x', `r${i}`, `runner ${i}`, 10_000, clock),
      );
      const outcomes = await Promise.all(leases.map((l) => l.acquire()));
      const winners = outcomes.flatMap((o, i) => (o.ok ? [i] : []));
      expect(winners).toHaveLength(1);
      const winner = winners[0] as number;
      for (const o of outcomes) {
        if (!o.ok) expect(o.heldBy).toMatchObject({ holder: `r${winner}`, info: `runner ${winner}` });
      }
      // The holder renews; nobody else gets it while it is live.
      expect(await leases[winner]?.acquire()).toEqual({ ok: true });
      const other = (winner + 1) % RUNNERS;
      expect((await leases[other]?.acquire())?.ok).toBe(false);
      // Expired (the holder stopped renewing): another runner takes it, and the old holder lost it.
      now += 10_001;
      expect(await leases[other]?.acquire()).toEqual({ ok: true });
      expect(await leases[winner]?.acquire()).toMatchObject({ ok: false, heldBy: { holder: `r${other}` } });
      // Released: free for anyone.
      await leases[other]?.release();
      expect(await StorageLease.holderOf(stores[0]!.backend, 'fl-x', now)).toBeUndefined();
      expect(await leases[winner]?.acquire()).toEqual({ ok: true });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it('fences the job state: once a newer runner claims a term, the old one’s writes commit nothing', async () => {
    const url = await make();
    // One after the other: two first-use migrations of one SQLite file at once would meet its lock.
    const oldRunner = await JobStore.open(conformanceSettings(url), process.cwd());
    const newRunner = await JobStore.open(conformanceSettings(url), process.cwd());
    try {
      await oldRunner.ensure('fl-f', SPEC);
      // Storage leases have no term of their own: each claim takes the stored one + 1.
      expect(await oldRunner.claimTerm('fl-f')).toBe(1);
      await oldRunner.setApplied('fl-f', 1, '0xold');
      expect(await newRunner.claimTerm('fl-f')).toBe(2);
      await expect(oldRunner.setApplied('fl-f', 1, '0xstale')).rejects.toBeInstanceOf(JobFencedError);
      await expect(oldRunner.setFinal('fl-f', 5, '0xstale')).rejects.toBeInstanceOf(JobFencedError);
      await expect(oldRunner.update('fl-f', { lastError: 'stale' })).rejects.toBeInstanceOf(JobFencedError);
      // An etcd term lower than the stored one is refused too.
      await expect(oldRunner.claimTerm('fl-f', 1)).rejects.toMatchObject({
        code: 'JOB_FENCED',
        newerTerm: 2,
      });
      expect([...(await newRunner.applied('fl-f'))]).toEqual([[1, '0xold']]);
      expect(await newRunner.get('fl-f')).toMatchObject({ cursor: 1, lastError: null });
      await newRunner.setApplied('fl-f', 1, '0xnew');
      expect([...(await newRunner.applied('fl-f'))]).toEqual([[1, '0xnew']]);
      // A greater (etcd) term takes over as well.
      expect(await oldRunner.claimTerm('fl-f', 40)).toBe(40);
      await expect(newRunner.setApplied('fl-f', 1, '0xlate')).rejects.toBeInstanceOf(JobFencedError);
    } finally {
      await Promise.all([oldRunner.close(), newRunner.close()]);
    }
  });
});
