// The RpcClient's HTTP port over node:http / node:https with keep-alive connections (docs/ingest.md § The RPC
// access layer). The client posts one JSON body per request and reads the whole answer as text; this is all it
// needs, and node:http does it for about half the CPU of the global `fetch`, whose WHATWG streams and
// Request/Response objects were a quarter of a Worker's busy time in a profile of `blockx ingest`
// (docs/ingest.md § Where a block's time goes).
//
// Each client has its own pool of sockets (an Agent), destroyed with the client, so a closed client leaves no
// socket that keeps its process alive. How many sockets are open at once is not bounded here: the client's
// scheduler already bounds the requests in flight (`maxConcurrentRequests`).
import http from 'node:http';
import https from 'node:https';

export interface HttpAnswer {
  readonly status: number;
  /** The Retry-After header, if any. */
  readonly retryAfter: string | null;
  readonly body: string;
}

/** The port the client posts through: one HTTP POST of a JSON body. Rejects on connection errors and aborts. */
export type HttpPost = (url: string, body: string, signal: AbortSignal) => Promise<HttpAnswer>;

/** An HttpPost with its own keep-alive sockets, and the way to close them. */
export interface HttpPoster {
  readonly post: HttpPost;
  close(): void;
}

export function keepAlivePoster(): HttpPoster {
  const agents = {
    'http:': new http.Agent({ keepAlive: true }),
    'https:': new https.Agent({ keepAlive: true }),
  };
  const post: HttpPost = (url, body, signal) => {
    const target = new URL(url);
    const headers: Record<string, string | number> = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    };
    // Credentials in the URL go as Basic authorization, never in the request line.
    if (target.username !== '' || target.password !== '') {
      const user = decodeURIComponent(target.username);
      const password = decodeURIComponent(target.password);
      headers['authorization'] = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    }
    const secure = target.protocol === 'https:';
    const request = secure ? https.request : http.request;
    return new Promise<HttpAnswer>((resolve, reject) => {
      const req = request(
        {
          protocol: target.protocol,
          hostname: target.hostname.replace(/^\[|\]$/g, ''),
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          headers,
          agent: agents[secure ? 'https:' : 'http:'],
          signal,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          // A body cut short (the connection closed before its end) is an error, not a shorter answer.
          const cut = () =>
            reject(Object.assign(new Error('the connection closed mid-answer'), { code: 'ECONNRESET' }));
          res.on('error', reject);
          res.on('close', () => {
            if (!res.complete) cut();
          });
          res.on('end', () => {
            if (!res.complete) return cut();
            const retryAfter = res.headers['retry-after'];
            resolve({
              status: res.statusCode ?? 0,
              retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
  return {
    post,
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
