// Backfill progress reports to the Coordinator (CoordinatorJobsService.ReportBackfillProgress,
// docs/dashboard-data.md § Backfill jobs), so that its dashboard shows the job. Advisory: a report that
// fails never slows or fails the backfill.
//
// The engine (./run-backfill.ts) calls `update` with the job's latest counts whenever they change; that
// only stores them. A timer sends the latest counts every PROGRESS_REPORT_INTERVAL_MS, one report in
// flight at most, each with its own deadline. The first failure of any kind (UNIMPLEMENTED from a
// Coordinator that predates the service, a refusal, a timeout) is logged once at debug and turns the
// reporter off for the rest of the job. `finish` sends the last report; it waits for it (at most
// FINAL_REPORT_WAIT_MS) only when the Coordinator has already answered a report, so a Coordinator that
// never did costs the job nothing.

import type { BackfillProgress } from '../../contracts/dashboard.js';

export type { BackfillProgress } from '../../contracts/dashboard.js';

/** How often the latest progress is sent. */
export const PROGRESS_REPORT_INTERVAL_MS = 1_000;
/** The deadline of one report. */
export const PROGRESS_REPORT_TIMEOUT_MS = 2_000;
/** How long `finish` waits for the last report, at most (and only after an answered one). */
export const FINAL_REPORT_WAIT_MS = 1_000;

/** What the engine sees of a reporter. */
export interface BackfillProgressSink {
  /** The latest counts (stored; sent by the timer). Never throws. */
  update(progress: BackfillProgress): void;
  /** The last report. Resolves within FINAL_REPORT_WAIT_MS; never rejects. */
  finish(progress: BackfillProgress): Promise<void>;
}

/** Sends one report; rejects on any failure. */
export type SendProgress = (progress: BackfillProgress, timeoutMs: number) => Promise<void>;

export interface ProgressReporterOptions {
  readonly send: SendProgress;
  /** Told once, when reporting stops. Default: silent. */
  readonly debug?: (message: string, fields: Record<string, unknown>) => void;
  readonly intervalMs?: number;
  readonly timeoutMs?: number;
  readonly finalWaitMs?: number;
}

export function createProgressReporter(opts: ProgressReporterOptions): BackfillProgressSink {
  const intervalMs = opts.intervalMs ?? PROGRESS_REPORT_INTERVAL_MS;
  const timeoutMs = opts.timeoutMs ?? PROGRESS_REPORT_TIMEOUT_MS;
  const finalWaitMs = opts.finalWaitMs ?? FINAL_REPORT_WAIT_MS;
  let latest: BackfillProgress | undefined;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  /** A report failed: nothing more is sent. */
  let failed = false;
  /** finish() was called: no more periodic reports. */
  let finished = false;
  let answered = false;

  const fail = (err: unknown): void => {
    clearInterval(timer);
    timer = undefined;
    if (failed) return;
    failed = true;
    opts.debug?.('the coordinator does not take backfill progress reports; not reporting this job', {
      err: err instanceof Error ? err.message : String(err),
    });
  };

  const send = (progress: BackfillProgress): Promise<void> => {
    let sent: Promise<void>;
    try {
      sent = opts.send(progress, timeoutMs);
    } catch (err) {
      sent = Promise.reject(err);
    }
    const done: Promise<void> = sent.then(
      () => {
        answered = true;
      },
      (err: unknown) => fail(err),
    );
    inFlight = done;
    void done.then(() => {
      if (inFlight === done) inFlight = undefined;
    });
    return done;
  };

  const tick = (): void => {
    if (failed || finished || inFlight !== undefined || latest === undefined) return;
    void send(latest);
  };

  return {
    update(progress) {
      if (failed || finished) return;
      latest = progress;
      if (timer === undefined) {
        timer = setInterval(tick, intervalMs);
        timer.unref();
        tick();
      }
    },
    async finish(progress) {
      clearInterval(timer);
      timer = undefined;
      if (failed || finished) return;
      finished = true;
      const wasAnswered = answered;
      // After the report in flight (one at a time), unless that one failed.
      const last = (inFlight ?? Promise.resolve()).then(() => (failed ? undefined : send(progress)));
      // A Coordinator that has not answered yet may never: the job does not wait for it.
      if (!wasAnswered) return;
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([
        last,
        new Promise<void>((resolve) => {
          wait = setTimeout(resolve, finalWaitMs);
          wait.unref();
        }),
      ]);
      clearTimeout(wait);
    },
  };
}
