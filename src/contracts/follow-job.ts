// Where a follow job is (docs/follow.md § Watching a job): what `blockx status` prints, Prometheus exports
// and the dashboard shows, read from the job's state in the storage database
// (src/services/follow/adapters/job-status.ts). Plain JSON: counts, heights, UTC ms, hashes. Pure types.

/** The last reorg a job's runners recorded. */
export interface FollowReorgView {
  /** When the runner saw it (UTC ms, the runner's clock). */
  readonly atMs: number;
  /** The common ancestor: the highest height both branches share. */
  readonly ancestor: number;
  /** Blocks replaced (or removed) above the ancestor. */
  readonly depth: number;
  readonly oldTip: string;
  /** The new branch's tip; null when the chain got shorter and nothing replaced the old blocks. */
  readonly newTip: string | null;
}

export interface FollowJobStatus {
  readonly jobId: string;
  /** `follow` (backfill --follow) or `ingest` (ingest --follow). */
  readonly kind: string;
  /** The chain it follows (its source: the chain tables of this chain id). */
  readonly chainId: number;
  /** running (a live lease), stopped, failed. */
  readonly state: string;
  /** Who holds the job's lease (host and pid), null when nobody does. */
  readonly runner: string | null;
  /** The fencing term of the job's newest runner (docs/follow.md § Fencing); null before its first run. */
  readonly term: number | null;
  /** The highest canonical block the job has seen, null before its first read. */
  readonly head: number | null;
  /** Blocks at or below it are final: head − finality. */
  readonly finalized: number | null;
  /** Heights from the cursor to the head whose output does not reflect a block yet. */
  readonly lagBlocks: number | null;
  /** Chain time from the newest block the job's output reflects to the head (block timestamps). */
  readonly lagSeconds: number | null;
  readonly reorgs: number;
  readonly deepestReorg: number;
  readonly lastReorg: FollowReorgView | null;
  readonly lastError: string | null;
  readonly updatedMs: number;
}
