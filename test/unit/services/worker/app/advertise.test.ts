import { describe, expect, it } from 'vitest';
import {
  advertiseAddress,
  boundAddress,
  splitHostPort,
} from '../../../../../src/services/worker/app/advertise.js';

const base = {
  configured: '',
  boundPort: 43210,
  reachableFromOtherHosts: false,
  externalIpv4: () => '10.1.2.3',
};

describe('advertiseAddress', () => {
  it.each([
    ['127.0.0.1:0', false, '127.0.0.1:43210'],
    [':9090', false, '127.0.0.1:43210'],
    ['0.0.0.0:9090', false, '127.0.0.1:43210'],
    ['[::]:9090', false, '127.0.0.1:43210'],
    ['worker-3.internal:9090', false, 'worker-3.internal:43210'],
    [':9090', true, '10.1.2.3:43210'],
    ['127.0.0.1:0', true, '127.0.0.1:43210'],
  ])('listen %s (shared registry: %s) → %s', (listen, reachable, expected) => {
    expect(advertiseAddress({ ...base, listen, reachableFromOtherHosts: reachable })).toBe(expected);
  });

  it('WORKER_ADVERTISE_ADDR wins', () => {
    expect(advertiseAddress({ ...base, configured: 'w1.example:9090', listen: ':9090' })).toBe(
      'w1.example:9090',
    );
  });

  it('falls back to 127.0.0.1 when the host has no external IPv4', () => {
    expect(
      advertiseAddress({
        ...base,
        listen: ':9090',
        reachableFromOtherHosts: true,
        externalIpv4: () => undefined,
      }),
    ).toBe('127.0.0.1:43210');
  });
});

describe('boundAddress / splitHostPort', () => {
  it('puts the bound port on the listen host', () => {
    expect(boundAddress(':0', 5)).toBe('0.0.0.0:5');
    expect(boundAddress('127.0.0.1:0', 5)).toBe('127.0.0.1:5');
    expect(splitHostPort('unix:/run/w.sock')).toBeUndefined();
    expect(splitHostPort('[::1]:80')).toEqual({ host: '[::1]', port: '80' });
  });
});
