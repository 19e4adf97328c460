// Keeps a configured job running (docs/follow.md § Jobs in the config): `blockx up` supervises every entry
// of `jobs:`, `blockx jobs run NAME` one. Each run is `blockx backfill TEMPLATE --from N --follow` with the
// entry's settings, in this process; a run that fails (exit ≠ 0, or a thrown error) is started again after
// the restart backoff (src/services/follow/core/restart-backoff.ts, the entry's restartInitialBackoffMs
// and restartMaxBackoffMs). A run that ends with exit 0 was asked to stop (`blockx jobs stop`, a signal):
// it is not restarted.
//
// Two signals reach a run: `stop` (start nothing new, let the tasks in flight finish) and `cancel` (cancel
// them). While waiting to restart, `stop` ends the wait and the supervisor.
import type { FollowEvent } from '../client/backfill/follow-loop.js';
import type { JobConfig } from '../kernel/config-types.js';
import type { LeaseHolder } from '../services/follow/adapters/job-lease.js';
import { failuresInARow, restartDelayMs } from '../services/follow/core/restart-backoff.js';
import { EXIT, UsageError, type CliIo } from './io.js';

export interface RunSignals {
  readonly stop: AbortSignal;
  readonly cancel: AbortSignal;
}

/** What a follow run tells its supervisor as it goes (for `blockx up`'s status and metrics too). */
export interface FollowObserver {
  /** Another runner holds the job: this run exits 1, or waits with waitForLock. */
  leaseHeld?(jobId: string, by: LeaseHolder): void;
  /** This run holds the job and follows it from now on. */
  following?(jobId: string): void;
  /** Each event of the follow driver, as it is printed. */
  event?(jobId: string, e: FollowEvent): void;
}

/** What a supervisor hands each run: its stop signals, and who listens to it. */
export interface RunHooks {
  readonly signals: RunSignals;
  readonly observer?: FollowObserver;
  /** Runs the supervisor started again after a failure before this one (the run publishes it). */
  readonly restarts?: number;
}

/** How a supervised job runs on the cluster (the flags of `blockx jobs run`). */
export interface JobRunSettings {
  readonly configPath?: string;
  readonly coordinator?: string;
  readonly concurrency: string;
  readonly retries: string;
  readonly json?: boolean;
  readonly waitForLock?: boolean;
}

/** One run of `jobs.<name>`, as `blockx backfill TEMPLATE --from N --follow` would run it. */
export async function runConfiguredJob(
  name: string,
  job: JobConfig,
  baseDir: string,
  settings: JobRunSettings,
  io: CliIo,
  hooks?: RunHooks,
): Promise<number> {
  if (job.template === undefined) throw new UsageError(`jobs.${name}.template is not set`);
  const [path, { backfill, DEFAULT_STATE_DIR }] = await Promise.all([
    import('node:path'),
    import('./commands/backfill.js'),
  ]);
  return backfill(
    path.resolve(baseDir, job.template),
    {
      ...(settings.configPath === undefined ? {} : { config: settings.configPath }),
      from: String(job.from),
      per: 'block',
      follow: true,
      finality: String(job.finality),
      pollInterval: String(job.pollIntervalMs),
      ...(settings.coordinator === undefined ? {} : { coordinator: settings.coordinator }),
      concurrency: settings.concurrency,
      retries: settings.retries,
      stateDir: DEFAULT_STATE_DIR,
      ...(settings.json ? { json: true } : {}),
      ...(settings.waitForLock ? { waitForLock: true } : {}),
    },
    io,
    hooks === undefined ? {} : { follow: hooks },
  );
}

export interface SuperviseOptions {
  readonly name: string;
  readonly job: Pick<JobConfig, 'restartInitialBackoffMs' | 'restartMaxBackoffMs'>;
  /** One run of the job; resolves with its exit code. */
  readonly runOnce: (hooks: RunHooks) => Promise<number>;
  readonly signals: RunSignals;
  /** Told of each run's lease and events; the supervisor adds its own look at the lease. */
  readonly observer?: FollowObserver;
  /** Told before each restart of a failed run (the dashboard counts them). */
  readonly onRestart?: (failuresInARow: number, delayMs: number) => void;
  /** A run that found the job held by another runner ends the supervisor (no --wait-for-lock). */
  readonly exitWhenHeld?: boolean;
  readonly io: CliIo;
  readonly clock?: () => number;
  /** Waits `ms`, or less when `signal` aborts. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * Runs the job until a run ends with exit 0 or `stop` aborts; restarts a failed run with backoff. With
 * `exitWhenHeld`, a run that never got the job because another runner holds it ends the supervisor too.
 */
export async function superviseJob(o: SuperviseOptions): Promise<number> {
  const clock = o.clock ?? Date.now;
  const sleep = o.sleep ?? abortableSleep;
  const backoff = { initialMs: o.job.restartInitialBackoffMs, maxMs: o.job.restartMaxBackoffMs };
  let failures = 0;
  let restarts = 0;
  for (;;) {
    const startedMs = clock();
    let held = false;
    let followed = false;
    const observer: FollowObserver = {
      ...o.observer,
      leaseHeld: (jobId, by) => {
        held = true;
        o.observer?.leaseHeld?.(jobId, by);
      },
      following: (jobId) => {
        followed = true;
        o.observer?.following?.(jobId);
      },
    };
    let code: number;
    try {
      code = await o.runOnce({ signals: o.signals, observer, restarts });
    } catch (err) {
      o.io.stderr(`job ${o.name}: the runner failed: ${(err as Error).message}\n`);
      code = EXIT.FAILED;
    }
    if (code === EXIT.OK || o.signals.stop.aborted) return code;
    if (o.exitWhenHeld && held && !followed) return code;
    failures = failuresInARow(failures, { startedMs, endedMs: clock() }, backoff);
    const delay = restartDelayMs(failures, backoff);
    o.onRestart?.(failures, delay);
    restarts++;
    o.io.stderr(
      `job ${o.name}: the runner exited ${code}; restarting in ${delay} ms (${failures} failure(s) in a row)\n`,
    );
    await sleep(delay, o.signals.stop);
    if (o.signals.stop.aborted) return code;
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
