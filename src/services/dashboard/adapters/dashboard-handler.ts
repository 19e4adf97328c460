// The dashboard's request handler (docs/dashboard.md): answers one request on the response it is given,
// and keeps the open Server-Sent Events streams. It works on the two small ports below, which node:http's
// IncomingMessage and ServerResponse satisfy, so it is tested without a socket
// (test/unit/services/dashboard/); dashboard-server.ts binds it to a listener.
//
//   GET /                 the page (web/dashboard/index.html)
//   GET /assets/<file>    its scripts, styles and icon (ETag; 304 on If-None-Match)
//   GET /api/snapshot     the latest DashboardSnapshot as JSON, as the request's viewer may see it
//   GET /api/events       SSE: `retry:`, then a `snapshot` event now and after every new snapshot, and a
//                         comment every keepAliveMs; at most maxEventClients streams (503 beyond),
//                         and maxEventClientsPerClient of one client (429 beyond)
//
// Who sees what: each request carries its viewer (core/viewer-scope.ts; the server reads it from the
// client certificate): everything, or one client's own tasks and jobs.
//
// Streams and memory: each new snapshot is serialised once per view (core/public-snapshot.ts bounds its
// size) and written to every stream of that view. A stream whose socket is not draining is skipped and gets the latest
// snapshot when it drains (a snapshot is the whole state, so skipping loses nothing); one still stuck
// after STALLED_TICKS keep-alive periods is dropped, freeing its place. close() ends every stream.
import type { DashboardSnapshot, DashboardSource } from '../../../contracts/dashboard.js';
import type { Asset, DashboardAssets } from './assets.js';
import { SECURITY_HEADERS, sseComment, sseEvent, sseHello } from '../core/http-rules.js';
import { publicSnapshot } from '../core/public-snapshot.js';
import { routeRequest, type RouteTable } from '../core/routes.js';
import { ALL_VIEWER, scopeSnapshot, viewerKey, type DashboardViewer } from '../core/viewer-scope.js';
import { TOP_LEVEL_DEFAULTS } from '../../../kernel/config-defaults.js';

/**
 * Streams open at once by default (each is one socket and one buffered frame at most):
 * observability.dashboard.maxEventClients's default.
 */
export const DEFAULT_MAX_EVENT_CLIENTS = TOP_LEVEL_DEFAULTS.observability.dashboard.maxEventClients;
/** Period of the keep-alive comment on idle streams. */
export const DEFAULT_KEEP_ALIVE_MS = 15_000;
/** Keep-alive periods a stream may stay undrained before it is dropped. */
const STALLED_TICKS = 4;
/** Views of one snapshot kept serialised at most (one per viewer identity); beyond it they start over. */
const MAX_CACHED_VIEWS = 256;

export interface DashboardRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  /** Who is asking, for the per-client caps: the certificate's identity with TLS, else the address. */
  readonly client?: string | undefined;
  /** What it may see (core/viewer-scope.ts); default everything (a plaintext dashboard). */
  readonly viewer?: DashboardViewer | undefined;
  readonly headers: { readonly host?: string | undefined; readonly 'if-none-match'?: string | undefined };
}

export interface DashboardResponse {
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  write(chunk: string): boolean;
  end(chunk?: string | Buffer): unknown;
  once(event: 'close' | 'drain', listener: () => void): unknown;
  readonly writableNeedDrain: boolean;
  destroy(): unknown;
}

export interface DashboardHandlerOptions {
  readonly source: DashboardSource;
  readonly assets: DashboardAssets;
  /** Check the Host header against DNS rebinding (plaintext listeners: core/routes.ts). */
  readonly checkHost: boolean;
  readonly allowedHosts?: readonly string[];
  readonly maxEventClients?: number;
  /** Event streams one client may hold (DEFAULT_MAX_EVENT_CLIENTS_PER_CLIENT). */
  readonly maxEventClientsPerClient?: number;
  readonly keepAliveMs?: number;
  readonly logger?: { warn(obj: Record<string, unknown>, msg: string): void };
}

