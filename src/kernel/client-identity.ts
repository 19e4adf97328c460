// Who a request is from, as far as the per-client reservation rules care (docs/security.md
// § Reservations per client). The gRPC side (src/grpc/peer-identity.ts) derives it from the peer's
// certificate, or from the identity a trusted service forwarded; this module holds the pieces the
// Sans-IO cores share: the name used when nothing is known, and the check of a forwarded value.

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
