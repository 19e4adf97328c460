// The Prometheus scrape endpoint: a small HTTP server on `observability.prometheus.listenAddr`
// (BLOCKX_PROMETHEUS_LISTEN_ADDR) answering GET/HEAD on `observability.prometheus.path`
// (BLOCKX_PROMETHEUS_PATH, default /metrics) with the text exposition format, 404 on any other path.
//
//   startMetricsServer({listenAddr, path, registry}) → {address, port, close()}
//
// - An empty `listenAddr` means "metrics off": nothing listens, and the handle's `address` is ''.
// - `registry` is one service's Registry, or several (`blockx up`: a Coordinator and N Workers in one
//   process behind one endpoint). Several are merged per metric family at each scrape: the samples of
//   one name from every registry under one HELP/TYPE header, each with its own registry's default
//   labels ({service, deployment, instance}), which is what tells them apart. An array is read at every
//   scrape, so services pushed into it after the server started show up.
// - Gauges are computed at scrape time (`collect()` callbacks over the services' stats), so scraping is
//   the only moment metrics cost anything beyond a counter increment.
// - `close()` stops listening, drops idle keep-alive connections and resolves once the port is free.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Registry, type Metric } from 'prom-client';
import { plaintextListenProblem, type TlsMaterial } from '../tls-files.js';
import { MetricsServerError, ObservabilityErrorCode } from './errors.js';

export type MetricsSource = Registry | readonly Registry[];

export interface MetricsServerOptions {
  /** `host:port`, `:port`, `port` or `[v6]:port`; port 0 picks a free one. Empty: not started. */
  readonly listenAddr: string;
  /** The scrape path, e.g. `/metrics`. */
  readonly path: string;
  readonly registry: MetricsSource;
  /**
   * HTTPS with a client certificate signed by the cluster CA required (the `tls` config key); omitted:
   * plain HTTP, and then only on loopback unless `allowPlaintext` (docs/security.md § TLS and
   * authentication).
   */
  readonly tls?: TlsMaterial | undefined;
  readonly allowPlaintext?: boolean;
}

export interface RunningMetricsServer {
  /** The bound `host:port` (`[v6]:port` for IPv6); '' when not started. */
  readonly address: string;
  /** The bound port; 0 when not started. */
  readonly port: number;
  /** Stops listening and frees the port. Idempotent. */
  close(): Promise<void>;
}

const NOT_STARTED: RunningMetricsServer = Object.freeze({
  address: '',
  port: 0,
  close: () => Promise.resolve(),
});

interface ListenTarget {
  readonly host: string;
  readonly port: number;
}

/** Parses a listen address the way operators write it (Go style: `:9464` means every IPv4 interface). */
export function parseMetricsListenAddr(listenAddr: string): ListenTarget {
  const addr = listenAddr.trim();
  const v6 = /^\[([0-9A-Fa-f:.]+)\]:(\d{1,5})$/.exec(addr);
  const named = /^([A-Za-z0-9.-]*):(\d{1,5})$/.exec(addr);
  const bare = /^(\d{1,5})$/.exec(addr);
  const [host, portText] = v6
    ? [v6[1], v6[2]]
    : named
      ? [named[1] || '0.0.0.0', named[2]]
      : bare
        ? ['0.0.0.0', bare[1]]
        : [undefined, undefined];
  const port = Number(portText);
  if (host === undefined || !(port >= 0 && port <= 65_535)) {
    throw new MetricsServerError(
      ObservabilityErrorCode.METRICS_ADDRESS_INVALID,
      listenAddr,
      `invalid metrics listen address ${JSON.stringify(listenAddr)}: expected host:port, :port, port or [v6]:port`,
    );
  }
  return { host, port };
}

export async function startMetricsServer(opts: MetricsServerOptions): Promise<RunningMetricsServer> {
  if (opts.listenAddr.trim() === '') return NOT_STARTED;
  const target = parseMetricsListenAddr(opts.listenAddr);
  const plaintext = plaintextListenProblem(
    'observability.prometheus.listenAddr',
    `${target.host}:${target.port}`,
    opts.tls !== undefined,
    opts.allowPlaintext === true,
  );
  if (plaintext !== undefined) throw plaintext;
  const handler = (req: IncomingMessage, res: ServerResponse): void =>
    void serve(req, res, opts.path, opts.registry);
  const server: Server =
    opts.tls === undefined
      ? createServer(handler)
      : createHttpsServer(
          { ...opts.tls, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' },
          handler,
        );
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => {
      reject(
        new MetricsServerError(
          ObservabilityErrorCode.METRICS_LISTEN_FAILED,
          opts.listenAddr,
          `cannot serve metrics on ${opts.listenAddr}: ${err.message}`,
          { cause: err },
        ),
      );
    };
    server.once('error', onError);
    server.listen(target.port, target.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  let closing: Promise<void> | undefined;
  return {
    address: `${host}:${bound.port}`,
    port: bound.port,
    close: () => (closing ??= closeServer(server)),
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Prometheus keeps its connection alive between scrapes: without this, close waits for it.
    server.closeAllConnections();
  });
}

async function serve(req: IncomingMessage, res: ServerResponse, path: string, source: MetricsSource) {
  const pathname = (req.url ?? '/').split('?', 1)[0];
  if (pathname !== path) {
    reply(res, 404, `not found: metrics are served at ${path}\n`);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    reply(res, 405, 'method not allowed\n');
    return;
  }
  let body: string;
  try {
    body = await renderMetrics(source);
  } catch (err) {
    reply(res, 500, `collecting metrics failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return;
  }
  res.writeHead(200, {
    'Content-Type': Registry.PROMETHEUS_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text);
}

/** The text exposition of one registry, or of several merged per metric family. */
export async function renderMetrics(source: MetricsSource): Promise<string> {
  const registries: readonly Registry[] = source instanceof Registry ? [source] : source;
  if (registries.length === 1) return (registries[0] as Registry).metrics();
  type Family = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];
  const families = new Map<string, Family>();
  for (const registry of registries) {
    // getMetricsAsJSON applies the registry's default labels to every sample.
    for (const family of await registry.getMetricsAsJSON()) {
      const seen = families.get(family.name);
      if (seen === undefined) families.set(family.name, { ...family, values: [...family.values] });
      else seen.values.push(...family.values);
    }
  }
  // A throwaway registry renders the merged families with prom-client's own serializer: it only needs
  // each metric's name and `get()`.
  const merged = new Registry();
  for (const family of families.values()) {
    merged.registerMetric({ name: family.name, get: () => Promise.resolve(family) } as unknown as Metric);
  }
  return merged.metrics();
}

/**
 * A service's own endpoint (`runWorker` / `runCoordinator` with `prometheusListen`): started only when
 * `listenAddr` is given. If it cannot start, `undo` releases what the service had started, then the
 * error is rethrown.
 */
export async function startOptionalMetricsServer(
  listenAddr: string | undefined,
  path: string,
  registry: Registry,
  undo: () => Promise<void>,
  security: { tls?: TlsMaterial | undefined; allowPlaintext?: boolean } = {},
): Promise<RunningMetricsServer | undefined> {
  if (listenAddr === undefined) return undefined;
  try {
    return await startMetricsServer({ listenAddr, path, registry, ...security });
  } catch (err) {
    await undo();
    throw err;
  }
}
