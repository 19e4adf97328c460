// gRPC credentials from the cluster's TLS material (src/kernel/tls-files.ts): mutual TLS with one cluster
// CA. docs/security.md § TLS and authentication.
import * as grpc from '@grpc/grpc-js';
import type { TlsMaterial } from '../kernel/tls-files.js';

export {
  loadTlsMaterial,
  tlsMaterialOf,
  type TlsFiles,
  type TlsMaterial,
  type TlsPem,
} from '../kernel/tls-files.js';

/**
 * Server credentials: TLS with this process's certificate, and a client certificate signed by the CA
 * required from every caller; insecure when TLS is off.
 */
export function serverCredentials(tls: TlsMaterial | undefined): grpc.ServerCredentials {
  if (tls === undefined) return grpc.ServerCredentials.createInsecure();
  return grpc.ServerCredentials.createSsl(tls.ca, [{ cert_chain: tls.cert, private_key: tls.key }], true);
}

/**
 * Channel credentials: verify the server against the CA and the dialled host, present our certificate;
 * insecure when TLS is off.
 */
export function channelCredentials(tls: TlsMaterial | undefined): grpc.ChannelCredentials {
  if (tls === undefined) return grpc.credentials.createInsecure();
  quietIpServerNameWarning();
  return grpc.credentials.createSsl(tls.ca, tls.key, tls.cert);
}

let quieted = false;

/**
 * grpc-js sets the TLS server name (SNI) to the dialled host, and BlockX dials IP addresses: Node then
 * warns `DEP0123` (an IP address as SNI) once per process. The name is still checked against the
 * certificate's IP SANs; only the warning is dropped, and every other warning passes through.
 * docs/security.md § TLS and authentication.
 */
function quietIpServerNameWarning(): void {
  if (quieted) return;
  quieted = true;
  const emit = process.emitWarning.bind(process) as (...args: unknown[]) => void;
  process.emitWarning = ((...args: unknown[]): void => {
    const [, type, code] = args;
    const named = typeof type === 'object' && type !== null ? (type as { code?: unknown }).code : code;
    if (named === 'DEP0123') return;
    emit(...args);
  }) as typeof process.emitWarning;
}
