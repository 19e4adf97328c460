// The baseline every gRPC benchmark is measured against: a raw grpc-js unary echo (bytes in, same bytes
// out, no protobuf), its server and its client constructor.
import * as grpc from '@grpc/grpc-js';

export const echoDefinition: grpc.ServiceDefinition = {
  Echo: {
    path: '/bench.Echo/Echo',
    requestStream: false,
    responseStream: false,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
};

export type EchoClient = grpc.Client & { Echo(b: Buffer, cb: (e: Error | null) => void): void };
export const EchoClient = grpc.makeGenericClientConstructor(echoDefinition, 'Echo') as unknown as new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => EchoClient;

/** Starts the echo server on a free loopback port. */
export async function startEcho(): Promise<{ addr: string; stop(): void }> {
  const server = new grpc.Server();
  server.addService(echoDefinition, {
    Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
      cb(null, call.request),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { addr: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

/**
 * A raw grpc-js relay on a free loopback port: its Echo calls the echo server at `upstream` and answers
 * with the request once that returns. The floor of any two-hop unary call (client → server → server),
 * such as ReserveWorkerSlot (client → Coordinator → Worker), with no protobuf and no handler logic.
 */
export async function startEchoRelay(upstream: string): Promise<{ addr: string; stop(): void }> {
  const client = new EchoClient(upstream, grpc.credentials.createInsecure());
  const server = new grpc.Server();
  server.addService(echoDefinition, {
    Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
      client.Echo(call.request, (err) => cb(err, err ? undefined : call.request)),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return {
    addr: `127.0.0.1:${port}`,
    stop: () => {
      server.forceShutdown();
      client.close();
    },
  };
}
