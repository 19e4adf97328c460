// One runner per job (docs/follow.md § One runner per job) for `blockx ingest --follow` and `blockx backfill
// --follow`: take the job's lease
// (etcd's when etcd is configured, else the storage database's: openJobLeases), claim its term in the job
// store (the fencing token: a runner that lost the lease without knowing writes nothing), or say who holds
// it and wait (--wait-for-lock) or give up; renew it while the job runs, and stop when another runner took
import { hostname } from 'node:os';
import type { WriteFence } from '../kernel/plugin-types.js';
import type { BlockxConfig } from '../kernel/config-types.js';
import type { StorageBackend } from '../services/storage/types.js';
import { JOB_STATUS_PUBLISH_MS } from '../services/follow/adapters/etcd-job-status.js';
import { openJobLeases, type LeaseHolder } from '../services/follow/adapters/job-lease.js';
import { readJobStatuses } from '../services/follow/adapters/job-status.js';
import type { JobStore } from '../services/follow/adapters/job-store.js';
import { JobFencedError } from '../services/follow/core/errors.js';
import type { CliIo } from './io.js';
import { listenForStop, type StopSignals } from './stop-signals.js';

/** How long a runner that finds the job taken waits between looks (with --wait-for-lock). */
const LOCK_RETRY_MS = 2000;

export interface HeldJobLease {
  /**
   * Ctrl-C (./stop-signals.ts) and a lost lease: both abort `stop`; a lost lease aborts `cancel` too (the
   * runner's writes in flight could overwrite what the new runner writes).
   */
  readonly signals: StopSignals;
  /** The job and the term this runner claimed: its tasks' writers check it (docs/follow.md § Fencing). */
  readonly fence: WriteFence;
  /** Whether another runner took the lease while this one ran. */
  lost(): boolean;
  /** Marks the lease lost (the job store refused a write: a newer runner claimed the job) and stops. */
  markLost(): void;
  /**
   * With etcd, keeps the job's status (read from the job state; `chain` for the lag in seconds) under
   * `/blockx/_jobs/status/<jobId>` every JOB_STATUS_PUBLISH_MS, for every Coordinator's dashboard, with
   * `restarts` (its supervisor's, or null), and puts it once more at release(). Without etcd, nothing.
   */
  publishStatus(chain: StorageBackend | undefined, restarts: number | null): void;
  /** Stops renewing, stops listening for Ctrl-C, and frees the lease if it is still ours. */
  release(): Promise<void>;
}

export interface JobLeaseOptions {
  readonly config: BlockxConfig;
  readonly store: JobStore;
  readonly jobId: string;
  /** A tag drawn per run: two runs on one host and pid never share a lease. */
  readonly runId: string;
  /** The command, in messages (`ingest`). */
  readonly command: string;
  readonly waitForLock: boolean;
  readonly io: CliIo;
  /** Told each time another runner is found holding the lease (the `blockx up` supervisor's status). */
  readonly onHeld?: (heldBy: LeaseHolder) => void;
  /** The run's stop and cancel. Default: Ctrl-C / SIGTERM (./stop-signals.ts). */
  readonly signals?: () => StopSignals;
}

/** The lease, or undefined when another runner holds it and --wait-for-lock was not given (said on stderr). */
export async function holdJobLease(o: JobLeaseOptions): Promise<HeldJobLease | undefined> {
  const { io, jobId, store } = o;
  const leases = await openJobLeases(o.config, store.backend);
  const lease = leases.lease(
    jobId,
    `${hostname()}:${process.pid}:${o.runId}`,
    `${hostname()} pid ${process.pid}`,
  );
  let term: number | undefined;
  try {
    for (;;) {
      const got = await lease.acquire();
      if (got.ok && (term = await claimTerm(store, jobId, got.term, o)) !== undefined) break;
      const line = got.ok
        ? `blockx ${o.command}: job ${jobId} was taken by a newer runner`
        : `blockx ${o.command}: job ${jobId} is being run by ${got.heldBy.info}` +
          (got.heldBy.untilMs > 0 ? ` (lease until ${new Date(got.heldBy.untilMs).toISOString()})` : '');
      if (got.ok) await lease.release().catch(() => {});
      else o.onHeld?.(got.heldBy);
      if (!o.waitForLock) {
        io.stderr(`${line}; exiting (--wait-for-lock waits for it)\n`);
        await leases.close();
        return undefined;
      }
      io.stderr(`${line}; waiting\n`);
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  } catch (err) {
    await leases.close();
    throw err;
  }
  const signals = o.signals?.() ?? listenForStop(io, o.command);
  let lost = false;
  const markLost = (): void => {
    lost = true;
    signals.stop.abort();
    signals.cancel.abort();
  };
  const renew = setInterval(
    () => {
      lease.acquire().then(
        (r) => {
          if (r.ok || lost) return;
          io.stderr(`blockx ${o.command}: lost the lease of job ${jobId} to ${r.heldBy.info}; stopping\n`);
          markLost();
        },
        () => {}, // a failed renewal is retried at the next tick; the lease outlives two of them
      );
    },
    Math.floor(lease.ttlMs / 3),
  );
  let publishing: ReturnType<typeof setInterval> | undefined;
  let publishOnce: (() => Promise<void>) | undefined;
  return {
    signals,
    fence: { jobId, term: term as number },
    lost: () => lost,
    markLost,
    publishStatus(chain, restarts) {
      const { publish } = leases;
      if (publish === undefined || publishOnce !== undefined) return;
      publishOnce = async () => {
        const [status] = await readJobStatuses(store, leases, chain, Date.now(), jobId);
        if (status !== undefined) await publish.call(leases, { ...status, restarts });
      };
      // Best effort, one put at a time: a failed one is said again by the next.
      let busy = false;
      const tick = (): void => {
        if (busy) return;
        busy = true;
        publishOnce?.()
          .catch(() => {})
          .finally(() => (busy = false));
      };
      tick();
      publishing = setInterval(tick, JOB_STATUS_PUBLISH_MS);
    },
    release: async () => {
      clearInterval(renew);
      clearInterval(publishing);
      signals.release();
      await lease.release().catch(() => {});
      // The run's last state (stopped, failed, its error), with the lease gone.
      await publishOnce?.().catch(() => {});
      await leases.close();
    },
  };
}

/** Claims the lease's term in the job store; undefined when a newer runner's term is there already. */
async function claimTerm(
  store: JobStore,
  jobId: string,
  term: number | undefined,
  o: JobLeaseOptions,
): Promise<number | undefined> {
  try {
    return await store.claimTerm(jobId, term);
  } catch (err) {
    if (!(err instanceof JobFencedError)) throw err;
    o.io.stderr(`blockx ${o.command}: ${err.message}\n`);
    return undefined;
  }
}
