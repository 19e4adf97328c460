// RpcClient against a real node (Anvil) behind the fault-injecting proxy: each fault is retried or turned
// into the error its code names, and every error names the source, the masked URL and the method.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RpcClient, type RpcSourceSettings } from '../../../../src/services/chain-rpc/adapters/rpc-client.js';
import { ChainRpcError, ChainRpcErrorCode } from '../../../../src/services/chain-rpc/errors.js';
import { startAnvil, type AnvilNode } from '../../../support/anvil.js';
import { freePort } from '../../../support/ports.js';
import { startFaultProxy, type FaultProxy } from '../../../support/rpc-fault-proxy.js';

const settings = (urls: string[], over: Partial<RpcSourceSettings> = {}): RpcSourceSettings => ({
  name: 'test',
  urls,
  maxConcurrentRequests: 4,
  requestsPerSecond: 0,
  requestBurst: 1,
  requestTimeoutMs: 2_000,
  maxAttempts: 4,
  initialBackoffMs: 10,
  maxBackoffMs: 50,
  maxRetryAfterMs: 5_000,
  ...over,
});

async function rejection(p: Promise<unknown>): Promise<ChainRpcError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ChainRpcError);
    return err as ChainRpcError;
  }
  throw new Error('expected a rejection');
}

describe('RpcClient against Anvil through the fault proxy', () => {
  let anvil: AnvilNode;
  let proxy: FaultProxy;
  const clients: RpcClient[] = [];
  const client = (over: Partial<RpcSourceSettings> = {}, urls = [proxy.url]) => {
    const c = new RpcClient(settings(urls, over));
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    anvil = await startAnvil();
    proxy = await startFaultProxy(anvil.url);
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
    proxy.rule(() => ({ kind: 'pass' }));
  });
  afterAll(async () => {
    await proxy?.close();
    await anvil?.stop();
  });

  it('answers a call, and a batch in one HTTP request', async () => {
    const c = client();
    expect(await c.call<string>('eth_chainId')).toBe('0x7a69');
    const before = proxy.requests;
    const answers = await c.batch([
      { method: 'eth_chainId', params: [] },
      { method: 'eth_blockNumber', params: [] },
      { method: 'no_such_method', params: [] },
    ]);
    expect(proxy.requests - before).toBe(1);
    expect(answers[0]).toEqual({ ok: true, result: '0x7a69' });
    expect(answers[1]?.ok).toBe(true);
    expect(answers[2]?.ok).toBe(false);
    expect(!answers[2]?.ok && answers[2]?.error.code).toBe(ChainRpcErrorCode.METHOD_NOT_SUPPORTED);
    expect(c.stats).toMatchObject({ httpRequests: 2, rpcCalls: 4, retries: 0 });
  });

  it('retries a dropped connection, a 500, a truncated body and a 429 with Retry-After, then answers', async () => {
    const c = client();
    proxy.next({ kind: 'drop' }, { kind: 'status', status: 500 }, { kind: 'truncate', bytes: 10 });
    expect(await c.call<string>('eth_chainId')).toBe('0x7a69');
    proxy.next({ kind: 'status', status: 429, retryAfter: '0' }, { kind: 'status', status: 503 });
    expect(await c.call<string>('eth_chainId')).toBe('0x7a69');
    expect(c.stats.retries).toBe(5);
  });

  it('gives up after maxAttempts with the last cause, naming source, masked URL and method', async () => {
    const c = client({ maxAttempts: 3 });
    proxy.rule(() => ({ kind: 'status', status: 502 }));
    const err = await rejection(c.call('eth_blockNumber'));
    expect(err.code).toBe(ChainRpcErrorCode.HTTP_STATUS);
    expect(err).toMatchObject({
      source: 'test',
      method: 'eth_blockNumber',
      attempts: 3,
      retryable: true,
      httpStatus: 502,
    });
    expect(err.message).toContain('source test');
    expect(err.message).toContain('eth_blockNumber');
    expect(err.message).toContain('HTTP 502');
  });

  it('does not retry a status that is not worth it (401)', async () => {
    const c = client();
    proxy.next({ kind: 'status', status: 401 });
    const err = await rejection(c.call('eth_blockNumber'));
    expect(err).toMatchObject({ code: ChainRpcErrorCode.HTTP_STATUS, attempts: 1, retryable: false });
  });

  it('a Retry-After longer than maxRetryAfterMs fails at once as RATE_LIMITED', async () => {
    const c = client({ maxRetryAfterMs: 1_000 });
    proxy.next({ kind: 'status', status: 429, retryAfter: '3600' });
    const err = await rejection(c.call('eth_blockNumber'));
    expect(err).toMatchObject({ code: ChainRpcErrorCode.RATE_LIMITED, attempts: 1 });
  });

  it('times out a slow answer and says so', async () => {
    const c = client({ requestTimeoutMs: 100, maxAttempts: 2 });
    proxy.rule(() => ({ kind: 'delay', ms: 1_000 }));
    const err = await rejection(c.call('eth_blockNumber'));
    expect(err).toMatchObject({ code: ChainRpcErrorCode.TIMEOUT, attempts: 2 });
    expect(err.message).toContain('no answer within 100 ms');
  });

  it('an unreachable URL fails as UNREACHABLE with its credentials masked', async () => {
    const port = await freePort();
    const c = client({ maxAttempts: 2 }, [`http://user:hunter2@127.0.0.1:${port}/v3/abcdef0123456789abcdef`]);
    const err = await rejection(c.call('eth_chainId'));
    expect(err.code).toBe(ChainRpcErrorCode.UNREACHABLE);
    expect(err.url).toBe(`http://user:***@127.0.0.1:${port}/v3/***`);
    expect(err.message).not.toContain('hunter2');
    expect(err.message).not.toContain('abcdef0123456789abcdef');
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('goes to the fallback URL when the primary fails', async () => {
    const port = await freePort();
    const c = client({}, [`http://127.0.0.1:${port}`, proxy.url]);
    expect(await c.call<string>('eth_chainId')).toBe('0x7a69');
    expect(c.stats).toMatchObject({ httpRequests: 2, retries: 1 });
  });

  it('keeps at most maxConcurrentRequests in flight', async () => {
    const c = client({ maxConcurrentRequests: 2 });
    let inFlight = 0;
    let most = 0;
    proxy.rule(() => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => inFlight--, 50);
      return { kind: 'delay', ms: 50 };
    });
    await Promise.all(Array.from({ length: 8 }, () => c.call('eth_blockNumber')));
    expect(most).toBe(2);
  });
});
