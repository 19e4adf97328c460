// Client construction and promise-returning unary calls, shared by the Coordinator (to Workers), the
// TypeScript client and the CLI. Connections are plaintext: BlockX runs inside a trusted network.
import * as grpc from '@grpc/grpc-js';
import { CLIENT_CHANNEL_OPTIONS } from './channel-options.js';
import { BundleCoordinatorServiceClient, CoordinatorServiceClient, WorkerServiceClient } from './proto.js';

export function createWorkerClient(addr: string, options: grpc.ClientOptions = {}): WorkerServiceClient {
  return new WorkerServiceClient(addr, grpc.credentials.createInsecure(), {
    ...CLIENT_CHANNEL_OPTIONS,
    ...options,
  });
}

export function createCoordinatorClient(
  addr: string,
  options: grpc.ClientOptions = {},
): CoordinatorServiceClient {
  return new CoordinatorServiceClient(addr, grpc.credentials.createInsecure(), {
    ...CLIENT_CHANNEL_OPTIONS,
    ...options,
  });
}

export function createBundleCoordinatorClient(
  addr: string,
  options: grpc.ClientOptions = {},
): BundleCoordinatorServiceClient {
  return new BundleCoordinatorServiceClient(addr, grpc.credentials.createInsecure(), {
    ...CLIENT_CHANNEL_OPTIONS,
    ...options,
  });
}

export interface UnaryCallOptions {
  /** Deadline relative to now; omitted means no deadline. */
  timeoutMs?: number;
  metadata?: grpc.Metadata;
  /** Cancels the call (the promise rejects with a CANCELLED ServiceError). */
  signal?: AbortSignal;
}

/**
 * Runs one unary call as a promise. The generated clients overload every method, so the call is passed
 * as a lambda and the response type is named explicitly:
 *   `await unaryCall<RequestTaskSlotResponseWireOut>((md, o, cb) => client.requestTaskSlot(req, md, o, cb), { timeoutMs: 3000 })`
 * Rejects with the grpc-js ServiceError (see businessCodeOf / statusCodeOf in ./status.js).
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
    const callOptions: grpc.CallOptions = {};
    if (opts.timeoutMs !== undefined) callOptions.deadline = Date.now() + opts.timeoutMs;
    let onAbort: (() => void) | undefined;
    const call = invoke(opts.metadata ?? new grpc.Metadata(), callOptions, (err, res) => {
      if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else if (res === undefined) reject(new Error('gRPC call completed without a response'));
      else resolve(res);
    });
    if (opts.signal) {
      if (opts.signal.aborted) call.cancel();
      else {
        onAbort = () => call.cancel();
        opts.signal.addEventListener('abort', onAbort, { once: true });
      }
    }
  });
}
