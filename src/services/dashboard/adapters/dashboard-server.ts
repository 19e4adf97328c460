// The dashboard's HTTP listener (docs/dashboard.md): node:http, or node:https with the cluster's TLS
// exactly like the Prometheus endpoint (kernel/observability/metrics-server.ts): the cluster CA's client
// certificate required. Without TLS only a loopback address is accepted unless tls.allowPlaintext
// (docs/security.md § TLS and authentication), and the Host header is checked (core/routes.ts).
//
//   startDashboardServer({listenAddr, source, ...}) → {address, port, url, eventClients(), close()}
//
// - An empty `listenAddr` means "off": nothing listens, `address` and `url` are ''.
// - The request handler is dashboard-handler.ts; the page's files are read once here (assets.ts), so a
//   broken installation fails at start, not on the first visit.
// - `close()` ends the event streams, stops listening, drops idle connections and resolves once the
//   port is free. Idempotent.
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { DashboardSource } from '../../../contracts/dashboard.js';
import { parseMetricsListenAddr } from '../../../kernel/observability/metrics-server.js';
import { certificateIdentity } from '../../../kernel/client-identity.js';
import { cachedRolesOf, DASHBOARD_ROLES, permissionProblem, seesEveryClient } from '../../../kernel/roles.js';
import { plaintextListenProblem, type TlsMaterial } from '../../../kernel/tls-files.js';
import { loadDashboardAssets, type DashboardAssets } from './assets.js';
import { DashboardHandler, DEFAULT_MAX_EVENT_CLIENTS } from './dashboard-handler.js';
import { ALL_VIEWER, type DashboardViewer } from '../core/viewer-scope.js';
import { DashboardErrorCode, DashboardServerError } from '../errors.js';
import { TOP_LEVEL_DEFAULTS } from '../../../kernel/config-defaults.js';

/** The config key the address came from, named in errors. */
const CONFIG_KEY = 'observability.dashboard.listenAddr';

export interface DashboardServerOptions {
  /** `host:port`, `:port`, `port` or `[v6]:port`; port 0 picks a free one. Empty: not started. */
  readonly listenAddr: string;
  readonly source: DashboardSource;
  /** HTTPS with a client certificate signed by the cluster CA required; omitted: plain HTTP. */
  readonly tls?: TlsMaterial | undefined;
  readonly allowPlaintext?: boolean;
  /** Host names accepted besides IP literals and localhost (plain HTTP only). */
  readonly allowedHosts?: readonly string[];
  readonly maxEventClients?: number;
  readonly maxEventClientsPerClient?: number;
  /** Connections one remote address may hold (DEFAULT_MAX_CONNECTIONS_PER_ADDRESS); more are closed. */
  readonly maxConnectionsPerAddress?: number;
  readonly keepAliveMs?: number;
  /** Default: web/dashboard/ of the package. */
  readonly assets?: DashboardAssets;
  /** Where the address came from, for error messages (default observability.dashboard.listenAddr). */
  readonly configKey?: string;
  readonly logger?: { warn(obj: Record<string, unknown>, msg: string): void };
}

export interface RunningDashboardServer {
  /** The bound `host:port` (`[v6]:port` for IPv6); '' when not started. */
  readonly address: string;
  readonly port: number;
  /** `http://host:port/` (https with TLS); '' when not started. */
  readonly url: string;
  /** Open event streams. */
  eventClients(): number;
  close(): Promise<void>;
}

const NOT_STARTED: RunningDashboardServer = Object.freeze({
  address: '',
  port: 0,
  url: '',
  eventClients: () => 0,
  close: () => Promise.resolve(),
});

/**
 * Checks a dashboard address before anything starts: its syntax, and the loopback rule without TLS.
 * Returns the host and port to bind; throws DASHBOARD_ADDRESS_INVALID or the plaintext CONFIG_INVALID.
 */
export function checkDashboardListen(
  listenAddr: string,
  security: { readonly tlsOn: boolean; readonly allowPlaintext: boolean; readonly configKey?: string },
): { host: string; port: number } {
  const key = security.configKey ?? CONFIG_KEY;
  let target: { host: string; port: number };
  try {
    target = parseMetricsListenAddr(listenAddr);
  } catch (err) {
    throw new DashboardServerError(
      DashboardErrorCode.DASHBOARD_ADDRESS_INVALID,
      listenAddr,
      `${key}: invalid address ${JSON.stringify(listenAddr)}: expected host:port, :port, port or [v6]:port`,
      { cause: err },
    );
  }
  const plaintext = plaintextListenProblem(
    key,
    `${target.host}:${target.port}`,
    security.tlsOn,
    security.allowPlaintext,
  );
  if (plaintext !== undefined) throw plaintext;
  return target;
}

