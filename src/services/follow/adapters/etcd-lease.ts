// A job's lease in etcd (docs/follow.md § One runner per job; the key in docs/architecture.md § etcd keys):
// the key `/blockx/_jobs/leases/<jobId>`, put under an etcd lease of the runner's own only if the key
// does not exist (a transaction comparing its create revision with 0), so of any number of runners one
// creates it and the others read who did. The holder renews its etcd lease with a keepalive every third of
// the TTL; etcd deletes the key when the lease expires or is revoked.
//
// The term (fencing token) is the revision at which the key was created: etcd's revisions only grow, so a
// later holder of the job always has a greater term than an earlier one (JobStore.claimTerm).
//
// Losing it: a runner counts its lease alive until the send time of its last answered keepalive plus the
// TTL. etcd started its own countdown no earlier than that send, so the runner gives the lease up (and
// stops) no later than etcd expires it, whatever the network does meanwhile.
import type { Etcd3, Lease } from 'etcd3';
import { DEFAULT_LEASE_TTL_MS } from './storage-lease.js';
import type { JobLease, LeaseHolder, LeaseOutcome } from './job-lease.js';

/** Where job leases live in etcd. `_jobs` is never a valid env name, so no Worker prefix nests with it. */
export const JOB_LEASE_PREFIX = '/blockx/_jobs/leases/';

export const jobLeaseKey = (jobId: string): string => `${JOB_LEASE_PREFIX}${jobId}`;

interface LeaseValue {
  readonly holder: string;
  readonly info: string;
}

export class EtcdJobLease implements JobLease {
  private lease: Lease | undefined;
  private term: number | undefined;
  /** Until when the lease is surely alive in etcd (the last answered keepalive's send time + TTL). */
  private aliveUntilMs = 0;

  readonly jobId: string;
  readonly holder: string;
  readonly ttlMs: number;
  private readonly info: string;
  private readonly clock: () => number;

  constructor(
    private readonly client: Etcd3,
    who: { readonly jobId: string; readonly holder: string; readonly info: string },
    opts: { readonly ttlMs?: number; readonly clock?: () => number } = {},
  ) {
    ({ jobId: this.jobId, holder: this.holder, info: this.info } = who);
    this.ttlMs = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.clock = opts.clock ?? Date.now;
  }

  async acquire(): Promise<LeaseOutcome> {
    return this.lease === undefined ? this.take() : this.renew();
  }

  private async take(): Promise<LeaseOutcome> {
    const key = jobLeaseKey(this.jobId);
    const lease = this.client.lease(Math.max(1, Math.ceil(this.ttlMs / 1000)), { autoKeepAlive: false });
    const sent = this.clock();
    await lease.grant();
    const value: LeaseValue = { holder: this.holder, info: this.info };
    let response;
    try {
      response = await this.client
        .if(key, 'Create', '==', 0)
        .then(lease.put(key).value(JSON.stringify(value)))
        .else(this.client.get(key))
        .commit();
    } catch (err) {
      await lease.revoke().catch(() => {});
      throw err;
    }
    if (response.succeeded) {
      this.lease = lease;
      this.term = Number(response.header.revision);
      this.aliveUntilMs = sent + this.ttlMs;
      return { ok: true, term: this.term };
    }
    await lease.revoke().catch(() => {});
    const kv = response.responses[0]?.response_range?.kvs?.[0];
    return { ok: false, heldBy: await holderOfValue(this.client, kv?.value, kv?.lease, this.clock()) };
  }

  private async renew(): Promise<LeaseOutcome> {
    const lease = this.lease as Lease;
    const sent = this.clock();
    const held: LeaseOutcome = { ok: true, ...(this.term === undefined ? {} : { term: this.term }) };
    let alive: boolean;
    try {
      // Not worth waiting past the moment etcd may have expired it: then it is lost either way.
      const deadline = new Date(Math.max(this.aliveUntilMs, sent + 100));
      alive = Number((await lease.keepaliveOnce({ deadline })).TTL) > 0;
    } catch {
      // Not answered: still ours while etcd cannot have expired it; the next renewal tries again.
      if (this.clock() < this.aliveUntilMs) return held;
      alive = false;
    }
    if (alive) {
      this.aliveUntilMs = sent + this.ttlMs;
      return held;
    }
    this.lease = undefined;
    this.term = undefined;
    const now = await EtcdJobLease.holderOf(this.client, this.jobId).catch(() => undefined);
    return {
      ok: false,
      heldBy: now ?? { holder: '?', info: 'nobody (our etcd lease expired)', untilMs: this.aliveUntilMs },
    };
  }

  async release(): Promise<void> {
    const lease = this.lease;
    this.lease = undefined;
    this.term = undefined;
    // Revoking deletes the key with it (it is bound to the lease), at once rather than at expiry.
    if (lease !== undefined) await lease.revoke();
  }

  static async holderOf(client: Etcd3, jobId: string): Promise<LeaseHolder | undefined> {
    const response = await client.kv.range({ key: Buffer.from(jobLeaseKey(jobId)) });
    const kv = response.kvs[0];
    return kv === undefined ? undefined : holderOfValue(client, kv.value, kv.lease, Date.now());
  }
}

async function holderOfValue(
  client: Etcd3,
  value: Buffer | undefined,
  leaseId: string | undefined,
  now: number,
): Promise<LeaseHolder> {
  let parsed: Partial<LeaseValue> = {};
  try {
    parsed = JSON.parse(String(value ?? '{}')) as Partial<LeaseValue>;
  } catch {
    // Not ours to read: shown as an unknown holder.
  }
  let untilMs = 0;
  if (leaseId !== undefined && leaseId !== '0') {
    const ttl = await client.leaseClient.leaseTimeToLive({ ID: leaseId }).catch(() => undefined);
    if (ttl !== undefined && Number(ttl.TTL) > 0) untilMs = now + Number(ttl.TTL) * 1000;
  }
  return { holder: String(parsed.holder ?? '?'), info: String(parsed.info ?? 'an unknown runner'), untilMs };
}
