// One place that builds an etcd3 client the way BlockX needs it (tuned fault handling, below).
//
// The library's defaults recover slowly from an etcd restart: the per-host breaker stays open ~5 s and a
// watch comes back after 2.5–5.7 s. Tuned as below, the first call after etcd returns succeeds within
// milliseconds and a watch resumes in well under a second:
//   - per host: a circuit breaker that opens after 3 consecutive recoverable failures and half-opens
//     after 250 ms;
//   - global: 3 retries with exponential backoff from 50 ms up to 500 ms;
//   - watch streams reconnect with exponential backoff from 100 ms up to 1 s;
//   - every unary call has a deadline (5 s by default), so a hung etcd never hangs a caller.
// etcd3 1.1.2 ignores its own `dialTimeout` option, so the unary deadline is what bounds a dial.

import { ConsecutiveBreaker, ExponentialBackoff, circuitBreaker, handleWhen, retry } from 'cockatiel';
import type { IBackoff } from 'cockatiel';
import { readFileSync } from 'node:fs';
import { Etcd3, isRecoverableError } from 'etcd3';
import type { IOptions } from 'etcd3';
import { BlockxError } from '../../kernel/errors.js';
import { TOP_LEVEL_DEFAULTS } from '../../kernel/config-defaults.js';

export const ETCD_HOST_BREAKER_HALF_OPEN_AFTER_MS = 250;
export const ETCD_HOST_BREAKER_CONSECUTIVE_FAILURES = 3;
export const ETCD_GLOBAL_RETRY_ATTEMPTS = 3;
export const ETCD_RETRY_BACKOFF = Object.freeze({ initialDelay: 50, maxDelay: 500 });
export const ETCD_WATCH_BACKOFF = Object.freeze({ initialDelay: 100, maxDelay: 1_000 });
/** registry.etcd.dialTimeoutMs's default: what every caller passes as the deadline (docs/configuration.md). */
export const DEFAULT_ETCD_UNARY_DEADLINE_MS = TOP_LEVEL_DEFAULTS.registry.etcd.dialTimeoutMs;

export interface EtcdClientOptions {
  /** `host:port` or `http(s)://host:port`; a bare `host:port` gets `http://`. At least one. */
  readonly endpoints: readonly string[];
  /** Deadline of every unary call (range, put, lease grant, ...). Default 5 s. */
  readonly unaryDeadlineMs?: number;
  /** TLS and auth to etcd (etcdSecurityOf); omitted: plaintext, no auth. */
  readonly security?: EtcdSecurity;
}

/** How a client proves itself to etcd: TLS (CA, optional client certificate) and/or a user. */
export interface EtcdSecurity {
  readonly credentials?: { rootCertificate: Buffer; privateKey?: Buffer; certChain?: Buffer };
  readonly auth?: { username: string; password: string };
}

/**
 * The etcd security of `registry.etcd` (docs/security.md § etcd): its PEM files read, its user and
 * password. A file that cannot be read is a CONFIG_INVALID error naming the key (never the contents).
 */
export function etcdSecurityOf(etcd: {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
  readonly username: string;
  readonly password: string;
}): EtcdSecurity {
  const read = (name: 'ca' | 'cert' | 'key'): Buffer => {
    try {
      return readFileSync(etcd[name]);
    } catch (err) {
      throw new BlockxError(
        'CONFIG_INVALID',
        `registry.etcd.${name}: cannot read ${etcd[name]}: ${(err as Error).message}`,
      );
    }
  };
  return {
    ...(etcd.ca === ''
      ? {}
      : {
          credentials: {
            rootCertificate: read('ca'),
            ...(etcd.cert === '' ? {} : { certChain: read('cert'), privateKey: read('key') }),
          },
        }),
    ...(etcd.username === '' ? {} : { auth: { username: etcd.username, password: etcd.password } }),
  };
}

/** `localhost:2379` → `http://localhost:2379`; URLs with a scheme pass through (trailing `/` dropped). */
export function normalizeEtcdEndpoint(endpoint: string): string {
  const trimmed = endpoint.trim().replace(/\/+$/, '');
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
}

/** The faultHandling block described in the header. */
export function tunedFaultHandling(): NonNullable<IOptions['faultHandling']> {
  const recoverable = handleWhen(isRecoverableError);
  return {
    host: () =>
      circuitBreaker(recoverable, {
        halfOpenAfter: ETCD_HOST_BREAKER_HALF_OPEN_AFTER_MS,
        breaker: new ConsecutiveBreaker(ETCD_HOST_BREAKER_CONSECUTIVE_FAILURES),
      }),
    global: retry(recoverable, {
      maxAttempts: ETCD_GLOBAL_RETRY_ATTEMPTS,
      backoff: new ExponentialBackoff(ETCD_RETRY_BACKOFF),
    }),
    // etcd3 declares an IBackoff here but uses it as a factory (it calls `.next()` to start each
    // sequence), which is what its own default, a bare `new ExponentialBackoff()`, is.
    watchBackoff: new ExponentialBackoff(ETCD_WATCH_BACKOFF) as unknown as IBackoff<unknown>,
  };
}

/** A new etcd3 client with the tuned fault handling; the caller closes it. */
export function createEtcdClient(opts: EtcdClientOptions): Etcd3 {
  const hosts = opts.endpoints.map(normalizeEtcdEndpoint).filter((h) => h !== 'http://');
  if (hosts.length === 0) throw new Error('etcd: at least one endpoint is required');
  const deadlineMs = opts.unaryDeadlineMs ?? DEFAULT_ETCD_UNARY_DEADLINE_MS;
  return new Etcd3({
    hosts,
    ...(opts.security?.credentials === undefined ? {} : { credentials: opts.security.credentials }),
    ...(opts.security?.auth === undefined ? {} : { auth: opts.security.auth }),
    dialTimeout: deadlineMs,
    faultHandling: tunedFaultHandling(),
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + deadlineMs }),
    grpcOptions: {
      // Detect a silently dead etcd (no RST) on long-lived watch and keepalive streams. etcd's default
      // --grpc-keepalive-min-time is 5 s; pinging every 10 s stays clear of its too-many-pings guard.
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5_000,
      // Reconnect quickly once etcd is back (grpc-js defaults: 1 s initial, up to 120 s).
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1_000,
    },
  });
}

/** A client passed in (the caller closes it) or one made from endpoints (ours to close). */
export function useOrCreateEtcdClient(opts: {
  readonly client?: Etcd3;
  readonly endpoints?: readonly string[];
  readonly unaryDeadlineMs?: number;
  readonly security?: EtcdSecurity;
}): { client: Etcd3; ownsClient: boolean } {
  if (opts.client !== undefined) return { client: opts.client, ownsClient: false };
  const client = createEtcdClient({
    endpoints: opts.endpoints ?? [],
    ...(opts.security === undefined ? {} : { security: opts.security }),
    ...(opts.unaryDeadlineMs === undefined ? {} : { unaryDeadlineMs: opts.unaryDeadlineMs }),
  });
  return { client, ownsClient: true };
}
