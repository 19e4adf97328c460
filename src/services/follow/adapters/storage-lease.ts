// Who runs a job: a lease row in the job's storage database (docs/follow.md § One runner per job). Taken
// and renewed by compare-and-set: in one transaction, delete the row exactly as it was read (holder and
// expiry) and insert ours. PostgreSQL serialises the two statements of competing transactions with the
// table's advisory lock that a predicate delete takes (src/services/storage/write-locks.ts), SQLite with
// BEGIN IMMEDIATE; so of two runners that read the same row, one deletes it and the other deletes
// nothing and backs off. Expiry is wall-clock time of the machines involved: keep their clocks in sync
// to well within the lease's TTL.
import type { StorageBackend } from '../../storage/types.js';
import type { JobLease, LeaseHolder, LeaseOutcome } from './job-lease.js';
import { JOB_LEASES_TABLE } from './job-tables.js';

/** Default lease TTL: a runner that dies frees the job after at most this long. */
export const DEFAULT_LEASE_TTL_MS = 15_000;

/** The table was not as read: someone else changed it in between. */
class LeaseRace extends Error {}

export class StorageLease implements JobLease {
  constructor(
    private readonly backend: StorageBackend,
    readonly jobId: string,
    readonly holder: string,
    private readonly info: string,
    readonly ttlMs: number = DEFAULT_LEASE_TTL_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Takes the lease, or renews ours; tells who holds it when another live runner does. */
  async acquire(): Promise<LeaseOutcome> {
    for (let tries = 0; tries < 3; tries++) {
      const row = await this.backend.get(JOB_LEASES_TABLE, { job_id: this.jobId });
      const now = this.clock();
      if (row !== undefined && row.holder !== this.holder && Number(row.lease_until_ms) > now) {
        return { ok: false, heldBy: holderOf(row) };
      }
      try {
        await this.backend.transaction(async (tx) => {
          const where =
            row === undefined
              ? { job_id: this.jobId }
              : { job_id: this.jobId, holder: row.holder, lease_until_ms: row.lease_until_ms };
          const deleted = await tx.deleteWhere(JOB_LEASES_TABLE, where);
          if (deleted !== (row === undefined ? 0 : 1)) throw new LeaseRace();
          await tx.insertRows(JOB_LEASES_TABLE, [
            {
              job_id: this.jobId,
              holder: this.holder,
              holder_info: this.info,
              lease_until_ms: now + this.ttlMs,
            },
          ]);
        });
        return { ok: true };
      } catch (err) {
        if (!(err instanceof LeaseRace)) throw err;
      }
    }
    const row = await this.backend.get(JOB_LEASES_TABLE, { job_id: this.jobId });
    return row === undefined
      ? { ok: false, heldBy: { holder: '?', info: 'a runner that keeps changing the lease', untilMs: 0 } }
      : { ok: false, heldBy: holderOf(row) };
  }

  /** Frees the lease if it is still ours. */
  async release(): Promise<void> {
    await this.backend.transaction((tx) =>
      tx.deleteWhere(JOB_LEASES_TABLE, { job_id: this.jobId, holder: this.holder }),
    );
  }

  /** Who holds the job's lease now (undefined: nobody, or it expired). */
  static async holderOf(
    backend: StorageBackend,
    jobId: string,
    now: number,
  ): Promise<LeaseHolder | undefined> {
    const row = await backend.get(JOB_LEASES_TABLE, { job_id: jobId });
    return row === undefined || Number(row.lease_until_ms) <= now ? undefined : holderOf(row);
  }
}

function holderOf(row: Record<string, unknown>): LeaseHolder {
  return { holder: String(row.holder), info: String(row.holder_info), untilMs: Number(row.lease_until_ms) };
}
