// The gRPC side of roles (docs/security.md § Roles): one server interceptor checks every call against
// the table in src/kernel/roles.ts before its handler runs. With TLS off nobody is authenticated and
// nothing is checked (identities are claims; docs/security.md § TLS and authentication).

import * as grpc from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';
import { cachedRolesOf, permissionProblem } from '../kernel/roles.js';

/** The peer certificate of a call, or undefined on a plaintext connection. */
export function peerCertificate(call: {
  getAuthContext?(): { sslPeerCertificate?: PeerCertificate };
}): PeerCertificate | undefined {
  let cert: PeerCertificate | undefined;
  try {
    cert = call.getAuthContext?.().sslPeerCertificate;
  } catch {
    cert = undefined;
  }
  return cert === undefined || Object.keys(cert).length === 0 ? undefined : cert;
}

/**
 * A grpc-js server interceptor that refuses a call whose caller's roles do not include one its method
 * requires, with PERMISSION_DENIED naming the role, before the handler sees a byte. A plaintext call
 * passes (nothing to check). Install it only on servers that speak TLS (run-worker, run-coordinator).
 */
export function authorizationInterceptor(): grpc.ServerInterceptor {
  return (method, call) => {
    const cert = peerCertificate(call);
    const problem = cert === undefined ? undefined : permissionProblem(method.path, cachedRolesOf(cert));
    if (problem === undefined) return new grpc.ServerInterceptingCall(call);
    const listener = new grpc.ServerListenerBuilder()
      .withOnReceiveMetadata(() => call.sendStatus({ code: grpc.status.PERMISSION_DENIED, details: problem }))
      .build();
    return new grpc.ServerInterceptingCall(
      call,
      new grpc.ResponderBuilder().withStart((next) => next(listener)).build(),
    );
  };
}

/**
 * `new grpc.Server(...)` options with the authorization interceptor when the server speaks TLS (`tls`
 * set); unchanged for a plaintext server, which has nobody to check.
 */
export function withAuthorization(options: grpc.ServerOptions, tls: unknown): grpc.ServerOptions {
  return tls === undefined ? options : { ...options, interceptors: [authorizationInterceptor()] };
}
