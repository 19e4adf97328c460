// Process-level tests of the built `blockx` for issue 16, item 1 (docs/security.md § TLS and
// authentication): `blockx certs` makes a CA and certificates in one step; a service refuses a plaintext
// listener other hosts can reach unless told otherwise; with the certificates it serves TLS on every
// interface, and only a caller with a certificate from the CA gets an answer.
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerServiceClient } from '../../src/grpc/proto.js';
import { spawnTracked, stopGroup, waitForLine } from '../support/processes.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-tls-listen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_)/.test(k)) delete env[k];
  return { ...env, BLOCKX_STORAGE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`, ...extra };
}

function blockx(args: string[], env: Record<string, string> = {}, cwd = REPO) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: cleanEnv(env),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const certs = path.join(dir, 'certs');

describe('blockx certs', () => {
  it('creates a CA once, then issues service and client certificates with private keys 0600', () => {
    const first = blockx(['certs', '--dir', certs, '--host', '10.1.2.3', '--host', 'w1.internal'], {}, dir);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/created a CA/);
    expect(first.stdout).toMatch(/for localhost, 127\.0\.0\.1, ::1, .*10\.1\.2\.3, w1\.internal/);
    expect(first.stdout).toContain(
      `tls:\n  ca: certs/ca.pem\n  cert: certs/node.pem\n  key: certs/node-key.pem`,
    );
    const client = blockx(['certs', '--dir', certs, '--name', 'alice', '--client'], {}, dir);
    expect(client.code, client.stderr).toBe(0);
    expect(client.stdout).toMatch(/using the CA in/);
    for (const key of ['ca-key.pem', 'node-key.pem', 'alice-key.pem'])
      expect(statSync(path.join(certs, key)).mode & 0o777, key).toBe(0o600);
    expect(statSync(certs).mode & 0o777).toBe(0o700);
    // Both certificates chain to the one CA.
    const ca = readFileSync(path.join(certs, 'ca.pem'), 'utf8');
    expect(readFileSync(path.join(certs, 'node.pem'), 'utf8')).not.toBe(ca);
  });

  it('--role writes the roles into the certificate (docs/security.md § Roles)', () => {
    const person = blockx(
      ['certs', '--dir', certs, '--name', 'dora', '--role', 'deployer', '--role', 'viewer'],
      {},
      dir,
    );
    expect(person.code, person.stderr).toBe(0);
    expect(person.stdout).toMatch(/\(client use\), roles: deployer, viewer/);
    const dora = new X509Certificate(readFileSync(path.join(certs, 'dora.pem')));
    expect(dora.subjectAltName).toBe('URI:urn:blockx:role:deployer, URI:urn:blockx:role:viewer');
    expect(dora.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth only
    const service = blockx(['certs', '--dir', certs, '--name', 'w1', '--role', 'worker'], {}, dir);
    expect(service.code, service.stderr).toBe(0);
    const w1 = new X509Certificate(readFileSync(path.join(certs, 'w1.pem')));
    expect(w1.subjectAltName).toMatch(
      /DNS:localhost, IP Address:127\.0\.0\.1, .*URI:urn:blockx:role:worker$/,
    );
    expect(w1.keyUsage).toContain('1.3.6.1.5.5.7.3.1'); // serverAuth
    // --client writes no role name: it reads as a submitter, as before roles.
    expect(new X509Certificate(readFileSync(path.join(certs, 'alice.pem'))).subjectAltName).toBeUndefined();
  });

  it.each([
    [['--days', '0'], /--days must be an integer/],
    [['--name', 'ca'], /--name must be a file name/],
    [['--host', 'bad host'], /--host must be a DNS name or an IP address/],
    [['--client', '--host', 'x.example'], /client certificates name no hosts/],
    [['--role', 'viewer', '--host', 'x.example'], /client certificates name no hosts/],
    [
      ['--role', 'root'],
      /--role must be one of admin, deployer, submitter, viewer, coordinator, worker, got "root"/,
    ],
    [['--client', '--role', 'viewer'], /--client and --role do not go together/],
  ])('%j is a usage error', (args, message) => {
    const r = blockx(['certs', '--dir', path.join(dir, 'unused'), ...args], {}, dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

describe('plaintext listeners stay on loopback', () => {
  it('a worker on 0.0.0.0 without TLS exits 2 naming the key and the way out', () => {
    const r = blockx(['worker', '--deployment', 'block'], { WORKER_LISTEN: '0.0.0.0:0' });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/deployments\.block\.worker\.listen 0\.0\.0\.0:0 is reachable from other hosts/);
    expect(r.stderr).toMatch(/blockx certs/);
    expect(r.stderr).not.toMatch(/unexpected error|\n\s+at /);
  });

  it('a coordinator on :0 without TLS exits 2 before it dials etcd', () => {
    const r = blockx(['coordinator', '--deployment', 'block'], {
      COORDINATOR_LISTEN: ':0',
      ETCD_ENDPOINTS: 'http://127.0.0.1:1',
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/coordinator\.listen :0 is reachable from other hosts/);
  });

  it('a Prometheus endpoint on every interface without TLS is refused too', () => {
    const r = blockx(['worker', '--deployment', 'block'], {
      WORKER_LISTEN: '127.0.0.1:0',
      BLOCKX_PROMETHEUS_LISTEN_ADDR: ':0',
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(
      /observability\.prometheus\.listenAddr 0\.0\.0\.0:0 is reachable from other hosts/,
    );
  });

  it('BLOCKX_TLS_ALLOW_PLAINTEXT=1 lets it listen on every interface', async () => {
    const child = spawnTracked(process.execPath, [BIN, 'worker', '--deployment', 'block'], {
      cwd: REPO,
      env: cleanEnv({ WORKER_LISTEN: '0.0.0.0:0', BLOCKX_TLS_ALLOW_PLAINTEXT: '1' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await waitForLine(child, /^worker listening on \S+/, 30_000);
    } finally {
      await stopGroup(child, 'SIGTERM', 10_000);
    }
  });
});

describe('a worker with TLS on every interface', () => {
  it('answers a caller with a CA-signed certificate and refuses one without', async () => {
    const gen = blockx(['certs', '--dir', certs, '--name', 'bob', '--client'], {}, dir);
    expect(gen.code, gen.stderr).toBe(0);
    const child = spawnTracked(process.execPath, [BIN, 'worker', '--deployment', 'block'], {
      cwd: REPO,
      env: cleanEnv({
        WORKER_LISTEN: '0.0.0.0:0',
        BLOCKX_TLS_CA: path.join(certs, 'ca.pem'),
        BLOCKX_TLS_CERT: path.join(certs, 'node.pem'),
        BLOCKX_TLS_KEY: path.join(certs, 'node-key.pem'),
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const line = await waitForLine(child, /^worker listening on \S+/, 30_000);
      const port = /^worker listening on \S*:(\d+)/.exec(line)?.[1];
      const addr = `127.0.0.1:${port}`;
      const ca = readFileSync(path.join(certs, 'ca.pem'));
      const slot = (creds: grpc.ChannelCredentials) =>
        new Promise<grpc.ServiceError | null>((resolve) => {
          const client = new WorkerServiceClient(addr, creds);
          client.requestTaskSlot(
            { taskId: `tls-${Date.now()}`, ttlMs: 1000 },
            new grpc.Metadata(),
            { deadline: Date.now() + 5_000 },
            (err) => {
              client.close();
              resolve(err);
            },
          );
        });
      const withCert = grpc.credentials.createSsl(
        ca,
        readFileSync(path.join(certs, 'bob-key.pem')),
        readFileSync(path.join(certs, 'bob.pem')),
      );
      expect(await slot(withCert)).toBeNull();
      expect((await slot(grpc.credentials.createSsl(ca)))?.code).toBe(grpc.status.UNAVAILABLE);
      expect((await slot(grpc.credentials.createInsecure()))?.code).toBe(grpc.status.UNAVAILABLE);
    } finally {
      await stopGroup(child, 'SIGTERM', 10_000);
    }
  });
});
