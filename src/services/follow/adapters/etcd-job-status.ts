// Follow jobs' status in etcd (docs/follow.md § Watching a job; the key in docs/architecture.md § etcd keys),
// so that any Coordinator's dashboard shows them, not only a process that opens the storage database. With
// etcd configured, a job's runner puts `/blockx/_jobs/status/<jobId>` every JOB_STATUS_PUBLISH_MS and once
// more when it stops: the JSON of the dashboard's FollowJobView (src/contracts/dashboard.ts: the job's
// figures as `blockx status` reads them, its term, and its supervisor's restarts). The key has no etcd
// lease, so a stopped or failed job keeps showing with its last state and error; whether a runner holds
// the job now is read from the lease key beside it (`/blockx/_jobs/leases/<jobId>`, ./etcd-lease.ts), so a
// runner that died between two puts shows as stopped, as `blockx status` shows it from the database.
import type { Etcd3 } from 'etcd3';
import type { FollowJobView } from '../../../contracts/dashboard.js';
import type { BlockxConfig } from '../../../kernel/config-types.js';
import { JOB_LEASE_PREFIX } from './etcd-lease.js';
import { jobsEtcdClient } from './job-lease.js';

/** Where job statuses live in etcd, beside the job leases. */
export const JOB_STATUS_PREFIX = '/blockx/_jobs/status/';

/** How often a runner puts its job's status (and once more when it stops). */
export const JOB_STATUS_PUBLISH_MS = 5_000;

export const jobStatusKey = (jobId: string): string => `${JOB_STATUS_PREFIX}${jobId}`;

/** Puts the job's status (the runner does; no lease: it outlives the runner). */
export async function putJobStatus(client: Etcd3, view: FollowJobView): Promise<void> {
  await client.put(jobStatusKey(view.jobId)).value(JSON.stringify(view));
}

/**
 * Every job status in etcd, by job id, with `state` and `runner` as the lease keys say now: a job whose
 * lease key is gone is not running whatever its last put said. A value that is not a status is skipped.
 */
export async function readJobStatusesFromEtcd(client: Etcd3): Promise<FollowJobView[]> {
  const [statuses, leases] = await Promise.all([
    client.getAll().prefix(JOB_STATUS_PREFIX).strings(),
    client.getAll().prefix(JOB_LEASE_PREFIX).strings(),
  ]);
  const out: FollowJobView[] = [];
  for (const [key, text] of Object.entries(statuses)) {
    const view = parseView(text);
    if (view === undefined || key !== jobStatusKey(view.jobId)) continue;
    const lease = leases[`${JOB_LEASE_PREFIX}${view.jobId}`];
    const runner = lease === undefined ? null : (parseInfo(lease) ?? view.runner);
    const state = runner === null && view.state === 'running' ? 'stopped' : view.state;
    out.push({ ...view, state, runner });
  }
  return out.sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
}

function parseView(text: string): FollowJobView | undefined {
  try {
    const v = JSON.parse(text) as Partial<FollowJobView> | null;
    if (v === null || typeof v !== 'object' || typeof v.jobId !== 'string' || typeof v.state !== 'string') {
      return undefined;
    }
    return v as FollowJobView;
  } catch {
    return undefined;
  }
}

function parseInfo(text: string): string | undefined {
  try {
    const info = (JSON.parse(text) as { info?: unknown }).info;
    return typeof info === 'string' ? info : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The job statuses of the config's etcd, for a Coordinator's dashboard (src/app/coordinator-command.ts);
 * undefined when no etcd is configured (then no runner publishes any).
 */
export async function openJobStatusReader(
  config: BlockxConfig,
): Promise<{ read(): Promise<FollowJobView[]>; close(): void } | undefined> {
  if (config.registry.etcd.endpoints.length === 0) return undefined;
  const client = await jobsEtcdClient(config);
  return { read: () => readJobStatusesFromEtcd(client), close: () => client.close() };
}