/** observability.dashboard.maxEventClientsPerClient's default (docs/configuration.md). */
export const DEFAULT_MAX_EVENT_CLIENTS_PER_CLIENT =
  TOP_LEVEL_DEFAULTS.observability.dashboard.maxEventClientsPerClient;

interface Stream {
  readonly res: DashboardResponse;
  readonly client: string;
  readonly viewer: DashboardViewer;
  /** A snapshot was skipped while the socket was not draining. */
  behind: boolean;
  /** Keep-alive ticks seen while not draining. */
  stalledTicks: number;
}

export class DashboardHandler {
  private readonly streams = new Set<Stream>();
  /** Open streams per client. */
  private readonly perClient = new Map<string, number>();
  private readonly table: RouteTable;
  private readonly maxEventClients: number;
  private readonly maxPerClient: number;
  private readonly unsubscribe: () => void;
  private readonly keepAlive: NodeJS.Timeout;
  private closed = false;
  private lastSnapshot: DashboardSnapshot | undefined;
  /** The JSON of each view of lastSnapshot, by viewerKey. */
  private readonly views = new Map<string, string>();

  constructor(private readonly opts: DashboardHandlerOptions) {
    this.maxEventClients = opts.maxEventClients ?? DEFAULT_MAX_EVENT_CLIENTS;
    this.maxPerClient = opts.maxEventClientsPerClient ?? DEFAULT_MAX_EVENT_CLIENTS_PER_CLIENT;
    this.table = {
      assets: new Set(opts.assets.files.keys()),
      checkHost: opts.checkHost,
      allowedHosts: new Set((opts.allowedHosts ?? []).map((h) => h.toLowerCase())),
    };
    this.unsubscribe = opts.source.onSnapshot((s) => this.broadcast(s));
    this.keepAlive = setInterval(() => this.tick(), opts.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS);
    this.keepAlive.unref();
  }

  /** Open event streams. */
  get eventClients(): number {
    return this.streams.size;
  }

  handle(req: DashboardRequest, res: DashboardResponse): void {
    const method = req.method ?? 'GET';
    const route = routeRequest({ method, target: req.url ?? '/', host: req.headers.host ?? '' }, this.table);
    const head = method === 'HEAD';
    switch (route.kind) {
      case 'refused':
        return plain(res, route.status, route.message, route.status === 405 ? { Allow: 'GET, HEAD' } : {});
      case 'page':
        return this.asset(req, res, this.opts.assets.page, head);
      case 'asset':
        return this.asset(req, res, this.opts.assets.files.get(route.name) as Asset, head);
      case 'snapshot':
        return this.snapshot(res, head, req.viewer ?? ALL_VIEWER);
      case 'events':
        return this.events(res, head, req.client ?? '', req.viewer ?? ALL_VIEWER);
      default: {
        const never: never = route;
        throw new TypeError(`unhandled route ${JSON.stringify(never)}`);
      }
    }
  }

