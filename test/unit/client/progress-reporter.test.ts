// The backfill progress reporter (src/client/backfill/progress-reporter.ts) on fake timers, against a
// fake `send`: the cadence, one report in flight, the first failure turning it off (logged once), and
// `finish` never waiting on a Coordinator that has not answered, and at most FINAL_REPORT_WAIT_MS on
// one that has.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  FINAL_REPORT_WAIT_MS,
  PROGRESS_REPORT_INTERVAL_MS,
  createProgressReporter,
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

  it.each([
    ['rejects (UNIMPLEMENTED)', 'reject'],
    ['throws synchronously', 'throw'],
  ] as const)(
    'a send that %s turns reporting off, says so once, and finish sends nothing',
    async (_n, how) => {
      const debug = vi.fn();
      let sends = 0;
      const send = vi.fn(() => {
        sends++;
        if (how === 'throw') throw new Error('the client is closed');
        return Promise.reject(new Error('12 UNIMPLEMENTED: unknown service'));
      });
      const r = createProgressReporter({ send, debug });
      r.update(progress(0));
      await vi.advanceTimersByTimeAsync(5 * PROGRESS_REPORT_INTERVAL_MS);
      r.update(progress(1));
      await r.finish(progress(2, true));
      expect(sends).toBe(1);
      expect(debug).toHaveBeenCalledTimes(1);
      expect(debug.mock.calls[0]![1]).toMatchObject({ err: expect.stringMatching(/UNIMPLEMENTED|closed/) });
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
