import { describe, expect, it } from 'vitest';
import { RestartBackoff } from '../../../../../src/services/call-host/adapters/executor-backoff.js';

const TABLE = { initialMs: 100, maxMs: 5_000 }; // the config table's restartBackoffInitialMs / MaxMs

describe('RestartBackoff', () => {
  it('doubles from the first delay up to the cap while the executor keeps failing', () => {
    const b = new RestartBackoff(TABLE);
    const delays = Array.from({ length: 9 }, (_, i) => b.nextDelay(i * 10));
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  });

  it('forgives the streak after the executor stayed ready long enough', () => {
    const b = new RestartBackoff({ ...TABLE, resetAfterMs: 10_000 });
    b.nextDelay(0);
    b.nextDelay(0);
    b.ready(1_000);
    expect(b.nextDelay(5_000)).toBe(400); // crashed again soon after becoming ready: keep backing off
    b.ready(6_000);
    expect(b.nextDelay(16_000)).toBe(100);
  });
});
