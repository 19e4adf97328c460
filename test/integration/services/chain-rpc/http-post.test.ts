// The RpcClient's HTTP port (src/services/chain-rpc/adapters/http-post.ts) against a real node:http server: what
// it sends (the body, Basic authorization from the URL's credentials and not in the request line), what it
// reads (status, Retry-After, the body), that a body cut short and a timeout reject rather than answer, and
// that sequential posts share one kept-alive socket until close().
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { keepAlivePoster, type HttpPoster } from '../../../../src/services/chain-rpc/adapters/http-post.js';

interface Seen {
  readonly url: string | undefined;
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  readonly body: string;
}

let server: Server | undefined;
let poster: HttpPoster | undefined;

afterEach(async () => {
  poster?.close();
  poster = undefined;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

async function serve(
  answer: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<{ port: number; seen: Seen[]; sockets: Set<Socket> }> {
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({
        url: req.url,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      });
      answer(req, res, body);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { port: (server?.address() as AddressInfo).port, seen, sockets };
}

const never = () => new AbortController().signal;

describe('keepAlivePoster', () => {
  it('posts the JSON body, sends URL credentials as Basic authorization, and reads status, Retry-After and body', async () => {
    const { port, seen } = await serve((_req, res, body) => {
      res.writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' });
      res.end(`{"echo":${body}}`);
    });
    poster = keepAlivePoster();
    const answer = await poster.post(`http://u%40x:p%3Aw@127.0.0.1:${port}/v3/path?q=1`, '{"a":1}', never());
    expect(answer).toEqual({ status: 429, retryAfter: '3', body: '{"echo":{"a":1}}' });
    expect(seen).toEqual([
      {
        url: '/v3/path?q=1',
        authorization: `Basic ${Buffer.from('u@x:p:w').toString('base64')}`,
        contentType: 'application/json',
        body: '{"a":1}',
      },
    ]);
  });

  it('sequential posts reuse one socket; close() closes it', async () => {
    const { port, sockets } = await serve((_req, res) => res.end('{}'));
    poster = keepAlivePoster();
    for (let i = 0; i < 5; i++) await poster.post(`http://127.0.0.1:${port}/`, '{}', never());
    expect(sockets.size).toBe(1);
    poster.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sockets.size).toBe(0);
  });

  it('a body cut short rejects instead of answering with what came', async () => {
    const { port } = await serve((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('{"jsonrpc":"2.0"');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    poster = keepAlivePoster();
    await expect(poster.post(`http://127.0.0.1:${port}/`, '{}', never())).rejects.toMatchObject({
      code: 'ECONNRESET',
    });
  });

  it('an aborted signal rejects with the abort', async () => {
    const { port } = await serve(() => undefined); // never answers
    poster = keepAlivePoster();
    const err = await poster.post(`http://127.0.0.1:${port}/`, '{}', AbortSignal.timeout(50)).catch((e) => e);
    expect((err as Error).name).toBe('AbortError');
  });

  it('a refused connection rejects with its code', async () => {
    const { port } = await serve(() => undefined);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    server = undefined;
    poster = keepAlivePoster();
    await expect(poster.post(`http://127.0.0.1:${port}/`, '{}', never())).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });
});
