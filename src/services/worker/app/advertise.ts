// The address a Worker advertises (heartbeat `workerAddr`, TaskUpdate `worker_addr`): what Clients and
// the Coordinator dial. WORKER_ADVERTISE_ADDR (config `worker.advertiseAddr`) wins; otherwise it is
// derived from the listen address and the port actually bound (port 0 picks one):
//   - a concrete host (127.0.0.1, 10.0.0.7, a name) is advertised as is;
//   - a wildcard host (0.0.0.0, ::, empty as in `:9090`) is not dialable: standalone it becomes
//     127.0.0.1; with a shared registry (etcd) other machines must reach it, so the first non-internal
//     IPv4 address of the host is used (127.0.0.1 if there is none). Set WORKER_ADVERTISE_ADDR when the
//     host has several and the first is not the right one.
import { networkInterfaces } from 'node:os';
import { listenAddress } from '../../../grpc/server.js';

const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::', '[::]']);

/** Splits `host:port` / `[v6]:port`; undefined for addresses without a port (unix:...). */
export function splitHostPort(addr: string): { host: string; port: string } | undefined {
  const i = addr.lastIndexOf(':');
  if (i < 0 || addr.startsWith('unix:')) return undefined;
  const port = addr.slice(i + 1);
  if (!/^\d+$/.test(port)) return undefined;
  return { host: addr.slice(0, i), port };
}

/** The first non-internal IPv4 address of this host, or undefined. */
export function firstExternalIpv4(): string | undefined {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      if (a.family === 'IPv4' && !a.internal) return a.address;
    }
  }
  return undefined;
}

export interface AdvertiseOptions {
  /** `worker.advertiseAddr` (WORKER_ADVERTISE_ADDR); empty = derive. */
  readonly configured: string;
  /** The listen address as configured (`:9090`, `127.0.0.1:0`, ...). */
  readonly listen: string;
  /** The port the server actually bound. */
  readonly boundPort: number;
  /** Other machines must dial the address (a shared registry such as etcd is configured). */
  readonly reachableFromOtherHosts: boolean;
  /** Injectable for tests. */
  readonly externalIpv4?: () => string | undefined;
}

export function advertiseAddress(opts: AdvertiseOptions): string {
  if (opts.configured !== '') return opts.configured;
  const normalised = listenAddress(opts.listen);
  const parts = splitHostPort(normalised);
  if (parts === undefined) return normalised;
  let host = parts.host;
  if (WILDCARD_HOSTS.has(host)) {
    const external = opts.reachableFromOtherHosts ? (opts.externalIpv4 ?? firstExternalIpv4)() : undefined;
    host = external ?? '127.0.0.1';
  }
  return `${host}:${opts.boundPort}`;
}

/** The bound address as `host:port` (the listen host with the real port), for the startup line. */
export function boundAddress(listen: string, boundPort: number): string {
  const normalised = listenAddress(listen);
  const parts = splitHostPort(normalised);
  return parts === undefined ? normalised : `${parts.host}:${boundPort}`;
}
