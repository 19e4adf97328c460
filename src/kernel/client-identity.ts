// Who a request is from, as far as the per-client reservation rules care (docs/security.md
// § Reservations per client). The gRPC side (src/grpc/peer-identity.ts) derives it from the peer's
// certificate, or from the identity a trusted service forwarded; this module holds the pieces the
// Sans-IO cores share: the name used when nothing is known, and the check of a forwarded value.

import { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { idProblem } from './input-bounds.js';

/** The identity of a caller that presented neither a certificate nor a forwarded identity. */
export const ANONYMOUS_CLIENT = 'anonymous';

/**
 * The metadata key a service (the Coordinator) forwards the identity of the client it acts for under,
 * e.g. on the RequestTaskSlot(s) it sends to a Worker for a ReserveWorkerSlot(s).
 */
export const CLIENT_IDENTITY_METADATA_KEY = 'blockx-client';

/** A forwarded identity is accepted when it is bounded like an id (docs/security.md § Input bounds). */
export function clientIdentityProblem(value: unknown): string | undefined {
  return idProblem(value);
}

/**
 * The identity a certificate stands for: its subject CN when that is a valid identity, else its SHA-256
 * fingerprint; undefined when it has neither. One rule for gRPC calls and the dashboard, so a task's
 * submitter and the dashboard page of the same certificate are one client.
 */
export function certificateIdentity(cert: PeerCertificate): string | undefined {
  const cn = cert.subject?.CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  if (typeof name === 'string' && name !== '' && clientIdentityProblem(name) === undefined) return name;
  return typeof cert.fingerprint256 === 'string' && cert.fingerprint256 !== ''
    ? cert.fingerprint256
    : undefined;
}

/**
 * certificateIdentity of a PEM certificate (the first of a chain): what the services will take this
 * process for when it presents it (a client's own identity, e.g. to bind a backfill run to it).
 */
export function pemCertificateIdentity(pem: string | Buffer): string | undefined {
  const cert = new X509Certificate(pem);
  const cn = /^CN=(.*)$/m.exec(cert.subject)?.[1];
  return certificateIdentity({
    subject: cn === undefined ? {} : { CN: cn },
    fingerprint256: cert.fingerprint256,
  } as unknown as PeerCertificate);
}
