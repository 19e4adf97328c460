// The follow jobs as Prometheus samples (docs/follow.md § Watching a job), read from the job state at
// each scrape (readJobStatuses), so they say what `blockx status` says. One series per job, labelled with
// its id and chain; a value the job does not know yet (no head read) is left out.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { JobStatus } from './job-status.js';

const LABELS = ['job_id', 'chain_id'] as const;

/** Registers the follow metrics on `registry`; `read` is called once per scrape. */
export function registerFollowMetrics(registry: Registry, read: () => Promise<readonly JobStatus[]>): void {
  // One read serves every metric of a scrape: the first collect() starts it, the others share it.
  let pending: Promise<readonly JobStatus[]> | undefined;
  const statuses = (): Promise<readonly JobStatus[]> => {
    pending ??= read()
      .catch(() => [] as JobStatus[])
      .finally(() => setImmediate(() => (pending = undefined)));
    return pending;
  };
  const gauge = (name: string, help: string, value: (j: JobStatus) => number | null): void => {
    new Gauge({
      name,
      help,
      labelNames: LABELS,
      registers: [registry],
      async collect() {
        this.reset();
        for (const j of await statuses()) {
          const v = value(j);
          if (v !== null) this.set({ job_id: j.jobId, chain_id: String(j.chainId) }, v);
        }
      },
    });
  };
  gauge('blockx_follow_head_block', 'The highest canonical block the job has seen.', (j) => j.head);
  gauge(
    'blockx_follow_finalized_block',
    'Blocks at or below it are final (head − finality).',
    (j) => j.finalized,
  );
  gauge(
    'blockx_follow_lag_blocks',
    'Heights up to the head whose output does not reflect a block yet.',
    (j) => j.lagBlocks,
  );
  gauge(
    'blockx_follow_lag_seconds',
    'Chain time from the newest block the output reflects to the head.',
    (j) => j.lagSeconds,
  );
  gauge(
    'blockx_follow_deepest_reorg_blocks',
    'The deepest reorg the job has seen, in blocks.',
    (j) => j.deepestReorg,
  );
  gauge('blockx_follow_running', '1 while a runner holds the job, else 0.', (j) =>
    j.runner === null ? 0 : 1,
  );
  gauge('blockx_follow_failed', '1 when the job stopped on an error (its last error), else 0.', (j) =>
    j.state === 'failed' ? 1 : 0,
  );
  new Counter({
    name: 'blockx_follow_reorgs_total',
    help: 'Reorgs the job has seen (all its runners together).',
    labelNames: LABELS,
    registers: [registry],
    async collect() {
      // The count lives in the job's state; the counter shows it as it is there.
      this.reset();
      for (const j of await statuses()) this.inc({ job_id: j.jobId, chain_id: String(j.chainId) }, j.reorgs);
    },
  });
}