export async function startDashboardServer(opts: DashboardServerOptions): Promise<RunningDashboardServer> {
  if (opts.listenAddr.trim() === '') return NOT_STARTED;
  const key = opts.configKey ?? CONFIG_KEY;
  const target = checkDashboardListen(opts.listenAddr, {
    tlsOn: opts.tls !== undefined,
    allowPlaintext: opts.allowPlaintext === true,
    configKey: key,
  });
  const handler = new DashboardHandler({
    source: opts.source,
    assets: opts.assets ?? loadDashboardAssets(),
    checkHost: opts.tls === undefined,
    ...(opts.allowedHosts ? { allowedHosts: opts.allowedHosts } : {}),
    ...(opts.maxEventClients === undefined ? {} : { maxEventClients: opts.maxEventClients }),
    ...(opts.maxEventClientsPerClient === undefined
      ? {}
      : { maxEventClientsPerClient: opts.maxEventClientsPerClient }),
    ...(opts.keepAliveMs === undefined ? {} : { keepAliveMs: opts.keepAliveMs }),
    ...(opts.logger ? { logger: opts.logger } : {}),
  });
  const serverOptions = { maxHeaderSize: 16 * 1024 };
  const server: Server =
    opts.tls === undefined
      ? createServer(serverOptions, (req, res) =>
          handler.handle(Object.assign(req, { client: req.socket.remoteAddress ?? '' }), res),
        )
      : createHttpsServer(
          {
            ...serverOptions,
            ...opts.tls,
            requestCert: true,
            rejectUnauthorized: true,
            minVersion: 'TLSv1.2',
          },
          (req, res) => {
            // Every route needs a viewing role, and shows a submitter its own tasks (docs/security.md § Roles).
            const socket = req.socket as TLSSocket;
            const problem = dashboardPermissionProblem(socket);
            if (problem === undefined) {
              const client = clientOf(socket);
              handler.handle(Object.assign(req, { client, viewer: viewerOf(socket, client) }), res);
            } else res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${problem}\n`);
          },
        );
  // Slow or idle clients cannot hold sockets: headers within 10 s, at most so many connections.
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.maxConnections = (opts.maxEventClients ?? DEFAULT_MAX_EVENT_CLIENTS) + 64;
  limitConnectionsPerAddress(server, opts.maxConnectionsPerAddress ?? DEFAULT_MAX_CONNECTIONS_PER_ADDRESS);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(target.port, target.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    handler.close();
    throw new DashboardServerError(
      DashboardErrorCode.DASHBOARD_LISTEN_FAILED,
      opts.listenAddr,
      `cannot serve the dashboard on ${opts.listenAddr} (${key}): ${(err as Error).message}`,
      { cause: err, configKey: key },
    );
  }
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  const address = `${host}:${bound.port}`;
  let closing: Promise<void> | undefined;
  return {
    address,
    port: bound.port,
    url: `${opts.tls === undefined ? 'http' : 'https'}://${address}/`,
    eventClients: () => handler.eventClients,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        handler.close();
        server.close(() => resolve());
        // Browsers keep connections alive between requests: without this, close waits for them.
        server.closeAllConnections();
      })),
  };
}

/** Why the TLS peer on `socket` may not read the dashboard, or undefined (docs/security.md § Roles). */
function dashboardPermissionProblem(socket: TLSSocket): string | undefined {
  const cert = socket.getPeerCertificate();
  // rejectUnauthorized already refused a connection without a certificate from the CA.
  if (Object.keys(cert).length === 0) return 'the dashboard needs a client certificate';
  return permissionProblem('the dashboard', cachedRolesOf(cert), DASHBOARD_ROLES);
}

/** observability.dashboard.maxConnectionsPerAddress's default (docs/configuration.md). */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS =
  TOP_LEVEL_DEFAULTS.observability.dashboard.maxConnectionsPerAddress;

/**
 * Closes a new connection at once when its remote address already holds `max` (docs/dashboard.md):
 * together with the global maxConnections, one host's idle connections cannot lock others out.
 */
function limitConnectionsPerAddress(server: Server, max: number): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const n = open.get(address) ?? 0;
    if (n >= max) {
      socket.destroy();
      return;
    }
    open.set(address, n + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

/** The identity of a TLS peer, as for gRPC calls: the per-client caps and whose tasks it sees. */
function clientOf(socket: TLSSocket): string {
  return certificateIdentity(socket.getPeerCertificate()) ?? socket.remoteAddress ?? '';
}

/** What the TLS peer may see: everything with a role that sees every client, else its own tasks and jobs. */
function viewerOf(socket: TLSSocket, client: string): DashboardViewer {
  return seesEveryClient(cachedRolesOf(socket.getPeerCertificate())) ? ALL_VIEWER : { kind: 'own', client };
}
