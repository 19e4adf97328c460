// A fault-injecting HTTP proxy for JSON-RPC, put in front of Anvil (./anvil.ts) to drive the RPC access
// layer's retry and error paths. Each incoming request takes the next fault from a queue (or from a rule);
// with none left it passes through. Faults: drop the connection, delay, answer 429 with a Retry-After, answer
// an HTTP status, truncate the upstream's body, or rewrite eth_chainId answers (a node lying about its chain).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | { readonly kind: 'pass' }
  /** Close the connection without an answer. */
  | { readonly kind: 'drop' }
  /** Wait, then pass through (longer than the client's timeout: a timeout). */
  | { readonly kind: 'delay'; readonly ms: number }
  | { readonly kind: 'status'; readonly status: number; readonly retryAfter?: string; readonly body?: string }
  /** Pass through, but send only the first `bytes` of the upstream's body. */
  | { readonly kind: 'truncate'; readonly bytes: number };

export interface FaultProxy {
  readonly url: string;
  /** Faults for the next requests, in order. */
  next(...faults: Fault[]): void;
  /** A rule for every request after the queue is empty (default: pass). */
  rule(fn: (body: string) => Fault): void;
  /** Answer eth_chainId with this hex instead of the upstream's (undefined: the truth). */
  lieChainId(hex: string | undefined): void;
  /** Answer calls of these methods with JSON-RPC error -32601, as a node that does not serve them. */
  refuseMethods(methods: readonly string[]): void;
  /** Requests seen (each HTTP request once, faulted or not). */
  readonly requests: number;
  /** Bodies of the requests seen, in order. */
  readonly bodies: readonly string[];
  /** When each request arrived (performance.now() ms), in the order of `bodies`. */
  readonly arrivals: readonly number[];
  /** The Authorization header of each request ('' when absent), in the order of `bodies`. */
  readonly authorizations: readonly string[];
  close(): Promise<void>;
}

export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  const queue: Fault[] = [];
  let rule: (body: string) => Fault = () => ({ kind: 'pass' });
  let chainIdLie: string | undefined;
  let refused = new Set<string>();
  const bodies: string[] = [];
  const arrivals: number[] = [];
  const authorizations: string[] = [];

  const forward = async (body: string): Promise<{ status: number; text: string }> => {
    if (refused.size > 0) return forwardServed(body);
    const res = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    let text = await res.text();
    if (chainIdLie !== undefined && body.includes('"eth_chainId"'))
      text = rewriteChainId(body, text, chainIdLie);
    return { status: res.status, text };
  };

  // Forwards the calls the node "serves" and answers the refused ones with -32601, in one answer.
  const forwardServed = async (body: string): Promise<{ status: number; text: string }> => {
    const parsed = JSON.parse(body) as RpcRequest | RpcRequest[];
    const list = Array.isArray(parsed) ? parsed : [parsed];
    const served = list.filter((r) => !refused.has(r.method));
    const answers: unknown[] = [];
    if (served.length > 0) {
      const res = await fetch(upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(served),
      });
      answers.push(...((await res.json()) as unknown[]));
    }
    for (const r of list.filter((r) => refused.has(r.method))) {
      answers.push({
        jsonrpc: '2.0',
        id: r.id,
        error: { code: -32601, message: `the method ${r.method} does not exist/is not available` },
      });
    }
    return { status: 200, text: JSON.stringify(Array.isArray(parsed) ? answers : answers[0]) };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    bodies.push(body);
    arrivals.push(performance.now());
    authorizations.push(req.headers.authorization ?? '');
    const fault = queue.shift() ?? rule(body);
    switch (fault.kind) {
      case 'drop':
        req.socket.destroy();
        return;
      case 'status':
        res.writeHead(fault.status, {
          'content-type': 'text/plain',
          ...(fault.retryAfter !== undefined ? { 'retry-after': fault.retryAfter } : {}),
        });
        res.end(fault.body ?? `injected ${fault.status}`);
        return;
      case 'delay':
        await new Promise((resolve) => setTimeout(resolve, fault.ms));
        break;
      case 'truncate': {
        const { status, text } = await forward(body);
        const cut = Buffer.from(text).subarray(0, fault.bytes);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': cut.length });
        res.end(cut);
        return;
      }
      case 'pass':
        break;
    }
    if (res.destroyed) return;
    const { status, text } = await forward(body);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    next: (...faults) => queue.push(...faults),
    rule: (fn) => {
      rule = fn;
    },
    lieChainId: (hex) => {
      chainIdLie = hex;
    },
    refuseMethods: (methods) => {
      refused = new Set(methods);
    },
    get requests() {
      return bodies.length;
    },
    bodies,
    arrivals,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface RpcRequest {
  readonly id: unknown;
  readonly method: string;
}

/** The upstream's answer with the result of every eth_chainId call replaced by `hex`. */
function rewriteChainId(requestText: string, answerText: string, hex: string): string {
  const request = JSON.parse(requestText) as
    { id: unknown; method: string } | { id: unknown; method: string }[];
  const ids = new Set(
    (Array.isArray(request) ? request : [request]).filter((r) => r.method === 'eth_chainId').map((r) => r.id),
  );
  const answer = JSON.parse(answerText) as
    { id: unknown; result?: unknown } | { id: unknown; result?: unknown }[];
  const fix = (a: { id: unknown; result?: unknown }) => (ids.has(a.id) ? { ...a, result: hex } : a);
  return JSON.stringify(Array.isArray(answer) ? answer.map(fix) : fix(answer));
}
