// A client whose CA did not sign the server's certificate is told so (issue 33, item 8), not "a TLS
// mismatch (this client uses TLS; does the server?)": ensureReachable (src/client/reachability.ts) against
// a real TLS listener on loopback, with certificates of two CAs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer, type Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureReachable } from '../../../src/client/reachability.js';
import { loopbackTls, type LoopbackTls } from '../../support/certs.js';

describe('ensureReachable over TLS', () => {
  let dir = '';
  let server: Server;
  let address = '';
  let serverCa: LoopbackTls;
  let otherCa: LoopbackTls;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'blockx-reach-tls-'));
    serverCa = loopbackTls(mkdtempSync(path.join(dir, 'a-')), 'server CA');
    otherCa = loopbackTls(mkdtempSync(path.join(dir, 'b-')), 'other CA');
    // A TLS listener that never speaks gRPC: the session never comes up, whoever signed what.
    server = createServer({ key: serverCa.node.key, cert: serverCa.node.cert }, (s) =>
      s.on('error', () => {}),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(server.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const material = (t: LoopbackTls) => ({
    ca: Buffer.from(t.ca.cert),
    cert: Buffer.from(t.node.cert),
    key: Buffer.from(t.node.key),
  });
  const reach = (t: LoopbackTls) =>
    ensureReachable({
      role: 'coordinator',
      address,
      timeoutMs: 1_500,
      tls: true,
      tlsMaterial: material(t),
      waitForReady: () => Promise.reject(new Error('no session')),
    });

  it('a certificate from another CA: the handshake failure and what to do', async () => {
    await expect(reach(otherCa)).rejects.toThrow(
      new RegExp(
        `^cannot reach the coordinator at ${address}: the TLS handshake failed \\([A-Z_]+\\): the server's certificate is not signed by the CA this client trusts \\(tls\\.ca\\)`,
      ),
    );
  });

  it('the same CA but no gRPC: still the session line, not a CA mismatch', async () => {
    await expect(reach(serverCa)).rejects.toThrow(/it accepts connections but no gRPC session came up/);
  });
});
