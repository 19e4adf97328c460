// A standalone `blockx coordinator` serves its Prometheus metrics at observability.prometheus.listenAddr
// as every service does: plain HTTP on loopback with TLS off, HTTPS asking for a client certificate from
// the cluster CA with `tls` on (docs/security.md § TLS and authentication). etcd is not needed for this:
// the coordinator serves (not ready) while its registry is unreachable.
import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loopbackTls } from '../support/certs.js';
import { freePort } from '../support/ports.js';
import { spawnTracked, stopGroup, waitForLine } from '../support/processes.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-coord-metrics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const e = { ...process.env };
  for (const k of Object.keys(e)) if (/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_)/.test(k)) delete e[k];
  return {
    ...e,
    ETCD_ENDPOINTS: 'http://127.0.0.1:1',
    COORDINATOR_LISTEN: '127.0.0.1:0',
    BLOCKX_LOG_LEVEL: 'info',
    ...extra,
  };
}

function get(
  url: string,
  tls?: { ca: string; cert?: string; key?: string },
): Promise<{ status: number; body: string } | Error> {
  return new Promise((resolve) => {
    const onResponse = (res: IncomingMessage): void => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    };
    const req = tls === undefined ? httpGet(url, onResponse) : httpsGet(url, { ...tls }, onResponse);
    req.setTimeout(5_000, () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve(err));
  });
}

async function withCoordinator<T>(extra: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const child = spawnTracked(process.execPath, [BIN, 'coordinator', '--deployment', 'block'], {
    cwd: REPO,
    env: env(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await waitForLine(child, /coordinator listening/, 30_000);
    return await fn();
  } finally {
    await stopGroup(child, 'SIGTERM', 10_000);
  }
}

describe('blockx coordinator serves /metrics', () => {
  it('over HTTP on loopback with TLS off', async () => {
    const port = await freePort();
    await withCoordinator({ BLOCKX_PROMETHEUS_LISTEN_ADDR: `127.0.0.1:${port}` }, async () => {
      const r = await get(`http://127.0.0.1:${port}/metrics`);
      expect(r).not.toBeInstanceOf(Error);
      expect((r as { status: number }).status).toBe(200);
      expect((r as { body: string }).body).toMatch(/blockx_coordinator_reserve_total\{/);
    });
  });

  it('over HTTPS with a client certificate when tls is on, and to nobody without one', async () => {
    const { ca, files, issue } = loopbackTls(dir);
    const scraper = issue('prom');
    const port = await freePort();
    await withCoordinator(
      {
        BLOCKX_PROMETHEUS_LISTEN_ADDR: `127.0.0.1:${port}`,
        BLOCKX_TLS_CA: files.ca,
        BLOCKX_TLS_CERT: files.cert,
        BLOCKX_TLS_KEY: files.key,
      },
      async () => {
        const url = `https://127.0.0.1:${port}/metrics`;
        const ok = await get(url, { ca: ca.cert, cert: scraper.cert, key: scraper.key });
        expect(ok).not.toBeInstanceOf(Error);
        expect((ok as { status: number }).status).toBe(200);
        expect((ok as { body: string }).body).toMatch(/blockx_coordinator_reserve_total\{/);
        expect(await get(url, { ca: ca.cert })).toBeInstanceOf(Error);
        expect(await get(`http://127.0.0.1:${port}/metrics`)).toBeInstanceOf(Error);
      },
    );
  });
});
