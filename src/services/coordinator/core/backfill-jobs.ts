// Backfill jobs as their clients report them (CoordinatorJobsService.ReportBackfillProgress,
// docs/dashboard-data.md § Backfill jobs). A bounded table keyed by (job id, run): a report is checked
// field by field (`checkBackfillReport`), then replaces the entry of its run. An entry expires
// BACKFILL_JOB_RETAIN_MS after its last report, so a client that died leaves no trace for long. At most
// MAX_BACKFILL_JOBS entries: a new job when the table is full first pushes out expired ones, then the
// finished one reported least recently; if every entry is a live running job, the report is refused.
// Entries belong to the identity that first reported them (docs/security.md § Roles): another identity's
// report of the same (job id, run) is refused (NotOwner), and one identity holds at most
// MAX_BACKFILL_JOBS_PER_CLIENT entries (its own finished ones are pushed out first), so one client can
// neither overwrite another's progress nor crowd it out of the table.
// No IO, no clock: `now` is an argument.

import type { BackfillJobView, BackfillProgress } from '../../../contracts/dashboard.js';
import { BackfillReportError } from './errors.js';

/** Jobs kept at most. */
export const MAX_BACKFILL_JOBS = 256;
/** Jobs one identity may have in the table. */
export const MAX_BACKFILL_JOBS_PER_CLIENT = 16;
/** How long an entry is kept after its last report (finished or not). */
export const BACKFILL_JOB_RETAIN_MS = 120_000;
export const MAX_JOB_ID_CHARS = 128;
export const MAX_RUN_CHARS = 64;

/** A report as it arrives (int64 as numbers), before `per` is checked. */
export type BackfillProgressReport = Omit<BackfillProgress, 'per'> & { readonly per: string };

const PRINTABLE = /^[\x21-\x7e]+$/;

function checkLabel(field: string, value: string, max: number): void {
  if (value.length === 0 || value.length > max || !PRINTABLE.test(value)) {
    throw new BackfillReportError(
      'InvalidArgument',
      field,
      `${field} must be 1 to ${max} printable ASCII characters without spaces (got ${value.length} characters)`,
    );
  }
}

function checkCount(field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new BackfillReportError('InvalidArgument', field, `${field} must be a non-negative integer`);
  }
}

/** Throws BackfillReportError (InvalidArgument) naming the first field out of bounds. */
export function checkBackfillReport(r: BackfillProgressReport): BackfillJobView['per'] {
  checkLabel('job_id', r.jobId, MAX_JOB_ID_CHARS);
  checkLabel('run', r.run, MAX_RUN_CHARS);
  if (r.per !== 'block' && r.per !== 'bundle') {
    throw new BackfillReportError('InvalidArgument', 'per', 'per must be "block" or "bundle"');
  }
  for (const [field, value] of [
    ['from_block', r.fromBlock],
    ['to_block', r.toBlock],
    ['units', r.units],
    ['succeeded', r.succeeded],
    ['failed', r.failed],
    ['skipped', r.skipped],
    ['in_flight', r.inFlight],
    ['started_at_ms', r.startedAtMs],
  ] as const) {
    checkCount(field, value);
  }
  if (r.fromBlock > r.toBlock) {
    throw new BackfillReportError('InvalidArgument', 'to_block', 'to_block must not be below from_block');
  }
  if (r.succeeded + r.failed + r.skipped + r.inFlight > r.units) {
    throw new BackfillReportError(
      'InvalidArgument',
      'units',
      'succeeded + failed + skipped + in_flight must not exceed units',
    );
  }
  return r.per;
}

export class BackfillJobs {
  /** Insertion order = order of last report (a report moves its entry to the end). */
  private readonly jobs = new Map<string, BackfillJobView>();
  /** Who reported each entry first. */
  private readonly owners = new Map<string, string>();
  /** Entries per owner. */
  private readonly perOwner = new Map<string, number>();

  constructor(
    readonly maxJobs: number = MAX_BACKFILL_JOBS,
    readonly retainMs: number = BACKFILL_JOB_RETAIN_MS,
    readonly maxJobsPerClient: number = MAX_BACKFILL_JOBS_PER_CLIENT,
  ) {}

  get size(): number {
    return this.jobs.size;
  }

  /** Records `r` (checked) from `owner` at `now`; throws BackfillReportError when refused. */
  report(r: BackfillProgressReport, now: number, owner = ''): BackfillJobView {
    const per = checkBackfillReport(r);
    const key = `${r.jobId} ${r.run}`;
    this.expire(now);
    const holder = this.owners.get(key);
    if (holder !== undefined && holder !== owner) {
      throw new BackfillReportError(
        'NotOwner',
        'job_id',
        `backfill job ${r.jobId} (run ${r.run}) is reported by another client: only the client that started it may report it`,
      );
    }
    if (holder === undefined) {
      if ((this.perOwner.get(owner) ?? 0) >= this.maxJobsPerClient && !this.evictFinished(owner)) {
        throw new BackfillReportError(
          'TooManyJobs',
          'job_id',
          `this client already has ${this.maxJobsPerClient} running backfill jobs reported`,
        );
      }
      if (this.jobs.size >= this.maxJobs && !this.evictFinished()) {
        throw new BackfillReportError(
          'TooManyJobs',
          'job_id',
          `the coordinator already tracks ${this.maxJobs} running backfill jobs`,
        );
      }
      this.owners.set(key, owner);
      this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);
    }
    const view: BackfillJobView = {
      jobId: r.jobId,
      run: r.run,
      per,
      fromBlock: r.fromBlock,
      toBlock: r.toBlock,
      units: r.units,
      succeeded: r.succeeded,
      failed: r.failed,
      skipped: r.skipped,
      inFlight: r.inFlight,
      startedAtMs: r.startedAtMs,
      updatedAtMs: now,
      finished: r.finished,
      ...(owner === '' ? {} : { client: owner }),
    };
    this.jobs.delete(key);
    this.jobs.set(key, view);
    return view;
  }

  /** Entries not expired at `now`, most recently reported first. */
  list(now: number): BackfillJobView[] {
    this.expire(now);
    return [...this.jobs.values()].reverse();
  }

  private expire(now: number): void {
    for (const [key, job] of this.jobs) {
      // Sorted by report time: the first live entry ends the sweep.
      if (now - job.updatedAtMs < this.retainMs) break;
      this.remove(key);
    }
  }

  /** Pushes out the finished entry reported least recently (of `owner`, when given). */
  private evictFinished(owner?: string): boolean {
    for (const [key, job] of this.jobs) {
      if (job.finished && (owner === undefined || this.owners.get(key) === owner)) {
        this.remove(key);
        return true;
      }
    }
    return false;
  }

  private remove(key: string): void {
    this.jobs.delete(key);
    const owner = this.owners.get(key);
    if (owner === undefined) return;
    this.owners.delete(key);
    const left = (this.perOwner.get(owner) ?? 1) - 1;
    if (left > 0) this.perOwner.set(owner, left);
    else this.perOwner.delete(owner);
  }
}
