// A job's state in the storage database its outputs go to (docs/follow.md § Where a job's state lives):
// the job row (what it runs, cursor, the final hash below it, head, reorgs, last error), the hash each
// height at or above the cursor was computed on, stop requests, and leases. Any machine that reaches the
// database resumes the job where it is; nothing of it lives in a local folder.
import type { WriteFence } from '../../../contracts/write-fence.js';
import type { BlockxConfig, TableConfig } from '../../../kernel/config-types.js';
import { StorageError, StorageErrorCode } from '../../storage/errors.js';
import { openStorage } from '../../storage/open-storage.js';
import type { Row, StorageBackend, StorageTransaction } from '../../storage/types.js';
import { JobFencedError } from '../core/errors.js';
import type { FollowReorgView } from '../../../contracts/follow-job.js';
import {
  JOB_BLOCKS_TABLE,
  JOB_REORGS_TABLE,
  JOB_STOPS_TABLE,
  JOB_TABLES,
  JOB_TERMS_TABLE,
  JOBS_TABLE,
} from './job-tables.js';

export type JobState = 'running' | 'stopped' | 'failed';

/**
 * What a follow job runs; stored as JSON in the job row, shown by `blockx jobs show`. `follow`: `blockx
 * backfill --follow` (template: the task template); `ingest`: `blockx ingest --follow` (template: the
 * ingestion writer's config, its URLs masked; docs/ingest.md § Following the head).
 */
export interface FollowJobSpec {
  readonly kind: 'follow' | 'ingest';
  readonly template: unknown;
  readonly from: number;
  readonly chainId: number;
  readonly blocksTable: string;
  /** The storage URL, password masked. */
  readonly storage: string;
  readonly finality: number;
  readonly pollIntervalMs: number;
}

export interface JobRecord {
  readonly jobId: string;
  readonly kind: string;
  readonly spec: FollowJobSpec;
  readonly state: JobState;
  readonly cursor: number;
  readonly finalHash: string | null;
  readonly head: number | null;
  readonly reorgs: number;
  readonly deepestReorg: number;
  readonly lastError: string | null;
  readonly updatedMs: number;
}

export type JobPatch = Partial<
  Pick<JobRecord, 'state' | 'cursor' | 'finalHash' | 'head' | 'reorgs' | 'deepestReorg' | 'lastError'>
>;

/** The table was not as read: another runner changed it in between. */
class TermRace extends Error {}

export class JobStore {
  /** The job this store writes for as its lease holder, and the term it claimed (claimTerm). */
  private fence: WriteFence | undefined;

  private constructor(
    readonly backend: StorageBackend,
    private readonly clock: () => number,
  ) {}

  /** Opens the job tables in the configured storage, creating them the first time. */
  static async open(
    storage: BlockxConfig['storage'],
    baseDir: string,
    clock: () => number = Date.now,
  ): Promise<JobStore> {
    const backend = await openStorage(storage, JOB_TABLES, { baseDir });
    try {
      await backend.migrate();
    } catch (err) {
      await backend.close();
      throw err;
    }
    return new JobStore(backend, clock);
  }

  /** The job tables of the configured storage if they are there (a reader: creates nothing), else undefined. */
  static async openExisting(
    storage: BlockxConfig['storage'],
    baseDir: string,
    clock: () => number = Date.now,
  ): Promise<JobStore | undefined> {
    const backend = await openStorage(
      storage,
      { [JOBS_TABLE]: JOB_TABLES[JOBS_TABLE] as TableConfig },
      {
        baseDir,
      },
    );
    try {
      await backend.migrate({ checkOnly: true });
    } catch {
      await backend.close();
      return undefined;
    }
    await backend.close();
    return JobStore.open(storage, baseDir, clock);
  }

  close(): Promise<void> {
    return this.backend.close();
  }

  async get(jobId: string): Promise<JobRecord | undefined> {
    const row = await this.backend.get(JOBS_TABLE, { job_id: jobId });
    return row === undefined ? undefined : recordOf(row);
  }

  /** Every job, by id. */
  async list(): Promise<JobRecord[]> {
    const out: JobRecord[] = [];
    for await (const page of this.backend.scan(JOBS_TABLE)) for (const row of page) out.push(recordOf(row));
    return out;
  }

