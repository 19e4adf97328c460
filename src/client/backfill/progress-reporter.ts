// Backfill progress reports to the Coordinator (CoordinatorJobsService.ReportBackfillProgress,
// docs/dashboard-data.md § Backfill jobs), so that its dashboard shows the job. Advisory: a report that
// fails never slows or fails the backfill.
//
// The engine (./run-backfill.ts) calls `update` with the job's latest counts whenever they change; that
// only stores them. One report is in flight at most, each with its own deadline; the next one is sent
// PROGRESS_REPORT_INTERVAL_MS after the previous one was answered. A report that fails (a timeout, a
// refusal, a Coordinator busy or restarting) does not end reporting: the next one waits twice as long each
// time, up to PROGRESS_REPORT_MAX_BACKOFF_MS, and the first answered report brings the interval back.
// Only a Coordinator that does not have the service (`permanent` says which errors mean that) ends
// reporting for the job. Either is told once at warn, so a dashboard that lags is explained where the job
// runs. `finish` sends the last report whatever came before (unless reporting ended); it waits for it (at
// most FINAL_REPORT_WAIT_MS) only when the Coordinator has already answered a report, so a Coordinator
// that never did costs the job nothing.

import type { BackfillProgress } from '../../contracts/dashboard.js';

export type { BackfillProgress } from '../../contracts/dashboard.js';

/** How often the latest progress is sent while reports are answered. */
export const PROGRESS_REPORT_INTERVAL_MS = 1_000;
/** The deadline of one report. */
export const PROGRESS_REPORT_TIMEOUT_MS = 2_000;
/** The longest wait before the next report after reports failed in a row. */
export const PROGRESS_REPORT_MAX_BACKOFF_MS = 30_000;
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
  /** Told once: the first failed report, or reporting ending. Default: silent. */
  readonly warn?: (message: string, fields: Record<string, unknown>) => void;
  /** True for a failure no retry can mend (the Coordinator lacks the service). Default: none is. */
  readonly permanent?: (err: unknown) => boolean;
  readonly intervalMs?: number;
  readonly timeoutMs?: number;
  readonly maxBackoffMs?: number;
  readonly finalWaitMs?: number;
}

/** The wait before the next report after `failures` failed in a row (0: the plain interval). */
export function nextReportDelay(failures: number, intervalMs: number, maxBackoffMs: number): number {
  if (failures <= 0) return intervalMs;
  return Math.min(maxBackoffMs, intervalMs * 2 ** Math.min(failures, 30));
}

export function createProgressReporter(opts: ProgressReporterOptions): BackfillProgressSink {
  const intervalMs = opts.intervalMs ?? PROGRESS_REPORT_INTERVAL_MS;
  const timeoutMs = opts.timeoutMs ?? PROGRESS_REPORT_TIMEOUT_MS;
  const maxBackoffMs = opts.maxBackoffMs ?? PROGRESS_REPORT_MAX_BACKOFF_MS;
  const finalWaitMs = opts.finalWaitMs ?? FINAL_REPORT_WAIT_MS;
  let latest: BackfillProgress | undefined;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> | undefined;
  /** Reports failed in a row. */
  let failures = 0;
  /** The Coordinator cannot take reports: nothing more is sent. */
  let ended = false;
  /** finish() was called: no more periodic reports. */
  let finished = false;
  let answered = false;
  let warned = false;

  const warnOnce = (message: string, err: unknown): void => {
    if (warned) return;
    warned = true;
    opts.warn?.(message, { err: err instanceof Error ? err.message : String(err) });
  };

  const schedule = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (ended || finished) return;
    timer = setTimeout(tick, nextReportDelay(failures, intervalMs, maxBackoffMs));
    timer.unref();
  };

  const fail = (err: unknown): void => {
    if (opts.permanent?.(err) === true) {
      ended = true;
      clearTimeout(timer);
      timer = undefined;
      warnOnce('the coordinator does not take backfill progress reports; not reporting this job', err);
      return;
    }
    failures++;
    warnOnce(
      `a backfill progress report to the coordinator failed; retrying with backoff (at most every ` +
        `${maxBackoffMs / 1000} s), the dashboard may lag until one is answered`,
      err,
    );
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
        failures = 0;
      },
      (err: unknown) => fail(err),
    );
    inFlight = done;
    void done.then(() => {
      if (inFlight === done) inFlight = undefined;
      schedule();
    });
    return done;
  };

  function tick(): void {
    timer = undefined;
    if (ended || finished || inFlight !== undefined || latest === undefined) return;
    void send(latest);
  }

  return {
    update(progress) {
      if (ended || finished) return;
      const first = latest === undefined;
      latest = progress;
      if (first) tick();
    },
    async finish(progress) {
      clearTimeout(timer);
      timer = undefined;
      if (ended || finished) return;
      finished = true;
      const wasAnswered = answered;
      // After the report in flight (one at a time), unless that one showed the service is missing.
      const last = (inFlight ?? Promise.resolve()).then(() => (ended ? undefined : send(progress)));
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
