// Client construction and promise-returning unary calls, shared by the Coordinator (to Workers), the
// TypeScript client and the CLI. Connections use mutual TLS when the caller passes TlsMaterial
// (./tls.js, docs/security.md § TLS and authentication), plaintext otherwise.
import * as grpc from '@grpc/grpc-js';
import { DeadlineQueue, type CancelSignal, type DeadlineEntry } from '../kernel/cancel.js';
import { CLIENT_CHANNEL_OPTIONS } from './channel-options.js';
import {
  BundleCoordinatorServiceClient,
  CoordinatorServiceClient,
  WorkerAdminServiceClient,
  WorkerServiceClient,
} from './proto.js';
import { grpcStatusError } from './status.js';
import { channelCredentials } from './tls.js';
import type { TlsMaterial } from '../kernel/tls-files.js';

type ClientConstructor<C> = new (
  addr: string,
  credentials: grpc.ChannelCredentials,
  options: grpc.ClientOptions,
) => C;

/**
 * A client with the shared channel options, over TLS when `tls` is given. (The lean AsyncResource#bind
 * is installed by the entry points, not here: src/grpc/lean-bind.ts.)
 */
function newClient<C>(
  Client: ClientConstructor<C>,
  addr: string,
  options: grpc.ClientOptions,
  tls: TlsMaterial | undefined,
): C {
  return new Client(addr, channelCredentials(tls), { ...CLIENT_CHANNEL_OPTIONS, ...options });
}

export function createWorkerClient(
  addr: string,
  options: grpc.ClientOptions = {},
  tls?: TlsMaterial,
): WorkerServiceClient {
  return newClient(WorkerServiceClient, addr, options, tls);
}

/** WorkerAdminService of a Worker (what it serves; its recent tasks). */
export function createWorkerAdminClient(
  addr: string,
  options: grpc.ClientOptions = {},
  tls?: TlsMaterial,
): WorkerAdminServiceClient {
  return newClient(WorkerAdminServiceClient, addr, options, tls);
}

export function createCoordinatorClient(
  addr: string,
  options: grpc.ClientOptions = {},
  tls?: TlsMaterial,
): CoordinatorServiceClient {
  return newClient(CoordinatorServiceClient, addr, options, tls);
}

export function createBundleCoordinatorClient(
  addr: string,
  options: grpc.ClientOptions = {},
  tls?: TlsMaterial,
): BundleCoordinatorServiceClient {
  return newClient(BundleCoordinatorServiceClient, addr, options, tls);
}

export interface UnaryCallOptions {
  /**
   * Deadline relative to now; omitted means no deadline. Enforced by this process, not sent as a gRPC
   * deadline: see `unaryCall`.
   */
  timeoutMs?: number;
  metadata?: grpc.Metadata;
  /**
   * Cancels the call (the promise rejects with a CANCELLED ServiceError). An AbortSignal, or any cheaper
   * CancelSignal (src/kernel/cancel.ts).
   */
  signal?: CancelSignal;
}

/** Every unary call's deadline in this process, on one timer. */
const deadlines = new DeadlineQueue();

/** Unary calls of this process with a deadline still pending (diagnostics and tests). */
export function pendingUnaryDeadlines(): number {
  return deadlines.size;
}

/** What a unary call whose deadline passed rejects with (what a grpc-js deadline would give). */
export function deadlineExceededError(timeoutMs: number): grpc.ServiceError {
  return grpcStatusError(
    grpc.status.DEADLINE_EXCEEDED,
    `Deadline exceeded: no answer within ${timeoutMs} ms`,
  );
}

/**
 * Runs one unary call as a promise. The generated clients overload every method, so the call is passed
 * as a lambda and the response type is named explicitly:
 *   `await unaryCall<RequestTaskSlotResponseWireOut>((md, o, cb) => client.requestTaskSlot(req, md, o, cb), { timeoutMs: 3000 })`
 * Rejects with the grpc-js ServiceError (see businessCodeOf / statusCodeOf in ./status.js).
 *
 * `timeoutMs` is enforced here: one DeadlineQueue timer for every call in flight cancels a call once its
 * deadline passes, and the call rejects with DEADLINE_EXCEEDED (`deadlineExceededError`), as with a gRPC
 * deadline. It is not sent to the server as `grpc-timeout`: a grpc-js deadline costs ~9% of a whole
 * unary round trip (the header, its parsing and a timer at each end; bench/reserve), and no BlockX
 * handler reads its call's deadline. A cancelled call still reaches the server (RST_STREAM), so a handler
 * waiting on something (ReserveWorkerSlot) stops when the caller's deadline passes.
 */
export function unaryCall<Res>(
  invoke: (
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: grpc.requestCallback<Res>,
  ) => grpc.ClientUnaryCall,
  opts: UnaryCallOptions = {},
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    const { timeoutMs, signal } = opts;
    let deadline: DeadlineEntry | undefined;
    let timedOut = false;
    let onAbort: (() => void) | undefined;
    const call = invoke(opts.metadata ?? new grpc.Metadata(), {}, (err, res) => {
      if (deadline !== undefined) deadlines.remove(deadline);
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
      // An answer that made it wins over a deadline that passed while it was being delivered.
      if (err) reject(timedOut && timeoutMs !== undefined ? deadlineExceededError(timeoutMs) : err);
      else if (res === undefined) reject(new Error('gRPC call completed without a response'));
      else resolve(res);
    });
    if (timeoutMs !== undefined) {
      deadline = deadlines.add(Date.now() + timeoutMs, () => {
        timedOut = true;
        call.cancel();
      });
    }
    if (signal !== undefined) {
      if (signal.aborted) call.cancel();
      else {
        onAbort = () => call.cancel();
        signal.addEventListener('abort', onAbort, { once: true });
      }
    }
  });
}
