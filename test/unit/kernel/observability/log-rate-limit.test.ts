// The rate limit on log lines a stranger can cause (docs/security.md § Logs), on virtual time: a burst,
// then one line per interval, and the next line written counts the ones suppressed before it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logRateLimit, suppressedSuffix } from '../../../../src/kernel/observability/log-rate-limit.js';

/** Feeds events at the given times; returns [time, suppressed] for each line written. */
function run(times: number[], burst: number, intervalMs: number): [number, number][] {
  return runIndexed(times, burst, intervalMs).map(([t, s]) => [t, s]);
}

/** As run, with the index of the event each written line belongs to (times may repeat). */
function runIndexed(times: number[], burst: number, intervalMs: number): [number, number, number][] {
  const gate = logRateLimit({ burst, intervalMs });
  const written: [number, number, number][] = [];
  times.forEach((t, i) => gate(t, (suppressed) => written.push([t, suppressed, i])));
  return written;
}

describe('logRateLimit', () => {
  it('writes the burst, then one line per interval naming what it suppressed', () => {
    // 1,000 refusals in the first second, then one at 10 s, 15 s and 20 s.
    const flood = Array.from({ length: 1_000 }, (_, i) => i);
    const written = run([...flood, 10_000, 15_000, 20_000], 3, 10_000);
    expect(written).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [10_000, 997], // one line earned per interval: it counts the 997 dropped before it
      // 15 s: half an interval later, nothing earned: suppressed
      [20_000, 1],
    ]);
  });

  it('a quiet period refills the whole burst, never more', () => {
    const written = run([0, 1, 2, 1_000_000, 1_000_001, 1_000_002, 1_000_003], 3, 10_000);
    expect(written.map(([t]) => t)).toEqual([0, 1, 2, 1_000_000, 1_000_001, 1_000_002]);
  });

  it('survives a clock that goes back', () => {
    const written = run([100_000, 100_001, 5, 10_006], 2, 10_000);
    expect(written).toEqual([
      [100_000, 0],
      [100_001, 0],
      [10_006, 1],
    ]);
  });

  it('never writes more than burst + elapsed/interval lines, and accounts for every event', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 60_000 }), { maxLength: 300 }).map((a) => a.sort((x, y) => x - y)),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20_000 }),
        (times, burst, intervalMs) => {
          const written = runIndexed(times, burst, intervalMs);
          if (times.length === 0) {
            expect(written).toEqual([]);
            return;
          }
          const span = times.at(-1)! - times[0]!;
          expect(written.length).toBeLessThanOrEqual(burst + Math.floor(span / intervalMs));
          expect(written.length).toBeGreaterThanOrEqual(Math.min(times.length, burst));
          // Every event is either written or counted in a later line, except those after the last line.
          const counted = written.length + written.reduce((n, [, s]) => n + s, 0);
          expect(counted).toBe(written.at(-1)![2] + 1);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('suppressedSuffix', () => {
  it.each([
    [0, ''],
    [1, ' (1 similar line suppressed before this one)'],
    [997, ' (997 similar lines suppressed before this one)'],
  ])('%i → %j', (n, suffix) => expect(suppressedSuffix(n)).toBe(suffix));
});
