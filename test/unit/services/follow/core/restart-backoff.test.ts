// The restart backoff of supervised jobs (src/services/follow/core/restart-backoff.ts): the delay doubles
// per failure in a row up to the maximum, and a run that lasted the maximum starts a new row.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failuresInARow, restartDelayMs } from '../../../../../src/services/follow/core/restart-backoff.js';

const BACKOFF = { initialMs: 1000, maxMs: 60_000 };

describe('restart backoff', () => {
  it.each([
    [1, 1000],
    [2, 2000],
    [3, 4000],
    [6, 32_000],
    [7, 60_000],
    [2000, 60_000],
  ])('after %i failure(s) in a row it waits %i ms', (failures, delay) => {
    expect(restartDelayMs(failures, BACKOFF)).toBe(delay);
  });

  it.each([
    ['a quick failure extends the row', 3, 0, 59_999, 4],
    ['a run that lasted the maximum starts a new row', 3, 0, 60_000, 1],
    ['the first failure', 0, 10, 20, 1],
  ])('%s', (_name, previous, startedMs, endedMs, row) => {
    expect(failuresInARow(previous, { startedMs, endedMs }, BACKOFF)).toBe(row);
  });

  it('refuses a row of no failures', () => {
    expect(() => restartDelayMs(0, BACKOFF)).toThrow(RangeError);
  });

  it('never waits less than the initial delay nor more than the maximum, and never less after another failure', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 5000 }),
        (initialMs, extra, failures) => {
          const backoff = { initialMs, maxMs: initialMs + extra };
          const d = restartDelayMs(failures, backoff);
          expect(d).toBeGreaterThanOrEqual(initialMs);
          expect(d).toBeLessThanOrEqual(backoff.maxMs);
          expect(restartDelayMs(failures + 1, backoff)).toBeGreaterThanOrEqual(d);
        },
      ),
    );
  });
});
