// The terminal progress bar: rendering, and redraws throttled to one per interval on virtual time.
import { describe, expect, it } from 'vitest';
import { ProgressLine, formatDuration, renderProgressBar } from '../../../src/cli/progress.js';

describe('renderProgressBar', () => {
  it('shows done/total, failed, running, rate and ETA', () => {
    expect(renderProgressBar({ total: 500, succeeded: 200, failed: 12, running: 64 }, 2_000)).toBe(
      '[##########--------------] 212/500 done · 12 failed · 64 running · 106/s · ETA 3s',
    );
  });

  it('has no ETA when done, and a ? before any task finished', () => {
    expect(renderProgressBar({ total: 4, succeeded: 4, failed: 0, running: 0 }, 500)).toBe(
      '[########################] 4/4 done · 0 failed · 0 running · 8.0/s',
    );
    expect(renderProgressBar({ total: 10, succeeded: 0, failed: 0, running: 3 }, 0)).toBe(
      '[------------------------]  0/10 done · 0 failed · 3 running · 0.0/s · ETA ?',
    );
  });

  it('a resumed backfill: skipped blocks count as done but not in the rate; rows as a rate; a unit name', () => {
    const counts = {
      total: 100,
      succeeded: 20,
      failed: 5,
      running: 4,
      skipped: 50,
      rows: 1_200,
      unit: 'blocks',
    };
    expect(renderProgressBar(counts, 2_000)).toBe(
      '[##################------]  75/100 blocks · 50 skipped · 5 failed · 4 running · 12.5/s · 600 rows/s · ETA 2s',
    );
    // Everything skipped: a full bar, no rate, no ETA; no rows figure when the work reports none.
    expect(
      renderProgressBar(
        { total: 8, succeeded: 0, failed: 0, running: 0, skipped: 8, unit: 'bundles' },
        1_000,
      ),
    ).toBe('[########################] 8/8 bundles · 8 skipped · 0 failed · 0 running · 0.0/s');
    // Nothing run yet after the skipped ones: the ETA is unknown; zero rows is still a rate.
    expect(
      renderProgressBar({ total: 10, succeeded: 0, failed: 0, running: 2, skipped: 3, rows: 0 }, 0),
    ).toBe(
      '[#######-----------------]  3/10 done · 3 skipped · 0 failed · 2 running · 0.0/s · 0.0 rows/s · ETA ?',
    );
    // skipped 0 is not shown.
    expect(
      renderProgressBar({ total: 2, succeeded: 1, failed: 0, running: 1, skipped: 0 }, 1_000),
    ).not.toContain('skipped');
  });

  it('formats durations', () => {
    expect([450, 1_400, 59_000, 61_000, 3_725_000].map(formatDuration)).toEqual([
      '450ms',
      '1s',
      '59s',
      '1m01s',
      '1h02m',
    ]);
  });
});

const CLEAR = '\r\x1b[2K';

describe('ProgressLine', () => {
  function harness() {
    let now = 1_000;
    const timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
    const out: string[] = [];
    const line = new ProgressLine((s) => out.push(s), 10, {
      clock: () => now,
      schedule: (fn, ms) => {
        const t = { at: now + ms, fn, cancelled: false };
        timers.push(t);
        return () => void (t.cancelled = true);
      },
    });
    /** Advance virtual time, firing due timers. */
    const advance = (ms: number) => {
      now += ms;
      for (const t of timers.splice(0)) {
        if (t.cancelled) continue;
        if (t.at <= now) t.fn();
        else timers.push(t);
      }
    };
    return { line, out, advance, timers };
  }

  it('redraws at most once per 100 ms, with the latest counts, lines above the bar', () => {
    const { line, out, advance } = harness();
    line.update({ total: 10, succeeded: 1, failed: 0, running: 5 });
    line.print('t1 SUCCEEDED []\n');
    advance(0);
    expect(out).toHaveLength(1);
    expect(out[0]).toBe(
      `${CLEAR}t1 SUCCEEDED []\n[##----------------------]  1/10 done · 0 failed · 5 running · 0.0/s · ETA ?`,
    );

    for (let i = 2; i <= 5; i++) {
      line.update({ total: 10, succeeded: i, failed: 0, running: 5 });
      line.print(`t${i} SUCCEEDED []\n`);
      advance(10);
    }
    expect(out).toHaveLength(1); // 40 ms after the first draw: nothing yet
    advance(60);
    expect(out).toHaveLength(2); // 100 ms after the first draw: one redraw with all four lines
    expect(
      out[1]?.startsWith(`${CLEAR}t2 SUCCEEDED []\nt3 SUCCEEDED []\nt4 SUCCEEDED []\nt5 SUCCEEDED []\n[`),
    ).toBe(true);
    expect(out[1]).toContain(' 5/10 done');
  });

  it('finish() flushes pending lines, clears the bar and stops redrawing', () => {
    const { line, out, advance } = harness();
    line.update({ total: 10, succeeded: 1, failed: 0, running: 0 });
    advance(0);
    line.print('last\n');
    line.finish();
    advance(1_000);
    expect(out).toHaveLength(2);
    expect(out[1]).toBe(`${CLEAR}last\n`);
    line.update({ total: 10, succeeded: 2, failed: 0, running: 0 });
    advance(1_000);
    expect(out).toHaveLength(2);
  });
});
