// The tables a job keeps its state in, inside the storage database its outputs go to (docs/follow.md
// § Where a job's state lives). Declared here, not in the user's config: `JobStore.open` creates them
// (and nothing else) on first use. Names start with `blockx_` so they never meet a user's table.
import { JOB_TERMS_TABLE } from '../../../contracts/write-fence.js';
import type { ColumnConfig, TableConfig } from '../../../kernel/config-types.js';

const col = (type: ColumnConfig['type'], nullable = false): ColumnConfig => ({ type, nullable });

export const JOBS_TABLE = 'blockx_jobs';
export const JOB_BLOCKS_TABLE = 'blockx_job_blocks';
export const JOB_LEASES_TABLE = 'blockx_job_leases';
export const JOB_STOPS_TABLE = 'blockx_job_stops';
export const JOB_REORGS_TABLE = 'blockx_job_reorgs';
/** Its name is a contract (src/contracts/write-fence.ts): the storage backends check fenced writes in it. */
export { JOB_TERMS_TABLE };

export const JOB_TABLES: Readonly<Record<string, TableConfig>> = Object.freeze({
  /** One row per job: what it runs and where it is. Written only by the lease holder. */
  [JOBS_TABLE]: {
    columns: {
      job_id: col('text'),
      kind: col('text'),
      /** JSON: the template, first block, chain, storage (masked), finality, poll interval. */
      spec: col('text'),
      state: col('text'),
      /** Every height below it is final and its output applied. */
      cursor: col('bigint'),
      /** The final block just below the cursor (null: none seen yet). */
      final_hash: col('text', true),
      head: col('bigint', true),
      reorgs: col('bigint'),
      deepest_reorg: col('bigint'),
      last_error: col('text', true),
      updated_ms: col('bigint'),
    },
    primaryKey: ['job_id'],
    writable: false,
  },
  /** Per job, per height at or above the cursor: the block hash its output was computed on. */
  [JOB_BLOCKS_TABLE]: {
    columns: { job_id: col('text'), height: col('bigint'), hash: col('text') },
    primaryKey: ['job_id', 'height'],
    blockColumn: 'height',
    writable: false,
  },
  /** Who runs a job now: one row per job, taken and renewed by compare-and-set (./storage-lease.ts). */
  [JOB_LEASES_TABLE]: {
    columns: {
      job_id: col('text'),
      holder: col('text'),
      holder_info: col('text'),
      lease_until_ms: col('bigint'),
    },
    primaryKey: ['job_id'],
    writable: false,
  },
  /**
   * A stop asked for by `blockx jobs stop` (a row apart from the job's, which only its runner writes, so
   * the runner's next update cannot overwrite the request). The runner removes it when it stops.
   */
  [JOB_STOPS_TABLE]: {
    columns: { job_id: col('text'), requested_ms: col('bigint') },
    primaryKey: ['job_id'],
    writable: false,
  },
  /** The last reorg a job's runners saw (one row per job, replaced at each reorg), for the dashboard. */
  [JOB_REORGS_TABLE]: {
    columns: {
      job_id: col('text'),
      at_ms: col('bigint'),
      ancestor: col('bigint'),
      depth: col('bigint'),
      old_tip: col('text'),
      new_tip: col('text', true),
    },
    primaryKey: ['job_id'],
    writable: false,
  },
  /**
   * The term (fencing token) of the job's newest lease holder. Every write of the job's state checks it in
   * its own transaction, so a runner that lost its lease without knowing writes nothing (./job-store.ts),
   * and so does every write of the job's tasks (StorageTransaction.checkFence).
   */
  [JOB_TERMS_TABLE]: {
    columns: { job_id: col('text'), term: col('bigint') },
    primaryKey: ['job_id'],
    writable: false,
  },
});
