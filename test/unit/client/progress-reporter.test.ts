// The backfill progress reporter (src/client/backfill/progress-reporter.ts) on fake timers, against a
// fake `send`: the cadence, one report in flight, failed reports retried with backoff (warned once), a
// permanent failure ending it, and `finish` never waiting on a Coordinator that has not answered, and at
// most FINAL_REPORT_WAIT_MS on one that has.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  FINAL_REPORT_WAIT_MS,
  PROGRESS_REPORT_INTERVAL_MS,
  PROGRESS_REPORT_MAX_BACKOFF_MS,
  createProgressReporter,
  nextReportDelay,
  type BackfillProgress,
} from '../../../src/client/backfill/progress-reporter.js';

function progress(succeeded: number, finished = false): BackfillProgress {
  return {
    jobId: 'job',
    run: 'run',
    per: 'block',
    fromBlock: 1,
    toBlock: 10,
    units: 10,
    succeeded,
    failed: 0,
    skipped: 0,
    inFlight: 0,
    startedAtMs: 0,
    finished,
  };
}

/** A send whose calls are recorded and settled by the test. */
function fakeSend() {
  const calls: { progress: BackfillProgress; resolve: () => void; reject: (e: Error) => void }[] = [];
  const send = vi.fn(
    (p: BackfillProgress) =>
      new Promise<void>((resolve, reject) => calls.push({ progress: p, resolve, reject })),
  );
  return { send, calls };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('progress reporter', () => {
  it('sends at the first update, then the latest counts once per interval, one at a time', async () => {
    const { send, calls } = fakeSend();
    const r = createProgressReporter({ send });
    r.update(progress(0));
    expect(calls.map((c) => c.progress.succeeded)).toEqual([0]);
    r.update(progress(1));
    r.update(progress(2));
    // The first report is still in flight: the tick skips.
    await vi.advanceTimersByTimeAsync(PROGRESS_REPORT_INTERVAL_MS);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve();
    await vi.advanceTimersByTimeAsync(PROGRESS_REPORT_INTERVAL_MS);
    expect(calls.map((c) => c.progress.succeeded)).toEqual([0, 2]);
    calls[1]!.resolve();
    const done = r.finish(progress(10, true));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.map((c) => c.progress.finished)).toEqual([false, false, true]);
    calls[2]!.resolve();
    await done;
    await vi.advanceTimersByTimeAsync(10 * PROGRESS_REPORT_INTERVAL_MS);
    expect(calls).toHaveLength(3);
  });

  it('a failed report does not end reporting: the next waits twice as long each time, then the interval again, warned once', async () => {
    const { send, calls } = fakeSend();
    const warn = vi.fn();
    const r = createProgressReporter({ send, warn });
    r.update(progress(0));
    const sentAt = (): number => calls.length;
    // Three failures in a row: the waits before the next report are 2, 4 and 8 intervals.
    for (const wait of [2, 4, 8]) {
      calls.at(-1)!.reject(new Error('4 DEADLINE_EXCEEDED: deadline exceeded'));
      const before = sentAt();
      await vi.advanceTimersByTimeAsync(wait * PROGRESS_REPORT_INTERVAL_MS - 1);
      expect(sentAt()).toBe(before);
      await vi.advanceTimersByTimeAsync(1);
      expect(sentAt()).toBe(before + 1);
    }
    r.update(progress(7));
    calls.at(-1)!.resolve();
    await vi.advanceTimersByTimeAsync(PROGRESS_REPORT_INTERVAL_MS);
    expect(calls.at(-1)!.progress.succeeded).toBe(7);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(/failed; retrying with backoff/);
    expect(warn.mock.calls[0]![1]).toEqual({ err: '4 DEADLINE_EXCEEDED: deadline exceeded' });
    // A finished job that failed its reports still sends the last one.
    calls.at(-1)!.reject(new Error('14 UNAVAILABLE'));
    await vi.advanceTimersByTimeAsync(0);
    const done = r.finish(progress(10, true));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.at(-1)!.progress).toMatchObject({ succeeded: 10, finished: true });
    calls.at(-1)!.resolve();
    await done;
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('the backoff is capped at PROGRESS_REPORT_MAX_BACKOFF_MS', () => {
    expect(
      [0, 1, 2, 3, 4, 5, 6, 40].map((n) => nextReportDelay(n, 1_000, PROGRESS_REPORT_MAX_BACKOFF_MS)),
    ).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  });

  it.each([
    ['rejects (UNIMPLEMENTED)', 'reject'],
    ['throws synchronously (UNIMPLEMENTED)', 'throw'],
  ] as const)(
    'a send that %s with a permanent error ends reporting, says so once, and finish sends nothing',
    async (_n, how) => {
      const warn = vi.fn();
      let sends = 0;
      const unimplemented = Object.assign(new Error('12 UNIMPLEMENTED: unknown service'), { code: 12 });
      const send = vi.fn(() => {
        sends++;
        if (how === 'throw') throw unimplemented;
        return Promise.reject(unimplemented);
      });
      const r = createProgressReporter({
        send,
        warn,
        permanent: (e) => (e as { code?: number }).code === 12,
      });
      r.update(progress(0));
      await vi.advanceTimersByTimeAsync(100 * PROGRESS_REPORT_INTERVAL_MS);
      r.update(progress(1));
      await r.finish(progress(2, true));
      expect(sends).toBe(1);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![0]).toMatch(/does not take backfill progress reports/);
    },
  );

  it('finish does not wait for a Coordinator that never answered', async () => {
    const { send, calls } = fakeSend();
    const r = createProgressReporter({ send });
    r.update(progress(0));
    let finished = false;
    void r.finish(progress(1, true)).then(() => (finished = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(finished).toBe(true);
    expect(calls).toHaveLength(1);
  });

  it('finish waits at most FINAL_REPORT_WAIT_MS for a Coordinator that stopped answering', async () => {
    const { send, calls } = fakeSend();
    const r = createProgressReporter({ send });
    r.update(progress(0));
    calls[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    let finished = false;
    void r.finish(progress(1, true)).then(() => (finished = true));
    await vi.advanceTimersByTimeAsync(FINAL_REPORT_WAIT_MS - 1);
    expect(finished).toBe(false);
    expect(calls.at(-1)?.progress.finished).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(finished).toBe(true);
  });

  it('finish without any update sends the final report alone', async () => {
    const { send, calls } = fakeSend();
    const r = createProgressReporter({ send });
    await r.finish(progress(0, true));
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.map((c) => c.progress.finished)).toEqual([true]);
  });
});
