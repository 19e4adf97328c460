// Before a command sends its first task, it checks that its target (a Coordinator or a Worker) answers,
// and when it does not, says why in one line: the name does not resolve (DNS), nothing listens on the
// port (connection refused), nothing answers at all within the bound (a firewall or a wrong host), or a
// TCP connection opens but no gRPC session comes up (a TLS mismatch, or not a BlockX server). All of it
// within one bounded connect timeout (DEFAULT_CONNECT_TIMEOUT_MS unless the caller chooses), instead of
// each task spending its retries first (docs/retries.md § Client).
import { lookup } from 'node:dns/promises';
import { isIP, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { BlockxClientError, ClientErrorCode } from './errors.js';

/** The connect bound of `blockx submit`, `status` and `backfill` unless --connect-timeout says otherwise. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;

/** Why a target is not reachable. */
export type ReachCause = 'dns' | 'refused' | 'no-route' | 'timeout' | 'no-grpc' | 'tls-untrusted';

export interface UnreachableDetail {
  readonly cause: ReachCause;
  /** The OS error code behind it (ENOTFOUND, ECONNREFUSED, EHOSTUNREACH, ...), when there is one. */
  readonly errno?: string;
}

/** `host:port` (or `[v6]:port`) split; undefined for targets that are not TCP (`unix:...`, dns URIs). */
export function splitHostPort(address: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:/[\]]+)):(\d{1,5})$/.exec(address.trim());
  if (m === null) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: (m[1] ?? m[2])!, port };
}

/**
 * The one line that says what is wrong and what to do about it. `role` names the target (`coordinator`,
 * `worker`), `tls` whether the client dialled with TLS (it decides which side of a mismatch to suggest).
 */
export function unreachableMessage(
  role: string,
  address: string,
  detail: UnreachableDetail,
  timeoutMs: number,
  tls: boolean,
): string {
  const at = `cannot reach the ${role} at ${address}`;
  switch (detail.cause) {
    case 'dns':
      return `${at}: the host name does not resolve (DNS ${detail.errno ?? 'error'}): check the address`;
    case 'refused':
      return `${at}: nothing is listening there (ECONNREFUSED): is the ${role} running, and on this port?`;
    case 'no-route':
      return `${at}: no route to the host (${detail.errno ?? 'EHOSTUNREACH'}): check the address and the network`;
    case 'timeout':
      return `${at}: no answer within ${timeoutMs} ms (a firewall, or a wrong host?)`;
    case 'tls-untrusted':
      return (
        `${at}: the TLS handshake failed (${detail.errno ?? 'certificate not trusted'}): the server's ` +
        `certificate is not signed by the CA this client trusts (tls.ca); give client and servers ` +
        `certificates of one CA (blockx certs)`
      );
    case 'no-grpc':
      return (
        `${at}: it accepts connections but no gRPC session came up within ${timeoutMs} ms: ` +
        (tls
          ? 'a TLS mismatch (this client uses TLS; does the server?) or not a BlockX server'
          : 'a TLS mismatch (this client uses plaintext; the server may want TLS: set `tls` in the config) or not a BlockX server')
      );
    default: {
      const never: never = detail.cause;
      return `${at}: ${String(never)}`;
    }
  }
}

/** The OS error codes of a failed TCP connect, by cause. */
function causeOfConnectError(code: string | undefined): ReachCause {
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NONAME')
    return 'dns';
  if (code === 'ETIMEDOUT') return 'timeout';
  return 'no-route';
}

/**
 * Resolves when `host:port` accepts a TCP connection within `timeoutMs`, else with why not. The socket is
 * closed at once: the probe only tells "nothing there" from "something there".
 */
export async function probeTcp(
  host: string,
  port: number,
  timeoutMs: number,
): Promise<UnreachableDetail | undefined> {
  if (isIP(host) === 0) {
    try {
      await withTimeout(lookup(host), timeoutMs);
    } catch (err) {
      if (err === TIMEOUT) return { cause: 'timeout' };
      const code = (err as NodeJS.ErrnoException).code;
      return { cause: 'dns', ...(code !== undefined ? { errno: code } : {}) };
    }
  }
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (detail: UnreachableDetail | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(detail);
    };
    const timer = setTimeout(() => done({ cause: 'timeout' }), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done({ cause: causeOfConnectError(err.code), ...(err.code !== undefined ? { errno: err.code } : {}) }),
    );
    socket.connect({ host, port });
  });
}