  /** The job's row, made (cursor at `spec.from`) if it has none. Call it holding the job's lease. */
  async ensure(jobId: string, spec: FollowJobSpec): Promise<JobRecord> {
    const found = await this.get(jobId);
    if (found !== undefined) return found;
    const record: JobRecord = {
      jobId,
      kind: spec.kind,
      spec,
      state: 'running',
      cursor: spec.from,
      finalHash: null,
      head: null,
      reorgs: 0,
      deepestReorg: 0,
      lastError: null,
      updatedMs: this.clock(),
    };
    await this.backend.transaction((tx) => tx.insertRows(JOBS_TABLE, [rowOf(record)]));
    return record;
  }

  /**
   * Makes `term` the job's newest term (the etcd lease's; without one, the stored term + 1), so that from
   * now on this store's writes for the job commit only while no runner has claimed a newer one. Call it
   * right after taking the lease. Throws JobFencedError when a newer term is stored already.
   */
  async claimTerm(jobId: string, term?: number): Promise<number> {
    for (let tries = 0; tries < 3; tries++) {
      const row = await this.backend.get(JOB_TERMS_TABLE, { job_id: jobId });
      const stored = row === undefined ? 0 : Number(row.term);
      const ours = term ?? stored + 1;
      if (stored > ours) throw new JobFencedError(jobId, ours, stored);
      try {
        await this.backend.transaction(async (tx) => {
          const where = row === undefined ? { job_id: jobId } : { job_id: jobId, term: stored };
          if ((await tx.deleteWhere(JOB_TERMS_TABLE, where)) !== (row === undefined ? 0 : 1)) {
            throw new TermRace();
          }
          await tx.insertRows(JOB_TERMS_TABLE, [{ job_id: jobId, term: ours }]);
        });
        this.fence = { jobId, term: ours };
        return ours;
      } catch (err) {
        if (!(err instanceof TermRace)) throw err;
      }
    }
    throw new JobFencedError(jobId, term ?? 0);
  }

  /**
   * Runs `write` in one transaction that first checks the job's stored term is still ours (when this store
   * claimed one for the job), the check every fenced write makes (StorageTransaction.checkFence): a claim
   * of a newer term waits for the write or comes first and makes it fail. A refused write commits nothing.
   */
  private async write(jobId: string, write: (tx: StorageTransaction) => Promise<unknown>): Promise<void> {
    const fence = this.fence?.jobId === jobId ? this.fence : undefined;
    try {
      await this.backend.transaction(async (tx) => {
        if (fence !== undefined) await tx.checkFence(fence);
        await write(tx);
      });
    } catch (err) {
      if (fence !== undefined && err instanceof StorageError && err.code === StorageErrorCode.FENCED) {
        throw new JobFencedError(jobId, fence.term);
      }
      throw err;
    }
  }

  /** Changes the job row (the lease holder is its only writer). */
  async update(jobId: string, patch: JobPatch): Promise<JobRecord> {
    const current = await this.get(jobId);
    if (current === undefined) throw new Error(`job ${jobId} has no row to update`);
    const next = { ...current, ...patch, updatedMs: this.clock() };
    await this.write(jobId, (tx) => tx.insertRows(JOBS_TABLE, [rowOf(next)]));
    return next;
  }

