// A small seeded pseudo-random generator for the synthetic chain. Not for cryptography: it only has to be
// fast, well spread and exactly reproducible on every platform, so every step is 32-bit integer arithmetic
// (Math.imul, >>>) and never touches floating-point rounding except in `next()`'s final scaling.
//
// Streams are derived, not advanced: `seedOf(seed, chainId, blockNumber, ...)` hashes a tuple into a 32-bit
// state, so block n's content depends only on (seed, chain, n) and never on which blocks were generated
// before it. `generate --from 51` therefore produces the same block 51 as `generate --from 1`.

/** Murmur3's 32-bit finaliser: every input bit affects every output bit. */
function avalanche(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Hashes a tuple of integers (each a safe integer, negative allowed) into one 32-bit seed. Order matters:
 * `seedOf(1, 2) !== seedOf(2, 1)`. Numbers above 2^32 contribute their high word too.
 */
export function seedOf(...parts: readonly number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    if (!Number.isSafeInteger(part)) throw new RangeError(`seedOf: ${part} is not a safe integer`);
    const lo = part >>> 0;
    const hi = Math.floor(part / 0x1_0000_0000) >>> 0;
    h = avalanche((h ^ lo) + Math.imul(hi ^ 0x27d4eb2f, 0x165667b1));
    h = avalanche(Math.imul(h, 5) + 0xe6546b64);
  }
  return h;
}

const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** A generator of 32-bit values from one 32-bit state (the "mulberry" family of mixers). */
export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The next value in [0, 2^32). */
  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 0x1_0000_0000;
  }

  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max < min)
      throw new RangeError(`Prng.int: bad range [${min}, ${max}]`);
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /**
   * An index in [0, n) skewed towards 0: `skew` 1 is uniform, larger values favour low indexes (a few
   * popular accounts and tokens, a long tail), the way real activity concentrates.
   */
  skewedIndex(n: number, skew: number): number {
    return Math.min(n - 1, Math.floor(n * Math.pow(this.next(), skew)));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Prng.pick: empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Picks a key with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const table = cumulativeOf(weights);
    const r = this.next() * table.total;
    for (const [key, upTo] of table.entries) if (r < upTo) return key as K;
    const last = table.entries[table.entries.length - 1];
    if (last === undefined) throw new RangeError('Prng.weighted: no weights');
    return last[0] as K;
  }

  /** `bytes` random bytes as lowercase hex digits, without a 0x prefix. */
  hexDigits(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i += 4) {
      let v = this.nextU32();
      for (let j = 0; j < 4 && i + j < bytes; j++) {
        out += HEX_BYTE[v & 0xff];
        v >>>= 8;
      }
    }
    return out;
  }

  /** `bytes` random bytes as a 0x-prefixed hex string. */
  hex(bytes: number): string {
    return `0x${this.hexDigits(bytes)}`;
  }

  /**
   * A random positive integer of `minDigits`..`maxDigits` decimal digits (log-uniform, like real token
   * amounts and wei values), as a bigint.
   */
  bigAmount(minDigits: number, maxDigits: number): bigint {
    let digits = this.int(minDigits, maxDigits);
    let text = String(this.int(1, 9));
    for (digits -= 1; digits > 0; digits -= 9) {
      const n = Math.min(9, digits);
      text += String(this.int(0, 10 ** n - 1)).padStart(n, '0');
    }
    return BigInt(text);
  }
}

interface Cumulative {
  readonly entries: readonly (readonly [string, number])[];
  readonly total: number;
}
const cumulativeCache = new WeakMap<object, Cumulative>();

/** Weight tables are constants: their running sums are computed once per table object. */
function cumulativeOf(weights: Readonly<Record<string, number>>): Cumulative {
  let table = cumulativeCache.get(weights);
  if (table === undefined) {
    let total = 0;
    const entries = Object.entries(weights).map(([key, w]) => [key, (total += w)] as const);
    table = { entries, total };
    cumulativeCache.set(weights, table);
  }
  return table;
}
