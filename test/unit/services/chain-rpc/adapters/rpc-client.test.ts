// RpcClient against a fake of its HttpPost port (no sockets): how answers are read, which ones are retried,
// what an error names. The same paths against Anvil behind the fault proxy: test/integration/services/chain-rpc/.
import { describe, expect, it } from 'vitest';
import {
  RpcClient,
  parseRetryAfter,
  type HttpAnswer,
  type HttpPost,
  type RpcSourceSettings,
} from '../../../../../src/services/chain-rpc/adapters/rpc-client.js';
import { ChainRpcErrorCode } from '../../../../../src/services/chain-rpc/errors.js';

const SETTINGS: RpcSourceSettings = {
  name: 'fake',
  urls: ['http://node.invalid/rpc'],
  maxConcurrentRequests: 4,
  requestsPerSecond: 0,
  requestBurst: 1,
  requestTimeoutMs: 1_000,
  maxAttempts: 3,
  initialBackoffMs: 0,
  maxBackoffMs: 0,
  maxRetryAfterMs: 1_000,
};

/** A post that answers from a script: each entry turns a request body into an answer (or throws). */
function scripted(script: ((body: string) => HttpAnswer)[]): { post: HttpPost; bodies: string[] } {
  const bodies: string[] = [];
  const post: HttpPost = (_url, body) => {
    bodies.push(body);
    const next = script.shift();
    if (next === undefined) return Promise.reject(new Error('script exhausted'));
    try {
      return Promise.resolve(next(body));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  };
  return { post, bodies };
}

const ok =
  (result: unknown) =>
  (body: string): HttpAnswer => {
    const req = JSON.parse(body) as { id: number } | { id: number }[];
    const answer = Array.isArray(req)
      ? req.map((r) => ({ jsonrpc: '2.0', id: r.id, result }))
      : { jsonrpc: '2.0', id: req.id, result };
    return { status: 200, retryAfter: null, body: JSON.stringify(answer) };
  };

describe('RpcClient over a fake post', () => {
  it('a batch answer missing one response is retried as a whole, then answered', async () => {
    const { post, bodies } = scripted([
      (body) => {
        const [first] = JSON.parse(body) as { id: number }[];
        return {
          status: 200,
          retryAfter: null,
          body: JSON.stringify([{ jsonrpc: '2.0', id: first?.id, result: 1 }]),
        };
      },
      ok(7),
    ]);
    const client = new RpcClient(SETTINGS, { post, random: () => 0 });
    const answers = await client.batch([
      { method: 'a', params: [] },
      { method: 'b', params: [] },
    ]);
    expect(answers).toEqual([
      { ok: true, result: 7 },
      { ok: true, result: 7 },
    ]);
    expect(bodies).toHaveLength(2);
    expect(client.stats).toMatchObject({ httpRequests: 2, retries: 1, rpcCalls: 2 });
  });

  it('an answer that is not JSON-RPC fails at once as BAD_RESPONSE', async () => {
    const { post } = scripted([() => ({ status: 200, retryAfter: null, body: '[1, 2]' })]);
    const client = new RpcClient(SETTINGS, { post, random: () => 0 });
    await expect(client.call('eth_chainId')).rejects.toMatchObject({
      code: ChainRpcErrorCode.BAD_RESPONSE,
      attempts: 1,
      retryable: false,
      method: 'eth_chainId',
      source: 'fake',
    });
  });

  it("a response with neither result nor error is that call's BAD_RESPONSE", async () => {
    const { post } = scripted([
      (body) => ({
        status: 200,
        retryAfter: null,
        body: JSON.stringify({ jsonrpc: '2.0', id: (JSON.parse(body) as { id: number }).id }),
      }),
    ]);
    const client = new RpcClient(SETTINGS, { post, random: () => 0 });
    await expect(client.call('eth_blockNumber')).rejects.toMatchObject({
      code: ChainRpcErrorCode.BAD_RESPONSE,
    });
  });

  it.each([
    [-32601, 'Method not found', ChainRpcErrorCode.METHOD_NOT_SUPPORTED],
    [
      -32000,
      'the method trace_block does not exist/is not available',
      ChainRpcErrorCode.METHOD_NOT_SUPPORTED,
    ],
    [-32000, 'header not found', ChainRpcErrorCode.RPC_ERROR],
  ])('a JSON-RPC error %i "%s" is %s, not retried', async (code, message, expected) => {
    const { post, bodies } = scripted([
      (body) => ({
        status: 200,
        retryAfter: null,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: (JSON.parse(body) as { id: number }).id,
          error: { code, message },
        }),
      }),
    ]);
    const client = new RpcClient(SETTINGS, { post, random: () => 0 });
    await expect(client.call('trace_block', ['0x1'])).rejects.toMatchObject({
      code: expected,
      rpcCode: code,
    });
    expect(bodies).toHaveLength(1);
  });

  it('refuses a URL that is not http(s), masking it', () => {
    expect(() => new RpcClient({ ...SETTINGS, urls: ['ftp://u:pw@host/'] })).toThrow(
      'source fake: ftp://u:***@host/ is not an http:// or https:// URL',
    );
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-12-05T00:00:00Z');
  it.each([
    [null, undefined],
    ['', undefined],
    ['0', 0],
    ['3', 3_000],
    ['Sat, 05 Dec 2026 00:00:10 GMT', 10_000],
    ['Fri, 04 Dec 2026 23:59:00 GMT', 0],
    ['soon', undefined],
  ])('%j → %j ms', (header, ms) => {
    expect(parseRetryAfter(header, now)).toBe(ms);
  });
});
