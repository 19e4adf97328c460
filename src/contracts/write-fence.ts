// A write fence (docs/follow.md § Fencing): the job a write is for and the term of the runner that asked
// for it. A fenced write checks, in the transaction that writes, that the term is still the job's newest
// (the row of `blockx_job_terms`), and commits nothing otherwise. The follow service claims terms in that
// table; the storage backends check them; the block writers carry the fence in their config. Pure data.

/** The table of the newest term of each job: `(job_id text primary key, term bigint)`. */
export const JOB_TERMS_TABLE = 'blockx_job_terms';

/** The code a fenced write fails with (StorageErrorCode.FENCED), as a task's writer reports it. */
export const FENCED_CODE = 'FENCED';

/** A job id and the term its runner holds; a write fenced by it commits only while the term is the newest. */
export interface WriteFence {
  readonly jobId: string;
  readonly term: number;
}