  /** Ends every stream and stops listening to the source. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    clearInterval(this.keepAlive);
    for (const s of this.streams) s.res.end();
    this.streams.clear();
    this.perClient.clear();
  }

  private asset(req: DashboardRequest, res: DashboardResponse, asset: Asset, head: boolean): void {
    const headers = {
      ...SECURITY_HEADERS,
      'Content-Type': asset.contentType,
      'Cache-Control': 'no-cache',
      ETag: asset.etag,
    };
    if (req.headers['if-none-match'] === asset.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Length': asset.body.length });
    res.end(head ? undefined : asset.body);
  }

  private snapshot(res: DashboardResponse, head: boolean, viewer: DashboardViewer): void {
    const json = this.currentJson(res, viewer);
    if (json === undefined) return;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      'Content-Length': Buffer.byteLength(json),
    });
    res.end(head ? undefined : json);
  }

  private events(res: DashboardResponse, head: boolean, client: string, viewer: DashboardViewer): void {
    if (this.closed) return plain(res, 503, 'the dashboard is shutting down', { 'Retry-After': 5 });
    if ((this.perClient.get(client) ?? 0) >= this.maxPerClient) {
      return plain(
        res,
        429,
        `this client already holds ${this.maxPerClient} live dashboard pages (observability.dashboard.maxEventClientsPerClient): close one or retry later`,
        { 'Retry-After': 10 },
      );
    }
    if (this.streams.size >= this.maxEventClients) {
      return plain(
        res,
        503,
        `too many live dashboard pages (${this.maxEventClients}, observability.dashboard.maxEventClients): close one or retry later`,
        { 'Retry-After': 10 },
      );
    }
    const json = this.currentJson(res, viewer);
    if (json === undefined) return;
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      // Tells nginx-style proxies not to buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    if (head) {
      res.end();
      return;
    }
    const stream: Stream = { res, client, viewer, behind: false, stalledTicks: 0 };
    this.streams.add(stream);
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
    res.once('close', () => this.drop(stream));
    res.write(sseHello());
    this.send(stream, sseEvent('snapshot', json));
  }

  /** The JSON of `viewer`'s view of the source's latest snapshot; on failure answers 503 and returns undefined. */
  private currentJson(res: DashboardResponse, viewer: DashboardViewer): string | undefined {
    let snapshot: DashboardSnapshot;
    try {
      snapshot = this.opts.source.snapshot();
      return this.jsonOf(snapshot, viewer);
    } catch (err) {
      this.opts.logger?.warn({ err: String(err) }, 'dashboard: no snapshot to serve');
      plain(res, 503, `no snapshot yet: ${err instanceof Error ? err.message : String(err)}`, {
        'Retry-After': 2,
      });
      return undefined;
    }
  }

  private jsonOf(snapshot: DashboardSnapshot, viewer: DashboardViewer): string {
    if (snapshot !== this.lastSnapshot || this.views.size >= MAX_CACHED_VIEWS) {
      this.views.clear();
      this.lastSnapshot = snapshot;
    }
    const key = viewerKey(viewer);
    let json = this.views.get(key);
    if (json === undefined) {
      json = JSON.stringify(publicSnapshot(scopeSnapshot(snapshot, viewer)));
      this.views.set(key, json);
    }
    return json;
  }

  private broadcast(snapshot: DashboardSnapshot): void {
    if (this.closed || this.streams.size === 0) return;
    const frames = new Map<string, string>();
    for (const s of this.streams) {
      const key = viewerKey(s.viewer);
      let frame = frames.get(key);
      if (frame === undefined) {
        try {
          frame = sseEvent('snapshot', this.jsonOf(snapshot, s.viewer));
        } catch (err) {
          this.opts.logger?.warn({ err: String(err) }, 'dashboard: a snapshot could not be serialised');
          return;
        }
        frames.set(key, frame);
      }
      this.send(s, frame);
    }
  }

  private send(stream: Stream, frame: string): void {
    if (stream.res.writableNeedDrain) {
      if (!stream.behind) {
        stream.behind = true;
        stream.res.once('drain', () => {
          stream.behind = false;
          stream.stalledTicks = 0;
          if (!this.closed && this.streams.has(stream) && this.lastSnapshot !== undefined)
            this.send(stream, sseEvent('snapshot', this.jsonOf(this.lastSnapshot, stream.viewer)));
        });
      }
      return;
    }
    stream.res.write(frame);
  }

  private tick(): void {
    for (const s of this.streams) {
      if (!s.res.writableNeedDrain) {
        s.res.write(sseComment('keep-alive'));
        continue;
      }
      if (++s.stalledTicks >= STALLED_TICKS) {
        this.drop(s);
        s.res.destroy();
      }
    }
  }

  /** Forgets a stream (once), and its place in its client's count. */
  private drop(stream: Stream): void {
    if (!this.streams.delete(stream)) return;
    const left = (this.perClient.get(stream.client) ?? 1) - 1;
    if (left > 0) this.perClient.set(stream.client, left);
    else this.perClient.delete(stream.client);
  }
}

function plain(
  res: DashboardResponse,
  status: number,
  message: string,
  extra: Record<string, string | number>,
): void {
  const body = `${message}\n`;
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...extra,
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
