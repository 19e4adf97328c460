// A job's lease in etcd (docs/follow.md § One runner per job) against a real etcd: of many runners that
// try to take one job at once, each with a client of its own, exactly one gets it, with a term, and the
// others are told who holds it; the holder renews; a released lease is free and the next holder's term
// is greater; a holder that stops renewing loses the job when etcd expires its lease, and then hears so.
import type { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEtcdClient } from '../../src/services/registry/etcd-client.js';
import type { FollowJobView } from '../../src/contracts/dashboard.js';
import { EtcdJobLease, jobLeaseKey } from '../../src/services/follow/adapters/etcd-lease.js';
import {
  jobStatusKey,
  putJobStatus,
  readJobStatusesFromEtcd,
} from '../../src/services/follow/adapters/etcd-job-status.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';

const RUNNERS = 8;
let etcd: EtcdServer;
const clients: Etcd3[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
}, 60_000);
afterAll(async () => {
  for (const c of clients) c.close();
  await etcd?.stop();
});

const client = (): Etcd3 => {
  const c = createEtcdClient({ endpoints: [etcd.endpoint] });
  clients.push(c);
  return c;
};

describe('EtcdJobLease', () => {
  it(`of ${RUNNERS} runners taking one job at once, exactly one holds it; a released one goes to the next with a greater term`, async () => {
    const leases = Array.from(
      { length: RUNNERS },
      (_, i) =>
        new EtcdJobLease(
          client(),
          { jobId: 'fl-e', holder: `r${i}`, info: `runner ${i}` },
          { ttlMs: 10_000 },
        ),
    );
    const outcomes = await Promise.all(leases.map((l) => l.acquire()));
    const winners = outcomes.flatMap((o, i) => (o.ok ? [i] : []));
    expect(winners).toHaveLength(1);
    const winner = winners[0] as number;
    const first = outcomes[winner] as { ok: true; term: number };
    expect(first.term).toBeGreaterThan(0);
    for (const o of outcomes) {
      if (!o.ok) expect(o.heldBy).toMatchObject({ holder: `r${winner}`, info: `runner ${winner}` });
      if (!o.ok) expect(o.heldBy.untilMs).toBeGreaterThan(Date.now());
    }
    expect(await EtcdJobLease.holderOf(clients[0]!, 'fl-e')).toMatchObject({ holder: `r${winner}` });
    // The holder renews, with the same term; nobody else gets it meanwhile.
    expect(await leases[winner]!.acquire()).toEqual({ ok: true, term: first.term });
    const other = (winner + 1) % RUNNERS;
    expect((await leases[other]!.acquire()).ok).toBe(false);
    // Released: the key is gone at once, and the next holder's term is greater.
    await leases[winner]!.release();
    expect(await EtcdJobLease.holderOf(clients[0]!, 'fl-e')).toBeUndefined();
    const next = await leases[other]!.acquire();
    expect(next.ok && next.term !== undefined && next.term > first.term).toBe(true);
    await leases[other]!.release();
  }, 60_000);

  it('a holder that stops renewing loses the job when etcd expires its lease, and hears so at its next renewal', async () => {
    const a = new EtcdJobLease(client(), { jobId: 'fl-x', holder: 'a', info: 'runner a' }, { ttlMs: 1_000 });
    const b = new EtcdJobLease(client(), { jobId: 'fl-x', holder: 'b', info: 'runner b' }, { ttlMs: 1_000 });
    const took = await a.acquire();
    expect(took.ok).toBe(true);
    expect(await b.acquire()).toMatchObject({ ok: false, heldBy: { holder: 'a' } });
    // a stops renewing: etcd deletes the key within the TTL (1 s) and a bit of its own lag.
    const deadline = Date.now() + 10_000;
    let got = await b.acquire();
    while (!got.ok && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      got = await b.acquire();
    }
    expect(got.ok).toBe(true);
    expect((got as { term: number }).term).toBeGreaterThan((took as { term: number }).term);
    expect(await a.acquire()).toMatchObject({ ok: false, heldBy: { holder: 'b', info: 'runner b' } });
    const value = await clients[0]!.get(jobLeaseKey('fl-x')).string();
    expect(JSON.parse(value ?? '{}')).toEqual({ holder: 'b', info: 'runner b' });
    await b.release();
  }, 60_000);
});

describe('job statuses in etcd', () => {
  const view = (jobId: string, over: Partial<FollowJobView> = {}): FollowJobView => ({
    jobId,
    kind: 'follow',
    chainId: 1,
    state: 'running',
    runner: 'host-a pid 1',
    term: 7,
    head: 30,
    finalized: 25,
    lagBlocks: 0,
    lagSeconds: 0,
    reorgs: 1,
    deepestReorg: 3,
    lastReorg: null,
    lastError: null,
    updatedMs: 1_000,
    restarts: 2,
    ...over,
  });

  it("reads each runner's put, running only while its lease key is there, and skips what is not a status", async () => {
    const c = client();
    const lease = new EtcdJobLease(c, { jobId: 'fl-st-live', holder: 'h1', info: 'host-b pid 42' });
    expect((await lease.acquire()).ok).toBe(true);
    try {
      await putJobStatus(c, view('fl-st-live'));
      // A runner that died after its last put: the status says running, no lease key is there.
      await putJobStatus(c, view('fl-st-dead'));
      await putJobStatus(c, view('fl-st-failed', { state: 'failed', runner: null, lastError: 'REORG' }));
      await c.put(jobStatusKey('fl-st-junk')).value('not json');
      await c.put(jobStatusKey('fl-st-other')).value(JSON.stringify(view('fl-st-elsewhere')));
      const read = (await readJobStatusesFromEtcd(c)).filter((j) => j.jobId.startsWith('fl-st-'));
      expect(read.map((j) => [j.jobId, j.state, j.runner])).toEqual([
        ['fl-st-dead', 'stopped', null],
        ['fl-st-failed', 'failed', null],
        // The runner as the lease key names it now.
        ['fl-st-live', 'running', 'host-b pid 42'],
      ]);
      expect(read.find((j) => j.jobId === 'fl-st-live')).toMatchObject({ head: 30, term: 7, restarts: 2 });
    } finally {
      await lease.release();
    }
    // Its lease released, the live job reads as stopped too.
    const after = await readJobStatusesFromEtcd(c);
    expect(after.find((j) => j.jobId === 'fl-st-live')).toMatchObject({ state: 'stopped', runner: null });
  });
});
