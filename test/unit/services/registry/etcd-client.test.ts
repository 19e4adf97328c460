import { describe, expect, it } from 'vitest';
import {
  DEFAULT_ETCD_UNARY_DEADLINE_MS,
  ETCD_HOST_BREAKER_HALF_OPEN_AFTER_MS,
  ETCD_RETRY_BACKOFF,
  ETCD_WATCH_BACKOFF,
  createEtcdClient,
  normalizeEtcdEndpoint,
  tunedFaultHandling,
} from '../../../../src/services/registry/etcd-client.js';
import { leaseTtlSeconds } from '../../../../src/services/registry/etcd-registry-writer.js';

describe('normalizeEtcdEndpoint', () => {
  it.each([
    ['localhost:2379', 'http://localhost:2379'],
    [' 127.0.0.1:2379 ', 'http://127.0.0.1:2379'],
    ['http://10.0.0.1:2379/', 'http://10.0.0.1:2379'],
    ['https://etcd.example:2379', 'https://etcd.example:2379'],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeEtcdEndpoint(input)).toBe(expected);
  });
});

describe('tuned fault handling', () => {
  it('uses a 250 ms half-open breaker, 50–500 ms retry backoff, 100–1000 ms watch backoff, 5 s deadline', () => {
    expect(ETCD_HOST_BREAKER_HALF_OPEN_AFTER_MS).toBe(250);
    expect(ETCD_RETRY_BACKOFF).toEqual({ initialDelay: 50, maxDelay: 500 });
    expect(ETCD_WATCH_BACKOFF).toEqual({ initialDelay: 100, maxDelay: 1_000 });
    expect(DEFAULT_ETCD_UNARY_DEADLINE_MS).toBe(5_000);
    const fh = tunedFaultHandling();
    expect(fh.host).toBeTypeOf('function');
    expect(fh.global).toBeDefined();
    // Watch backoff is used as a factory by etcd3: every sequence starts at or under the max delay.
    const first = (fh.watchBackoff as unknown as { next(): { duration: number } }).next();
    expect(first.duration).toBeGreaterThanOrEqual(0);
    expect(first.duration).toBeLessThanOrEqual(1_000);
  });

  it('refuses an empty endpoint list', () => {
    expect(() => createEtcdClient({ endpoints: [] })).toThrow(/endpoint/);
  });
});

describe('leaseTtlSeconds', () => {
  it.each([
    [10_000, 10],
    [1_500, 2],
    [1, 1],
    [0, 1],
  ])('%i ms -> %i s', (ms, s) => {
    expect(leaseTtlSeconds(ms)).toBe(s);
  });
});
