// TokenBucket on virtual time: tables of takes → allowed or not, and a property over random take attempts
// and new limits (the bound its theory of operation states, and that `nextAt` is exactly when a take passes).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  TokenBucket,
  TokenBucketError,
  type TokenBucketLimits,
} from '../../../../../src/services/chain-rpc/core/token-bucket.js';

/** Takes at each time while allowed; the times at which a take succeeded. */
function takeAll(bucket: TokenBucket, times: readonly number[]): number[] {
  const taken: number[] = [];
  for (const t of times) {
    if (bucket.allows(t)) {
      bucket.take(t);
      taken.push(t);
    }
  }
  return taken;
}

describe('TokenBucket: tables', () => {
  it('burst 1 spaces takes 1000 / rate ms apart', () => {
    const b = new TokenBucket({ ratePerSecond: 4, burst: 1 });
    expect(takeAll(b, [0, 0, 100, 249, 250, 251, 500])).toEqual([0, 250, 500]);
    expect(b.nextAt()).toBe(750);
  });

  it('a full bucket lets burst takes go at once, then refills at the rate', () => {
    const b = new TokenBucket({ ratePerSecond: 10, burst: 3 });
    expect(takeAll(b, [0, 0, 0, 0])).toEqual([0, 0, 0]);
    expect(b.nextAt()).toBe(100);
    expect(takeAll(b, [99, 100, 150, 200])).toEqual([100, 200]);
    // 2 s quiet: full again (3 tokens), not more.
    expect(takeAll(b, [2200, 2200, 2200, 2200])).toEqual([2200, 2200, 2200]);
  });

  it('rate 0 is no limit', () => {
    const b = new TokenBucket({ ratePerSecond: 0, burst: 1 });
    expect(takeAll(b, [0, 0, 0, 0, 0])).toHaveLength(5);
    expect(b.nextAt()).toBe(-Infinity);
  });

  it('new limits keep the tokens spent, converted to the new rate and capped at the new size', () => {
    const b = new TokenBucket({ ratePerSecond: 1, burst: 4 });
    takeAll(b, [0, 0, 0, 0]); // all four spent: full again at 4000
    b.reconfigure({ ratePerSecond: 10, burst: 2 }, 500);
    // 3.5 tokens still owed, capped at 2 (the new size): the next at 500 + 100.
    expect(b.allows(599)).toBe(false);
    expect(b.nextAt()).toBe(600);
    b.reconfigure({ ratePerSecond: 0, burst: 1 }, 550);
    expect(b.allows(550)).toBe(true);
    b.reconfigure({ ratePerSecond: 2, burst: 1 }, 560);
    expect(b.allows(560)).toBe(true);
  });

  it('throws a typed error on illegal limits or a take without a token', () => {
    expect(() => new TokenBucket({ ratePerSecond: -1, burst: 1 })).toThrow(TokenBucketError);
    expect(() => new TokenBucket({ ratePerSecond: 1, burst: 0 })).toThrow(TokenBucketError);
    expect(() => new TokenBucket({ ratePerSecond: Number.NaN, burst: 1 })).toThrow(TokenBucketError);
    const b = new TokenBucket({ ratePerSecond: 1, burst: 1 });
    b.take(0);
    expect(() => b.take(10)).toThrow(TokenBucketError);
  });
});

describe('TokenBucket: properties', () => {
  const limits = fc.record({
    ratePerSecond: fc.constantFrom(0, 0.5, 3, 7, 20, 1000),
    burst: fc.integer({ min: 1, max: 5 }),
  });
  const step = fc.oneof(
    {
      arbitrary: fc.record({ dt: fc.integer({ min: 0, max: 700 }), tries: fc.integer({ min: 1, max: 4 }) }),
      weight: 6,
    },
    { arbitrary: fc.record({ dt: fc.integer({ min: 0, max: 700 }), limits }), weight: 1 },
  );

  it('over any window of W ms at most burst + rate · W / 1000 takes; nextAt is the first time one passes', () => {
    fc.assert(
      fc.property(limits, fc.array(step, { maxLength: 150 }), (initial, steps) => {
        const bucket = new TokenBucket(initial);
        let l: TokenBucketLimits = initial;
        let segment: number[] = [];
        let now = 0;
        const bound = () => {
          if (l.ratePerSecond === 0) return;
          for (let i = 0; i < segment.length; i++) {
            for (let j = i; j < segment.length; j++) {
              const w = (segment[j] as number) - (segment[i] as number);
              expect(j - i + 1).toBeLessThanOrEqual(l.burst + (l.ratePerSecond * w) / 1000 + 1e-9);
            }
          }
        };
        for (const st of steps) {
          now += st.dt;
          if ('limits' in st) {
            bound();
            bucket.reconfigure(st.limits, now);
            l = st.limits;
            segment = [];
            continue;
          }
          for (let k = 0; k < st.tries; k++) {
            const next = bucket.nextAt();
            // A take passes exactly from nextAt on (no float drift between the check and the wake-up).
            expect(bucket.allows(now)).toBe(now >= next);
            if (next > now) expect(bucket.allows(next)).toBe(true);
            if (bucket.allows(now)) {
              bucket.take(now);
              segment.push(now);
            }
          }
        }
        bound();
      }),
    );
  });

  it('a bucket that waits for nextAt each time sends at the rate: n takes span (n − burst) · 1000 / rate', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 10, max: 60 }),
        (rate, burst, n) => {
          const bucket = new TokenBucket({ ratePerSecond: rate, burst });
          let now = 0;
          for (let i = 0; i < n; i++) {
            now = Math.max(now, bucket.nextAt());
            bucket.take(now);
          }
          expect(now).toBeCloseTo((Math.max(0, n - burst) * 1000) / rate, 6);
        },
      ),
    );
  });
});
