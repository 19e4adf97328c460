// The identity of the caller of a gRPC call, for the per-client reservation rules
// (docs/security.md § Reservations per client).
//
// - With TLS on, the caller's certificate says who it is: its subject CN, or its SHA-256 fingerprint
//   when it has no CN. Only a certificate holding the `coordinator` role (docs/security.md § Roles; a
//   service certificate without role names holds it) may act for a client: the Coordinator forwards
//   the identity of the client it reserves for in the `blockx-client` metadata, and a Worker takes it.
//   Any other certificate's `blockx-client` is ignored, so no client can spend another's share.
// - With TLS off nobody is authenticated: a forwarded `blockx-client` is taken as given, else the
//   caller is `anonymous`. The rules then guard against accidents, not against an adversary.

import type * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import {
  ANONYMOUS_CLIENT,
  CLIENT_IDENTITY_METADATA_KEY,
  certificateIdentity,
  clientIdentityProblem,
} from '../kernel/client-identity.js';
import { cachedRolesOf } from '../kernel/roles.js';
import { peerCertificate } from './authorization.js';

/** The part of a grpc-js server call the identity is read from. */
export interface IdentifiedCall {
  readonly metadata: grpc.Metadata;
  getAuthContext?(): { sslPeerCertificate?: PeerCertificate };
}

function forwardedIdentity(metadata: grpc.Metadata): string | undefined {
  const [value] = metadata.get(CLIENT_IDENTITY_METADATA_KEY);
  return typeof value === 'string' && clientIdentityProblem(value) === undefined ? value : undefined;
}

/** Who `call` is from (see the header): never empty, at most MAX_ID_BYTES. */
export function callerIdentity(call: IdentifiedCall): string {
  const cert = peerCertificate(call);
  const forwarded = forwardedIdentity(call.metadata);
  if (cert === undefined) return forwarded ?? ANONYMOUS_CLIENT;
  const own = certificateIdentity(cert) ?? ANONYMOUS_CLIENT;
  return forwarded !== undefined && cachedRolesOf(cert).includes('coordinator') ? forwarded : own;
}
