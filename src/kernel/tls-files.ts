// TLS for every BlockX endpoint: the PEM files of the `tls` config key and the rule that keeps a plaintext
// service on loopback (no gRPC import: the CLI loads this at startup; the credentials are in
// src/grpc/tls.ts).
// docs/security.md § TLS and authentication.
//
// The model is mutual TLS with one cluster CA. A server presents its certificate and asks every caller
// for one signed by the CA (grpc-js `checkClientCertificate`): Workers, Coordinators, the CLI and client
// programs all authenticate with certificates. A client verifies the server's certificate against the
// CA and against the host it dials (an IP SAN for an IP address), so a Coordinator only talks to a
// Worker whose certificate names the address the Worker advertised in the registry.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import type { TlsConfig } from './config-types.js';
import { BlockxError } from './errors.js';

/** The PEM contents of the cluster CA and of this process's certificate and key. */
export interface TlsMaterial {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Where the PEM files are: the resolved `tls` config key (all three empty = TLS off). */
export interface TlsFiles {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** PEM contents as a client library caller passes them (strings or Buffers). */
export interface TlsPem {
  readonly ca: string | Buffer;
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----/;
const PEM_KEY = /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/;

/**
 * Reads the three PEM files, or returns undefined when TLS is off (all paths empty). A missing or
 * unreadable file, or one that holds no PEM block of the right kind, is a CONFIG_INVALID error naming the
 * config key and the path (never the contents).
 */
export function loadTlsMaterial(files: TlsFiles, keyPrefix = 'tls'): TlsMaterial | undefined {
  if (files.ca === '' && files.cert === '' && files.key === '') return undefined;
  const read = (name: 'ca' | 'cert' | 'key', kind: RegExp, what: string): Buffer => {
    const file = files[name];
    if (file === '') throw configError(`${keyPrefix}.${name}: is required when TLS is on`);
    let data: Buffer;
    try {
      data = readFileSync(file);
    } catch (err) {
      throw configError(`${keyPrefix}.${name}: cannot read ${file}: ${(err as Error).message}`);
    }
    if (!kind.test(data.toString('latin1'))) {
      throw configError(`${keyPrefix}.${name}: ${file} holds no PEM ${what}`);
    }
    return data;
  };
  return {
    ca: read('ca', PEM_CERT, 'certificate'),
    cert: read('cert', PEM_CERT, 'certificate'),
    key: read('key', PEM_KEY, 'private key'),
  };
}

/** PEM strings or Buffers as TlsMaterial (the client library's `tls` option). */
export function tlsMaterialOf(pem: TlsPem): TlsMaterial {
  const buf = (v: string | Buffer) => (typeof v === 'string' ? Buffer.from(v) : v);
  return { ca: buf(pem.ca), cert: buf(pem.cert), key: buf(pem.key) };
}

/** `127.0.0.1:9090`, `[::1]:9090`, `localhost:9090`: the host part names this machine's loopback. */
export function isLoopbackListen(addr: string): boolean {
  const trimmed = addr.trim();
  if (trimmed.startsWith('unix:')) return true;
  const colon = trimmed.lastIndexOf(':');
  if (colon <= 0) return false; // ':9090' or '9090': every interface.
  let host = trimmed.slice(0, colon);
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.toLowerCase() === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1';
  return false;
}

/**
 * Refuses a plaintext listener that other hosts can reach: with TLS off, `what` (e.g. `worker.listen`)
 * must be a loopback address unless `tls.allowPlaintext` says otherwise. Returns the error to throw, or
 * undefined when the address is fine.
 */
export function plaintextListenProblem(
  what: string,
  addr: string,
  tlsOn: boolean,
  allowPlaintext: boolean,
): BlockxError | undefined {
  if (tlsOn || allowPlaintext || isLoopbackListen(addr)) return undefined;
  return configError(
    `${what} ${addr} is reachable from other hosts, and TLS is off: set tls.ca, tls.cert and tls.key ` +
      '(`blockx certs` makes a development CA), listen on 127.0.0.1, or set tls.allowPlaintext: true ' +
      '(BLOCKX_TLS_ALLOW_PLAINTEXT=1) on a network you trust. docs/security.md § TLS and authentication',
  );
}

/**
 * What a service binds with: the TLS material of `config.tls` (undefined when off), after refusing a
 * plaintext `listen` that other hosts can reach (plaintextListenProblem).
 */
export function serviceTls(tls: TlsConfig, what: string, listen: string): TlsMaterial | undefined {
  const material = loadTlsMaterial(tls);
  const problem = plaintextListenProblem(what, listen, material !== undefined, tls.allowPlaintext);
  if (problem !== undefined) throw problem;
  return material;
}

function configError(message: string): BlockxError {
  return new BlockxError('CONFIG_INVALID', message);
}
