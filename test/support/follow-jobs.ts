// What the follow tests share (docs/follow.md): a follow job as a dashboard shows it, polled until it
// reaches the state a step waits for, and a final block of a SQLite chain given another hash (a reorg
// deeper than finality, which stops every run of the job).
import Database from 'better-sqlite3';
import type { DashboardSnapshot, FollowJobView } from '../../src/contracts/dashboard.js';
import { eventually } from './eventually.js';

/**
 * The follow job `jobId` (or the only one) of the dashboard snapshot at `snapshotUrl` (`…/api/snapshot`),
 * once `check` accepts it; fails naming what the dashboard last showed.
 */
export async function dashboardFollowJob(
  snapshotUrl: string,
  check: (job: FollowJobView) => boolean,
  opts: { readonly jobId?: string; readonly timeoutMs: number },
): Promise<FollowJobView> {
  return eventually(
    async () => {
      const jobs = ((await (await fetch(snapshotUrl)).json()) as DashboardSnapshot).followJobs ?? [];
      const job = opts.jobId === undefined ? jobs[0] : jobs.find((j) => j.jobId === opts.jobId);
      if (job === undefined || !check(job)) throw new Error(`the dashboard shows ${JSON.stringify(jobs)}`);
      return job;
    },
    { timeoutMs: opts.timeoutMs, intervalMs: 250, message: 'the follow job on the dashboard' },
  );
}

/** Gives the canonical block `number` of chain 1 in the SQLite file `dbFile` the hash `hash`. */
export function rehashCanonicalBlock(dbFile: string, number: number, hash: string): void {
  const db = new Database(dbFile);
  try {
    db.prepare('UPDATE blocks SET hash = ? WHERE chain_id = 1 AND number = ? AND canonical = 1').run(
      hash,
      number,
    );
  } finally {
    db.close();
  }
}