export interface EnsureReachableOptions {
  readonly role: 'coordinator' | 'worker';
  readonly address: string;
  readonly timeoutMs: number;
  readonly tls: boolean;
  /** The client's own readiness wait (BlockxClient#waitForReady): the gRPC session, after TCP. */
  readonly waitForReady: (timeoutMs: number) => Promise<void>;
  /** The client's TLS files: when no session comes up, a handshake of its own tells a CA mismatch apart. */
  readonly tlsMaterial?: { readonly ca: Buffer; readonly cert: Buffer; readonly key: Buffer };
  readonly clock?: () => number;
}

/**
 * The error code of a TLS handshake with `host:port` that fails to verify the server's certificate
 * against `material.ca` (UNABLE_TO_VERIFY_LEAF_SIGNATURE, SELF_SIGNED_CERT_IN_CHAIN, ...); undefined when
 * the chain verifies or the handshake fails for another reason (then it is not a CA mismatch). The host
 * name is not checked here: only who signed the certificate.
 */
export function probeTlsTrust(
  host: string,
  port: number,
  material: { readonly ca: Buffer; readonly cert: Buffer; readonly key: Buffer },
  timeoutMs: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host,
      port,
      ca: material.ca,
      cert: material.cert,
      key: material.key,
      ALPNProtocols: ['h2'],
      checkServerIdentity: () => undefined,
    });
    const done = (code: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(code);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.once('secureConnect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? '';
      const untrusted = /CERT|SIGNATURE|ISSUER|SELF_SIGNED|VERIFY/.test(code) && !code.includes('ALERT');
      done(untrusted ? code : undefined);
    });
  });
}

/**
 * Resolves once the target answers gRPC; otherwise rejects, within about `timeoutMs`, with an UNAVAILABLE
 * BlockxClientError whose message is unreachableMessage's line and whose `cause` names the ReachCause.
 */
export async function ensureReachable(opts: EnsureReachableOptions): Promise<void> {
  const clock = opts.clock ?? Date.now;
  const started = clock();
  const fail = (detail: UnreachableDetail): never => {
    throw new BlockxClientError(
      ClientErrorCode.UNAVAILABLE,
      unreachableMessage(opts.role, opts.address, detail, opts.timeoutMs, opts.tls),
      { address: opts.address, cause: detail },
    );
  };
  const hostPort = splitHostPort(opts.address);
  if (hostPort !== undefined) {
    const detail = await probeTcp(hostPort.host, hostPort.port, opts.timeoutMs);
    if (detail !== undefined) fail(detail);
  }
  const left = Math.max(1, opts.timeoutMs - (clock() - started));
  try {
    await opts.waitForReady(left);
  } catch {
    if (hostPort !== undefined && opts.tls && opts.tlsMaterial !== undefined) {
      const code = await probeTlsTrust(
        hostPort.host,
        hostPort.port,
        opts.tlsMaterial,
        Math.min(2_000, opts.timeoutMs),
      );
      if (code !== undefined) fail({ cause: 'tls-untrusted', errno: code });
    }
    fail({ cause: hostPort === undefined ? 'timeout' : 'no-grpc' });
  }
}

/** `--connect-timeout` / BLOCKX_CONNECT_TIMEOUT_MS → ms: flag over env over DEFAULT_CONNECT_TIMEOUT_MS. */
export function connectTimeoutOf(flag: string | undefined, env: NodeJS.ProcessEnv): number {
  const [text, from] =
    flag !== undefined
      ? [flag, '--connect-timeout']
      : env.BLOCKX_CONNECT_TIMEOUT_MS !== undefined && env.BLOCKX_CONNECT_TIMEOUT_MS.trim() !== ''
        ? [env.BLOCKX_CONNECT_TIMEOUT_MS, 'BLOCKX_CONNECT_TIMEOUT_MS']
        : [undefined, undefined];
  if (text === undefined) return DEFAULT_CONNECT_TIMEOUT_MS;
  const n = Number(text.trim());
  if (!Number.isInteger(n) || n < 1 || n > 600_000) {
    throw new RangeError(`${from} must be an integer number of milliseconds in 1..600000, got ${text}`);
  }
  return n;
}

const TIMEOUT = Symbol('timeout');

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(TIMEOUT), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
