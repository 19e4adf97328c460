// One process's dashboard (docs/dashboard.md): a feed (a DashboardSource that assembles snapshots on its
// own timer, src/services/coordinator/adapters/dashboard-feed.ts in the Coordinator) started, and the
// HTTP server in front of it, with the `observability.dashboard` and `tls` settings of the config.
// `close()` stops the server first (its streams end), then the feed. `blockx up` and `blockx coordinator`
// adopt the handle on their teardown stack (src/app/run-cluster.ts, src/app/coordinator-command.ts).
import type { DashboardSource } from '../../../contracts/dashboard.js';
import type { BlockxConfig } from '../../../kernel/config-types.js';
import { loadTlsMaterial } from '../../../kernel/tls-files.js';
import {
  checkDashboardListen,
  startDashboardServer,
  type RunningDashboardServer,
} from '../adapters/dashboard-server.js';

/** A source with its own timer. */
export interface DashboardFeedHandle extends DashboardSource {
  start(): void;
  stop(): void;
}

export interface ServeDashboardOptions {
  readonly config: BlockxConfig;
  /** The address to serve on ('' = none); usually `observability.dashboard.listenAddr`. */
  readonly listenAddr: string;
  readonly feed: DashboardFeedHandle;
  /** Where the address came from, named in errors. */
  readonly configKey?: string;
  readonly logger?: {
    info(obj: Record<string, unknown>, msg: string): void;
    warn(obj: Record<string, unknown>, msg: string): void;
  };
}

export type RunningDashboard = RunningDashboardServer;

/**
 * Refuses a dashboard address that serveDashboard would refuse (syntax, the loopback rule without TLS),
 * before anything starts: a command calls it first, so a bad address never leaves services half started.
 */
export function checkDashboardAddress(config: BlockxConfig, listenAddr: string, configKey?: string): void {
  if (listenAddr.trim() === '') return;
  const tlsOn = config.tls.ca !== '' || config.tls.cert !== '' || config.tls.key !== '';
  checkDashboardListen(listenAddr, {
    tlsOn,
    allowPlaintext: config.tls.allowPlaintext,
    ...(configKey ? { configKey } : {}),
  });
}

export async function serveDashboard(opts: ServeDashboardOptions): Promise<RunningDashboard> {
  const { config, feed } = opts;
  const d = config.observability.dashboard;
  if (opts.listenAddr.trim() === '') return startDashboardServer({ listenAddr: '', source: feed });
  feed.start();
  let server: RunningDashboardServer;
  try {
    server = await startDashboardServer({
      listenAddr: opts.listenAddr,
      source: feed,
      tls: loadTlsMaterial(config.tls),
      allowPlaintext: config.tls.allowPlaintext,
      allowedHosts: d.allowedHosts,
      maxEventClients: d.maxEventClients,
      maxEventClientsPerClient: d.maxEventClientsPerClient,
      maxConnectionsPerAddress: d.maxConnectionsPerAddress,
      ...(opts.configKey ? { configKey: opts.configKey } : {}),
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
  } catch (err) {
    feed.stop();
    throw err;
  }
  opts.logger?.info({ url: server.url }, 'serving the dashboard');
  let closing: Promise<void> | undefined;
  return {
    ...server,
    close: () => (closing ??= server.close().finally(() => feed.stop())),
  };
}
