// The pure parts of the page's scripts (web/dashboard/format.js, charts.js), imported as the browser
// imports them: plain ES modules, no build step.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const WEB = path.resolve(import.meta.dirname, '../../../../web/dashboard');

interface FormatModule {
  formatDuration(ms: number): string;
  formatAge(thenMs: number, nowMs: number): string;
  formatPercent(fraction: number): string;
  backfillProgress(job: Record<string, unknown>): number;
  backfillJobs(
    backfills: Record<string, unknown>[],
  ): { latest: Record<string, unknown>; runs: Record<string, unknown>[] }[];
  slotsUsed(worker: { taskSlots: number; freeSlots: number }): number;
  shortId(id: string, max?: number): string;
  formatLag(lagBlocks: number | null, lagSeconds: number | null): string;
  formatReorg(reorg: Record<string, unknown> | null, nowMs: number): string;
}
interface ChartsModule {
  niceCeiling(v: number): number;
  barGeometry(
    values: number[],
    width: number,
    height: number,
  ): { yMax: number; bars: { x: number; y: number; width: number; height: number }[] };
}
const load = async <T>(file: string): Promise<T> =>
  (await import(pathToFileURL(path.join(WEB, file)).href)) as T;

describe('format.js', async () => {
  const f = await load<FormatModule>('format.js');

  it.each([
    [0, '0 ms'],
    [850, '850 ms'],
    [5_000, '5 s'],
    [1_234, '1.23 s'],
    [12_340, '12.3 s'],
    [245_000, '4 min 05 s'],
    [600_000, '10 min'],
    [7_380_000, '2 h 03 min'],
    [-1, '–'],
    [Number.NaN, '–'],
  ])('formatDuration(%d) = %s', (ms, text) => expect(f.formatDuration(ms)).toBe(text));

  it('formatPercent, formatAge', () => {
    expect(f.formatPercent(0.4567)).toBe('46%');
    expect(f.formatPercent(0.045)).toBe('4.5%');
    expect(f.formatPercent(0)).toBe('0%');
    expect(f.formatAge(1_000, 1_400)).toBe('400 ms ago');
    expect(f.formatAge(0, 1_400)).toBe('–');
  });

  it('backfillProgress counts succeeded, failed and skipped units, capped at 1', () => {
    const job = { units: 200, succeeded: 50, failed: 10, skipped: 40, finished: false };
    expect(f.backfillProgress(job)).toBe(0.5);
    expect(f.backfillProgress({ ...job, succeeded: 500 })).toBe(1);
    expect(f.backfillProgress({ ...job, units: 0 })).toBe(0);
    expect(f.backfillProgress({ ...job, units: 0, finished: true })).toBe(1);
  });

  it('backfillJobs shows a job once: its runs together, the run started last first, jobs by newest report', () => {
    const r = (jobId: string, run: string, startedAtMs: number) => ({ jobId, run, startedAtMs });
    // Newest report first, as the snapshot orders them.
    const reports = [
      r('a', 'a2', 200),
      r('b', 'b1', 150),
      r('a', 'a1', 100),
      r('c', 'c1', 50),
      r('a', 'a3', 300),
    ];
    const jobs = f.backfillJobs(reports);
    expect(jobs.map((j) => [j.latest.run, j.runs.map((x) => x.run)])).toEqual([
      ['a3', ['a3', 'a2', 'a1']],
      ['b1', ['b1']],
      ['c1', ['c1']],
    ]);
    // Two runs started in the same ms: the one reported last is the latest.
    expect(f.backfillJobs([r('x', 'late', 5), r('x', 'early', 5)])[0]!.latest.run).toBe('late');
    expect(f.backfillJobs([])).toEqual([]);
  });

  it('slotsUsed is total minus free, never negative; shortId keeps both ends', () => {
    expect(f.slotsUsed({ taskSlots: 8, freeSlots: 5 })).toBe(3);
    expect(f.slotsUsed({ taskSlots: 8, freeSlots: 9 })).toBe(0);
    expect(f.shortId('0123456789abcdefghij', 11)).toBe('01234…fghij');
    expect(f.shortId('short', 11)).toBe('short');
  });
});

describe('charts.js', async () => {
  const c = await load<ChartsModule>('charts.js');

  it.each([
    [0, 1],
    [1, 1],
    [3, 5],
    [7, 10],
    [11, 20],
    [120, 200],
    [501, 1000],
  ])('niceCeiling(%d) = %d', (v, nice) => expect(c.niceCeiling(v)).toBe(nice));

  it('barGeometry: one slot per value, heights scaled to the nice maximum, bars on the baseline', () => {
    const { yMax, bars } = c.barGeometry([0, 5, 10, 2], 400, 100);
    expect(yMax).toBe(10);
    expect(bars.map((b) => b.x)).toEqual([0, 100, 200, 300]);
    expect(bars.map((b) => b.height)).toEqual([0, 50, 100, 20]);
    for (const b of bars) expect(b.y + b.height).toBe(100);
    expect(bars[1]?.width).toBe(99);
    expect(c.barGeometry([], 400, 100)).toEqual({ yMax: 1, bars: [] });
  });
});

describe('format.js: follow jobs', async () => {
  const f = await load<FormatModule>('format.js');

  it.each([
    [null, null, '–'],
    [0, 0, 'caught up'],
    [1, null, '1 block'],
    [3, 36, '3 blocks · 36 s'],
    [70, 840, '70 blocks · 14 min'],
  ])('formatLag(%s, %s) = %s', (blocks, seconds, text) => {
    expect(f.formatLag(blocks, seconds)).toBe(text);
  });

  it('formatReorg names the depth, the common ancestor and how long ago', () => {
    expect(f.formatReorg(null, 1_000)).toBe('none');
    expect(f.formatReorg({ atMs: 1_000, ancestor: 27, depth: 3 }, 13_000)).toBe(
      '3 blocks above 27, 12 s ago',
    );
    expect(f.formatReorg({ atMs: 1_000, ancestor: 9, depth: 1 }, 1_400)).toBe('1 block above 9, 400 ms ago');
  });
});
