// Free loopback ports for test servers. The kernel picks a port for a listener bound to port 0; we close it
// and hand the number on. Another process can grab it in between, so callers that start a server on it
// must retry with a fresh port on EADDRINUSE.
import { createServer } from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`unexpected listener address ${String(address)}`));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** `count` distinct free ports (distinct even if the kernel would hand the same one out twice). */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort(host));
  return [...ports];
}

/** Whether a listener can take `port` now (nothing else holds it). */
export function canListen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
