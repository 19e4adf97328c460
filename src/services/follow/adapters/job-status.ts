// Where each follow job of a storage database is (docs/follow.md § Watching a job): what `blockx status`
// prints and `blockx up` exports to Prometheus. Read from the job's state (src/services/follow/adapters/
// job-store.ts), its lease, and the chain tables for the blocks' timestamps; nothing is kept in memory, so
// any process that reaches the database sees the same figures.
import type { FollowJobStatus } from '../../../contracts/follow-job.js';
import type { StorageBackend } from '../../storage/types.js';
import { UNKNOWN_HASH } from '../core/follow-core.js';
import type { JobLeases } from './job-lease.js';
import type { JobStore } from './job-store.js';

/** One name for the concept, defined in src/contracts/follow-job.ts (the dashboard shows it too). */
export type JobStatus = FollowJobStatus;

/**
 * Every job of the store (or only `jobId`), with its lag read from the chain tables (`chain`: the configured
 * storage).
 */
export async function readJobStatuses(
  store: JobStore,
  leases: JobLeases,
  chain: StorageBackend | undefined,
  now: number,
  jobId?: string,
): Promise<JobStatus[]> {
  const out: JobStatus[] = [];
  for (const record of await store.list()) {
    if (jobId !== undefined && record.jobId !== jobId) continue;
    const runner = await leases.holderOf(record.jobId, now).catch(() => undefined);
    const applied = await store.applied(record.jobId);
    const { head } = record;
    let lagBlocks: number | null = null;
    let newest = record.cursor - 1;
    if (head !== null) {
      let done = 0;
      for (const [height, hash] of applied) {
        if (height > head || hash === UNKNOWN_HASH) continue;
        done++;
        newest = Math.max(newest, height);
      }
      lagBlocks = Math.max(0, head - record.cursor + 1 - done);
    }
    const blocksTable = record.spec.blocksTable;
    const stamp = async (n: number): Promise<number | undefined> => {
      if (chain === undefined || chain.tables[blocksTable] === undefined || n < 0) return undefined;
      const where = { chain_id: record.spec.chainId, canonical: true };
      for await (const page of chain.scan(blocksTable, { where, blockRange: { from: n, to: n }, limit: 1 })) {
        const ts = page[0]?.timestamp;
        if (ts !== undefined && ts !== null) return Number(ts);
      }
      return undefined;
    };
    let lagSeconds: number | null = null;
    if (head !== null && lagBlocks !== null) {
      if (lagBlocks === 0) lagSeconds = 0;
      else {
        const [h, n] = await Promise.all([stamp(head), stamp(newest)]);
        if (h !== undefined && n !== undefined) lagSeconds = Math.max(0, h - n);
      }
    }
    out.push({
      jobId: record.jobId,
      kind: record.kind,
      chainId: record.spec.chainId,
      state: runner === undefined && record.state === 'running' ? 'stopped' : record.state,
      runner: runner?.info ?? null,
      term: await store.term(record.jobId),
      head,
      finalized: head === null ? null : Math.max(-1, head - record.spec.finality),
      lagBlocks,
      lagSeconds,
      reorgs: record.reorgs,
      deepestReorg: record.deepestReorg,
      lastReorg: await store.lastReorg(record.jobId),
      lastError: record.lastError,
      updatedMs: record.updatedMs,
    });
  }
  return out;
}
