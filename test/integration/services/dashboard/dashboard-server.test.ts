// The dashboard's listener on real loopback sockets (src/services/dashboard/adapters/dashboard-server.ts):
// the page and the event stream over HTTP, close() ending open streams promptly, the loopback rule
// without TLS, a port in use, and HTTPS that requires a client certificate of the cluster CA.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCa, issueCertificate } from '../../../../src/cli/certs/dev-ca.js';
import {
  startDashboardServer,
  type RunningDashboardServer,
} from '../../../../src/services/dashboard/adapters/dashboard-server.js';
import { eventually } from '../../../support/eventually.js';
import { FakeSource, snapshotAt } from '../../../unit/services/dashboard/fakes.js';

const servers: RunningDashboardServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(opts: Partial<Parameters<typeof startDashboardServer>[0]> = {}) {
  const source = new FakeSource(snapshotAt(1_000));
  const server = await startDashboardServer({ listenAddr: '127.0.0.1:0', source, ...opts });
  servers.push(server);
  return { server, source };
}

function get(url: string, init: { tls?: Record<string, unknown> } = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https') ? httpsRequest : httpRequest)(url, { ...init.tls }, resolve);
    req.once('error', reject);
    req.end();
  });
}

async function bodyOf(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return text;
}

describe('startDashboardServer', () => {
  it('serves the shipped page and its script over HTTP, with the security headers', async () => {
    const { server } = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await get(server.url);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(await bodyOf(page)).toContain('assets/app.js');
    const js = await get(`${server.url}assets/app.js`);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(await bodyOf(js)).toContain('EventSource');
  });

  it('streams snapshots over a socket, and close() ends the stream and frees the port', async () => {
    const { server, source } = await start({ keepAliveMs: 50 });
    const res = await get(`${server.url}api/events`);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    let text = '';
    res.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const ended = new Promise<void>((resolve) => res.once('close', () => resolve()));
    await eventually(() => text.includes('"atMs":1000'), { message: 'the first snapshot' });
    source.push(snapshotAt(2_000));
    await eventually(() => text.includes('"atMs":2000'), { message: 'the pushed snapshot' });
    await eventually(() => text.includes(': keep-alive'), { message: 'a keep-alive comment' });
    expect(server.eventClients()).toBe(1);
    await server.close();
    await ended;
    // The port is free again: another server binds it.
    const again = await startDashboardServer({ listenAddr: server.address, source });
    servers.push(again);
    expect(again.address).toBe(server.address);
  });

  it('an empty address starts nothing', async () => {
    const server = await startDashboardServer({ listenAddr: '', source: new FakeSource(snapshotAt(1)) });
    expect(server).toMatchObject({ address: '', url: '', port: 0 });
  });

  it('refuses a non-loopback address without TLS unless allowPlaintext, and a malformed one', async () => {
    const source = new FakeSource(snapshotAt(1));
    await expect(startDashboardServer({ listenAddr: ':0', source })).rejects.toThrow(
      /observability\.dashboard\.listenAddr 0\.0\.0\.0:0 is reachable from other hosts, and TLS is off/,
    );
    await expect(startDashboardServer({ listenAddr: 'nope', source })).rejects.toMatchObject({
      code: 'DASHBOARD_ADDRESS_INVALID',
    });
    const open = await startDashboardServer({ listenAddr: ':0', source, allowPlaintext: true });
    servers.push(open);
    expect(open.address).toMatch(/^0\.0\.0\.0:\d+$/);
  });

  it('a port in use is DASHBOARD_LISTEN_FAILED with the EADDRINUSE error as its cause', async () => {
    const held: Server = createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    const port = (held.address() as { port: number }).port;
    try {
      const err = await startDashboardServer({
        listenAddr: `127.0.0.1:${port}`,
        source: new FakeSource(snapshotAt(1)),
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'DASHBOARD_LISTEN_FAILED', where: `127.0.0.1:${port}` });
      expect((err as Error & { cause: { code: string } }).cause.code).toBe('EADDRINUSE');
    } finally {
      await new Promise<void>((resolve) => held.close(() => resolve()));
    }
  });

  it('with TLS, a client certificate of the cluster CA is required', async () => {
    const ca = createCa({ commonName: 'test ca', days: 1 });
    const service = issueCertificate(ca, {
      commonName: 'svc',
      hosts: ['127.0.0.1'],
      usage: 'service',
      days: 1,
    });
    const client = issueCertificate(ca, { commonName: 'op', hosts: [], usage: 'client', days: 1 });
    const { server } = await start({
      tls: { ca: Buffer.from(ca.cert), cert: Buffer.from(service.cert), key: Buffer.from(service.key) },
    });
    expect(server.url).toMatch(/^https:\/\//);
    const withCert = await get(`${server.url}api/snapshot`, {
      tls: { ca: ca.cert, cert: client.cert, key: client.key },
    });
    expect(withCert.statusCode).toBe(200);
    expect(JSON.parse(await bodyOf(withCert)).atMs).toBe(1_000);
    // TLS 1.3 reports a missing client certificate after the handshake, as a reset or an alert.
    await expect(get(`${server.url}api/snapshot`, { tls: { ca: ca.cert } }).then(bodyOf)).rejects.toThrow();
    // Every route needs a viewing role (docs/security.md § Roles): a viewer reads, a worker's
    // certificate from the same CA does not.
    const as = (roles: string[]) => {
      const kc = issueCertificate(ca, { commonName: roles[0]!, hosts: [], usage: 'client', roles, days: 1 });
      return { ca: ca.cert, cert: kc.cert, key: kc.key };
    };
    expect((await get(`${server.url}api/snapshot`, { tls: as(['viewer']) })).statusCode).toBe(200);
    for (const route of ['', 'api/snapshot', 'api/events']) {
      const refused = await get(`${server.url}${route}`, { tls: as(['worker']) });
      expect(refused.statusCode, route).toBe(403);
      expect(await bodyOf(refused)).toMatch(
        /the dashboard needs the role viewer or submitter or deployer or admin/,
      );
    }
  });

  it('closes connections from one address beyond maxConnectionsPerAddress', async () => {
    const { server } = await start({ maxConnectionsPerAddress: 3 });
    const port = Number(new URL(server.url).port);
    const sockets = await Promise.all(
      Array.from(
        { length: 3 },
        () =>
          new Promise<Socket>((resolve) => {
            const s = connect(port, '127.0.0.1', () => resolve(s));
          }),
      ),
    );
    try {
      const extra = connect(port, '127.0.0.1');
      await new Promise<void>((resolve) => extra.once('close', () => resolve()));
      // Once one closes, a new connection is served again.
      sockets.pop()!.destroy();
      await eventually(() =>
        get(`${server.url}api/snapshot`).then(
          (r) => r.statusCode === 200,
          () => false,
        ),
      );
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});
