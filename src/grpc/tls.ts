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
  return grpc.credentials.createSsl(tls.ca, tls.key, tls.cert);
}
