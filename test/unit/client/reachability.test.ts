// The connect check's pure parts (src/client/reachability.ts): address parsing, the one line per cause,
// the connect bound's precedence, and ensureReachable deciding the cause from its probes.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  connectTimeoutOf,
  ensureReachable,
  splitHostPort,
  unreachableMessage,
} from '../../../src/client/reachability.js';

describe('splitHostPort', () => {
  it.each([
    ['127.0.0.1:50051', { host: '127.0.0.1', port: 50051 }],
    ['coord.internal:8080', { host: 'coord.internal', port: 8080 }],
    ['[::1]:9090', { host: '::1', port: 9090 }],
    ['unix:/run/c.sock', undefined],
    ['127.0.0.1:0', undefined],
    ['127.0.0.1:70000', undefined],
    ['no-port', undefined],
  ])('%s', (address, expected) => {
    expect(splitHostPort(address)).toEqual(expected);
  });
});

describe('unreachableMessage', () => {
  const at = 'cannot reach the coordinator at h:1';
  it.each([
    [
      { cause: 'dns', errno: 'ENOTFOUND' },
      false,
      `${at}: the host name does not resolve (DNS ENOTFOUND): check the address`,
    ],
    [
      { cause: 'refused', errno: 'ECONNREFUSED' },
      false,
      `${at}: nothing is listening there (ECONNREFUSED): is the coordinator running, and on this port?`,
    ],
    [
      { cause: 'no-route', errno: 'EHOSTUNREACH' },
      false,
      `${at}: no route to the host (EHOSTUNREACH): check the address and the network`,
    ],
    [{ cause: 'timeout' }, false, `${at}: no answer within 5000 ms (a firewall, or a wrong host?)`],
    [
      { cause: 'no-grpc' },
      false,
      `${at}: it accepts connections but no gRPC session came up within 5000 ms: a TLS mismatch (this client uses plaintext; the server may want TLS: set \`tls\` in the config) or not a BlockX server`,
    ],
    [
      { cause: 'no-grpc' },
      true,
      `${at}: it accepts connections but no gRPC session came up within 5000 ms: a TLS mismatch (this client uses TLS; does the server?) or not a BlockX server`,
    ],
  ] as const)('%o (tls %s)', (detail, tls, line) => {
    expect(unreachableMessage('coordinator', 'h:1', detail, 5000, tls)).toBe(line);
  });
});

describe('connectTimeoutOf', () => {
  it.each([
    [undefined, {}, DEFAULT_CONNECT_TIMEOUT_MS],
    [undefined, { BLOCKX_CONNECT_TIMEOUT_MS: '1500' }, 1500],
    [undefined, { BLOCKX_CONNECT_TIMEOUT_MS: ' ' }, DEFAULT_CONNECT_TIMEOUT_MS],
    ['250', { BLOCKX_CONNECT_TIMEOUT_MS: '1500' }, 250],
  ])('flag %s, env %o → %d ms', (flag, env, ms) => {
    expect(connectTimeoutOf(flag, env)).toBe(ms);
  });

  it.each([
    ['0', {}, '--connect-timeout must be an integer number of milliseconds in 1..600000, got 0'],
    ['1.5', {}, '--connect-timeout must be an integer number of milliseconds in 1..600000, got 1.5'],
    [
      undefined,
      { BLOCKX_CONNECT_TIMEOUT_MS: 'soon' },
      'BLOCKX_CONNECT_TIMEOUT_MS must be an integer number of milliseconds in 1..600000, got soon',
    ],
  ])('flag %s, env %o is refused', (flag, env, message) => {
    expect(() => connectTimeoutOf(flag, env)).toThrow(message);
  });
});

describe('ensureReachable', () => {
  it('a target that is not host:port skips the TCP probe; a failed gRPC wait is a timeout', async () => {
    const asked: number[] = [];
    await expect(
      ensureReachable({
        role: 'worker',
        address: 'unix:/run/w.sock',
        timeoutMs: 800,
        tls: false,
        clock: () => 0,
        waitForReady: (ms) => {
          asked.push(ms);
          return Promise.reject(new Error('deadline'));
        },
      }),
    ).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      address: 'unix:/run/w.sock',
      message:
        'cannot reach the worker at unix:/run/w.sock: no answer within 800 ms (a firewall, or a wrong host?)',
    });
    expect(asked).toEqual([800]);
  });

  it('resolves when the gRPC wait does', async () => {
    await expect(
      ensureReachable({
        role: 'worker',
        address: 'unix:/run/w.sock',
        timeoutMs: 800,
        tls: false,
        waitForReady: () => Promise.resolve(),
      }),
    ).resolves.toBeUndefined();
  });
});
