// Binding and stopping grpc-js servers.
import * as grpc from '@grpc/grpc-js';

/**
 * Normalises a listen address the way operators write it (Go style): `:9090` and a bare `9090` mean all
 * IPv4 interfaces, `0.0.0.0:9090`. Anything else (`127.0.0.1:0`, `[::]:9090`, `unix:/run/w.sock`) is
 * passed through unchanged.
 */
export function listenAddress(addr: string): string {
  const trimmed = addr.trim();
  if (/^:\d+$/.test(trimmed)) return `0.0.0.0${trimmed}`;
  if (/^\d+$/.test(trimmed)) return `0.0.0.0:${trimmed}`;
  return trimmed;
}

/**
 * Binds `server` on `addr` (after listenAddress) with insecure credentials and resolves with the bound
 * port, which is the OS-chosen one when the address asks for port 0. grpc-js starts serving on bind.
 */
export function bindServer(server: grpc.Server, addr: string): Promise<number> {
  const target = listenAddress(addr);
  return new Promise((resolve, reject) => {
    server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) reject(new Error(`cannot listen on ${target}: ${err.message}`, { cause: err }));
      else resolve(port);
    });
  });
}

/**
 * Stops accepting calls and waits for open ones to finish; after `graceMs` the remaining calls (e.g.
 * long-lived WatchTasks streams) are cancelled with forceShutdown. Resolves once the server is stopped.
 */
export function shutdownServer(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.forceShutdown(), graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
