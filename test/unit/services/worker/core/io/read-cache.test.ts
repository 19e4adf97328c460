import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../../../../src/kernel/canonical-json.js';
import { ReadCache, readCacheKey } from '../../../../../../src/services/worker/core/io/index.js';

describe('readCacheKey', () => {
  it('is independent of key column order, at every level', () => {
    expect(readCacheKey('t', { a: 1, b: 'x' })).toBe(readCacheKey('t', { b: 'x', a: 1 }));
    expect(canonicalJson({ z: { b: 1, a: [2, { d: 1, c: 0 }] } })).toBe(
      '{"z":{"a":[2,{"c":0,"d":1}],"b":1}}',
    );
  });

  it('differs across tables and values', () => {
    expect(readCacheKey('t', { a: 1 })).not.toBe(readCacheKey('u', { a: 1 }));
    expect(readCacheKey('t', { a: 1 })).not.toBe(readCacheKey('t', { a: '1' }));
  });

  it('equal keys with shuffled columns give equal cache keys (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(fc.integer(), fc.string(), fc.boolean())), (key) => {
        const reversed = Object.fromEntries(Object.entries(key).reverse());
        expect(readCacheKey('t', reversed)).toBe(readCacheKey('t', key));
      }),
    );
  });
});

describe('ReadCache', () => {
  it('counts hits and misses', () => {
    const cache = new ReadCache<string>(10);
    expect(cache.lookup('k')).toEqual({ hit: false });
    cache.set('t', 'k', 'v');
    expect(cache.lookup('k')).toEqual({ hit: true, value: 'v' });
    expect(cache.stats()).toEqual({ entries: 1, hits: 1, misses: 1, evictions: 0 });
  });

  it('evicts the least recently used entry beyond the bound', () => {
    const cache = new ReadCache<number>(2);
    cache.set('t', 'a', 1);
    cache.set('t', 'b', 2);
    cache.lookup('a'); // a is now more recent than b
    cache.set('t', 'c', 3);
    expect(cache.has('a')).toBe(true);
    expect(cache.has('b')).toBe(false);
    expect(cache.has('c')).toBe(true);
    expect(cache.stats().evictions).toBe(1);
  });

  it('never holds more than maxEntries (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 8 }), fc.array(fc.integer({ min: 0, max: 20 })), (max, keys) => {
        const cache = new ReadCache<number>(max);
        for (const k of keys) cache.set('t', String(k), k);
        expect(cache.size).toBeLessThanOrEqual(max);
      }),
    );
  });

  it('0 disables it: nothing is stored', () => {
    const cache = new ReadCache<number>(0);
    expect(cache.enabled).toBe(false);
    cache.set('t', 'a', 1);
    expect(cache.has('a')).toBe(false);
  });

  it('invalidateTables drops only the entries of those tables', () => {
    const cache = new ReadCache<number>(10);
    cache.set('t', readCacheKey('t', { id: 1 }), 1);
    cache.set('t', readCacheKey('t', { id: 2 }), 2);
    cache.set('u', readCacheKey('u', { id: 1 }), 3);
    expect(cache.invalidateTables(['t'])).toBe(2);
    expect(cache.has(readCacheKey('u', { id: 1 }))).toBe(true);
    expect(cache.size).toBe(1);
  });

  it('deleteIfSame leaves a newer value alone', () => {
    const cache = new ReadCache<string>(10);
    cache.set('t', 'k', 'old');
    cache.set('t', 'k', 'new');
    expect(cache.deleteIfSame('k', 'old')).toBe(false);
    expect(cache.has('k')).toBe(true);
    expect(cache.deleteIfSame('k', 'new')).toBe(true);
    expect(cache.has('k')).toBe(false);
  });
});
