// Free loopback ports for test servers. The kernel picks a port for a listener bound to port 0; we close it
// and hand the number on. Another process can grab it in between, so callers that start a server on it
// must retry with a fresh port on EADDRINUSE.
//
// A server that a test stops and starts again on the same port takes a `restartablePort()` instead: one
// below the kernel's ephemeral range. Ports of that range (what port 0 and `freePort` give) are also what
// every outgoing connection on the box is bound to, so one can take the port while the server is down
// (seen once: a worker restart failed with EADDRINUSE). Below the range only deliberate binds happen.
import { readFileSync } from 'node:fs';
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

/** Ports of one slice below the ephemeral range; each file running at once draws from its own slice. */
const SLICE = 1_000;
/** Slices: vitest's workers (VITEST_POOL_ID 1..), one for a run outside vitest (bench/), wrapped above. */
const SLICES = 16;
const PICK_ATTEMPTS = 50;
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (Linux's default when it cannot be read). */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isSafeInteger(low) && low > SLICE * (SLICES + 1) ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A free port below the ephemeral range, for a server that is killed and started again on it
 * (test/support/etcd.ts, the workers of test/support/cluster.ts). Files that run side by side draw from
 * disjoint slices, keyed by vitest's VITEST_POOL_ID (unique among the files running at once), and one
 * process never hands the same port out twice, so only a server outside the test run can take it between
 * a stop and a start. Starting on it can still fail with EADDRINUSE: callers retry with a fresh one.
 */
export async function restartablePort(host = '127.0.0.1'): Promise<number> {
  const pool = Number(process.env['VITEST_POOL_ID'] ?? 0);
  const slice = (Number.isSafeInteger(pool) && pool > 0 ? pool : 0) % SLICES;
  const top = ephemeralLow() - slice * SLICE;
  for (let attempt = 0; attempt < PICK_ATTEMPTS; attempt++) {
    const port = top - 1 - Math.floor(Math.random() * SLICE);
    if (handedOut.has(port) || !(await canListen(port, host))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port in ${top - SLICE}..${top - 1} after ${PICK_ATTEMPTS} tries`);
}

/** `count` distinct `restartablePort()`s. */
export async function restartablePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) ports.push(await restartablePort(host));
  return ports;
}
