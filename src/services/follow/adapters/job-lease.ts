// Who runs a job (docs/follow.md § One runner per job): the port both kinds of lease keep, and the one
// place that picks the kind. With etcd configured (registry.etcd.endpoints) the lease is an etcd lease
// and key (./etcd-lease.ts), otherwise a row of the job's storage database (./storage-lease.ts).
import type { Etcd3 } from 'etcd3';
import type { FollowJobView } from '../../../contracts/dashboard.js';
import type { BlockxConfig } from '../../../kernel/config-types.js';
import type { StorageBackend } from '../../storage/types.js';

export interface LeaseHolder {
  readonly holder: string;
  /** Who that is, for a person: host and pid. */
  readonly info: string;
  /** Until when the lease lasts unless renewed (ms since the epoch; 0: not known). */
  readonly untilMs: number;
}

/**
 * `term` is the holder's fencing token: a later holder of the same job always gets a greater one, and
 * the job store refuses a write whose term is not the newest it was told of (JobStore.claimTerm).
 */
export type LeaseOutcome =
  { readonly ok: true; readonly term?: number } | { readonly ok: false; readonly heldBy: LeaseHolder };

export interface JobLease {
  readonly jobId: string;
  readonly holder: string;
  /** Renew at least every third of it. */
  readonly ttlMs: number;
  /** Takes the lease, or renews ours; tells who holds it when another live runner does (or ours was lost). */
  acquire(): Promise<LeaseOutcome>;
  /** Frees the lease if it is still ours. */
  release(): Promise<void>;
}

/** Leases of one kind for the jobs of one storage database. */
export interface JobLeases {
  /** "etcd" or "storage": where the leases live, for a person. */
  readonly kind: 'etcd' | 'storage';
  lease(jobId: string, holder: string, info: string): JobLease;
  /** Who holds the job's lease now (undefined: nobody, or it expired). */
  holderOf(jobId: string, now: number): Promise<LeaseHolder | undefined>;
  /**
   * Puts a job's status where every Coordinator's dashboard reads it (./etcd-job-status.ts); only with
   * etcd: without it the dashboard of `blockx up` reads the job state from the database.
   */
  publish?(view: FollowJobView): Promise<void>;
  close(): Promise<void>;
}

/** A client of the config's etcd (registry.etcd, which must name endpoints) for the job keys. */
export async function jobsEtcdClient(config: BlockxConfig): Promise<Etcd3> {
  const etcd = config.registry.etcd;
  const { createEtcdClient, etcdSecurityOf } = await import('../../registry/etcd-client.js');
  return createEtcdClient({
    endpoints: etcd.endpoints,
    unaryDeadlineMs: etcd.dialTimeoutMs,
    security: etcdSecurityOf(etcd),
  });
}

/** The job leases the config calls for: etcd's when it names endpoints, else the storage database's. */
export async function openJobLeases(config: BlockxConfig, backend: StorageBackend): Promise<JobLeases> {
  const etcd = config.registry.etcd;
  if (etcd.endpoints.length === 0) {
    const { StorageLease } = await import('./storage-lease.js');
    return {
      kind: 'storage',
      lease: (jobId, holder, info) => new StorageLease(backend, jobId, holder, info),
      holderOf: (jobId, now) => StorageLease.holderOf(backend, jobId, now),
      close: () => Promise.resolve(),
    };
  }
  const [client, { EtcdJobLease }, { putJobStatus }] = await Promise.all([
    jobsEtcdClient(config),
    import('./etcd-lease.js'),
    import('./etcd-job-status.js'),
  ]);
  return {
    kind: 'etcd',
    lease: (jobId, holder, info) => new EtcdJobLease(client, { jobId, holder, info }),
    holderOf: (jobId) => EtcdJobLease.holderOf(client, jobId),
    publish: (view) => putJobStatus(client, view),
    close: () => Promise.resolve(client.close()),
  };
}