  /** Height → the hash its output was computed on ('' while a run is in flight), for heights ≥ cursor. */
  async applied(jobId: string): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for await (const page of this.backend.scan(JOB_BLOCKS_TABLE, { where: { job_id: jobId } })) {
      for (const row of page) out.set(Number(row.height), String(row.hash));
    }
    return out;
  }

  /** Records `hash` as what `height`'s output was computed on; null: it has no output. */
  async setApplied(jobId: string, height: number, hash: string | null): Promise<void> {
    await this.write(jobId, async (tx) => {
      if (hash === null) await tx.delete(JOB_BLOCKS_TABLE, { job_id: jobId, height });
      else await tx.insertRows(JOB_BLOCKS_TABLE, [{ job_id: jobId, height, hash }]);
    });
  }

  /** Moves the cursor and forgets the applied hashes below it, in one transaction. */
  async setFinal(
    jobId: string,
    cursor: number,
    finalHash: string | null,
    patch: JobPatch = {},
  ): Promise<void> {
    const current = await this.get(jobId);
    if (current === undefined) throw new Error(`job ${jobId} has no row to update`);
    const next = { ...current, ...patch, cursor, finalHash, updatedMs: this.clock() };
    await this.write(jobId, async (tx) => {
      await tx.insertRows(JOBS_TABLE, [rowOf(next)]);
      if (cursor > 0) await tx.deleteWhere(JOB_BLOCKS_TABLE, { job_id: jobId }, { from: 0, to: cursor - 1 });
    });
  }

  /** Records `reorg` as the job's last one (fenced like every write of the job's state). */
  async recordReorg(jobId: string, reorg: FollowReorgView): Promise<void> {
    const row = {
      job_id: jobId,
      at_ms: reorg.atMs,
      ancestor: reorg.ancestor,
      depth: reorg.depth,
      old_tip: reorg.oldTip,
      new_tip: reorg.newTip,
    };
    await this.write(jobId, (tx) => tx.insertRows(JOB_REORGS_TABLE, [row]));
  }

  /** The last reorg recorded for the job, if any. */
  async lastReorg(jobId: string): Promise<FollowReorgView | null> {
    const row = await this.backend.get(JOB_REORGS_TABLE, { job_id: jobId });
    if (row === undefined) return null;
    return {
      atMs: Number(row.at_ms),
      ancestor: Number(row.ancestor),
      depth: Number(row.depth),
      oldTip: String(row.old_tip),
      newTip: row.new_tip === null || row.new_tip === undefined ? null : String(row.new_tip),
    };
  }

  /** The job's newest term (its newest runner's), null before any runner claimed one. */
  async term(jobId: string): Promise<number | null> {
    const row = await this.backend.get(JOB_TERMS_TABLE, { job_id: jobId });
    return row === undefined ? null : Number(row.term);
  }

  async requestStop(jobId: string): Promise<void> {
    await this.backend.transaction((tx) =>
      tx.insertRows(JOB_STOPS_TABLE, [{ job_id: jobId, requested_ms: this.clock() }]),
    );
  }

  async stopRequested(jobId: string): Promise<boolean> {
    return (await this.backend.get(JOB_STOPS_TABLE, { job_id: jobId })) !== undefined;
  }

  async clearStop(jobId: string): Promise<void> {
    await this.backend.transaction((tx) => tx.delete(JOB_STOPS_TABLE, { job_id: jobId }));
  }
}

function rowOf(r: JobRecord): Row {
  return {
    job_id: r.jobId,
    kind: r.kind,
    spec: JSON.stringify(r.spec),
    state: r.state,
    cursor: r.cursor,
    final_hash: r.finalHash,
    head: r.head,
    reorgs: r.reorgs,
    deepest_reorg: r.deepestReorg,
    last_error: r.lastError,
    updated_ms: r.updatedMs,
  };
}

function recordOf(row: Row): JobRecord {
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  return {
    jobId: String(row.job_id),
    kind: String(row.kind),
    spec: JSON.parse(String(row.spec)) as FollowJobSpec,
    state: String(row.state) as JobState,
    cursor: Number(row.cursor),
    finalHash: row.final_hash === null || row.final_hash === undefined ? null : String(row.final_hash),
    head: num(row.head),
    reorgs: Number(row.reorgs),
    deepestReorg: Number(row.deepest_reorg),
    lastError: row.last_error === null || row.last_error === undefined ? null : String(row.last_error),
    updatedMs: Number(row.updated_ms),
  };
}

/** A follower's reorg event as the job records it (both followers' events carry these fields). */
export function reorgView(
  e: {
    readonly ancestor: number;
    readonly depth: number;
    readonly oldTip: string;
    readonly newTip: string | null;
  },
  atMs: number,
): FollowReorgView {
  return { atMs, ancestor: e.ancestor, depth: e.depth, oldTip: e.oldTip, newTip: e.newTip };
}
