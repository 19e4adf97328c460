import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Prng, seedOf } from '../../../../../src/services/storage/block-data/prng.js';

const take = (p: Prng, n: number) => Array.from({ length: n }, () => p.nextU32());

describe('Prng', () => {
  it('is the mulberry32 sequence, pinned: a changed generator would silently change every synthetic chain', () => {
    // mulberry32(1) starts 0.6270739405881613 × 2^32.
    expect(take(new Prng(1), 3)).toEqual([2693262067, 11749833, 2265367787]);
  });

  it('the same seed gives the same sequence; different seeds differ', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (seed) => {
        expect(take(new Prng(seed), 16)).toEqual(take(new Prng(seed), 16));
        expect(take(new Prng(seed), 16)).not.toEqual(take(new Prng((seed + 1) >>> 0), 16));
      }),
    );
  });

  it('int stays within its inclusive bounds and reaches both ends', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: -1000, max: 1000 }), fc.nat(20), (seed, min, width) => {
        const p = new Prng(seed);
        for (let i = 0; i < 50; i++) {
          const v = p.int(min, min + width);
          expect(Number.isInteger(v) && v >= min && v <= min + width).toBe(true);
        }
      }),
    );
    const p = new Prng(3);
    const seen = new Set(Array.from({ length: 500 }, () => p.int(1, 4)));
    expect([...seen].sort()).toEqual([1, 2, 3, 4]);
    expect(() => p.int(5, 4)).toThrow(RangeError);
  });

  it('hex gives lowercase 0x-prefixed strings of exactly the asked bytes', () => {
    const p = new Prng(9);
    for (const bytes of [1, 3, 4, 20, 32, 33])
      expect(p.hex(bytes)).toMatch(new RegExp(`^0x[0-9a-f]{${bytes * 2}}$`));
  });

  it('bigAmount has between min and max decimal digits and no leading zero', () => {
    const p = new Prng(5);
    for (let i = 0; i < 300; i++) {
      const s = p.bigAmount(1, 25).toString();
      expect(s.length).toBeGreaterThanOrEqual(1);
      expect(s.length).toBeLessThanOrEqual(25);
      expect(s).toMatch(/^[1-9]\d*$/);
    }
  });

  it('weighted never picks a zero weight and follows the proportions roughly', () => {
    const p = new Prng(11);
    const counts = { a: 0, b: 0, never: 0 };
    const weights = { a: 3, b: 1, never: 0 };
    for (let i = 0; i < 4000; i++) counts[p.weighted(weights)]++;
    expect(counts.never).toBe(0);
    expect(counts.a / counts.b).toBeGreaterThan(2.4);
    expect(counts.a / counts.b).toBeLessThan(3.7);
  });

  it('skewedIndex favours low indexes and stays in range', () => {
    const p = new Prng(2);
    const xs = Array.from({ length: 2000 }, () => p.skewedIndex(100, 3));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(100);
    expect(xs.filter((x) => x < 25).length).toBeGreaterThan(xs.filter((x) => x >= 75).length * 3);
  });
});

describe('seedOf', () => {
  it('is deterministic, order-sensitive, and uses the high word of large numbers', () => {
    expect(seedOf(1, 2, 3)).toBe(seedOf(1, 2, 3));
    expect(seedOf(1, 2)).not.toBe(seedOf(2, 1));
    expect(seedOf(1)).not.toBe(seedOf(1 + 2 ** 32));
    expect(seedOf(-1)).not.toBe(seedOf(1));
  });

  it('spreads neighbouring tuples (no collisions among 10k block numbers)', () => {
    const seeds = new Set(Array.from({ length: 10_000 }, (_, n) => seedOf(1, 1, 2, n, 0)));
    expect(seeds.size).toBe(10_000);
  });

  it('rejects non-integers', () => {
    expect(() => seedOf(1.5)).toThrow(RangeError);
    expect(() => seedOf(Number.NaN)).toThrow(RangeError);
  });
});
