// Mutual TLS on a real cluster (docs/security.md § TLS and authentication): etcd serving TLS with client
// certificates and auth on, a Coordinator and two Workers with `tls` on, one of which holds a certificate
// from the cluster CA that does not name its advertised address. Certificates come from the same code
// as `blockx certs` (src/cli/certs/dev-ca.ts).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { Etcd3, Range } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyAndCert } from '../../src/cli/certs/dev-ca.js';
import { BlockxClient } from '../../src/client/client.js';
import { CoordinatorAdminServiceClient, WorkerServiceClient } from '../../src/grpc/proto.js';
import type { TlsPem } from '../../src/kernel/tls-files.js';
import { CLI, startCluster, type TestCluster } from '../support/cluster.js';
import { loopbackTls } from '../support/certs.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-tls-'));
const tls = loopbackTls(dir);
const { ca, node } = tls;
const caFile = tls.files.ca;
const nodeFiles = tls.files;
// Signed by the cluster CA, but for another name: a Worker advertising 127.0.0.1 with it is an impostor.
const elsewhereFiles = tls.issue('elsewhere', ['wrong.invalid']).files;
const submitter = tls.issue('submitter');
const foreign = loopbackTls(mkdtempSync(path.join(dir, 'foreign-')), 'someone else').node;

const ETCD_USER = 'blockx';
const ETCD_PASSWORD = 'correct horse battery staple';
const pem = (kc: KeyAndCert, caPem = ca.cert): TlsPem => ({ ca: caPem, cert: kc.cert, key: kc.key });
const etcdTls = {
  rootCertificate: Buffer.from(ca.cert),
  certChain: Buffer.from(node.cert),
  privateKey: Buffer.from(node.key),
};

const hello = (taskId: string) => ({
  taskId,
  functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [['x']] } },
});

describe('mutual TLS on every endpoint, etcd with TLS and auth', () => {
  let etcd: EtcdServer;
  let cluster: TestCluster;

  beforeAll(async () => {
    etcd = await startEtcd({ tls: tls.files });
    // Auth on: a root user, and a `blockx` user that may only touch /blockx/ (least privilege).
    const admin = new Etcd3({ hosts: etcd.endpoint, credentials: etcdTls });
    try {
      await admin.user('root').create('root-secret');
      await admin.user('root').addRole('root');
      await admin.role('blockx').create();
      await admin.role('blockx').grant({ permission: 'Readwrite', range: Range.prefix('/blockx/') });
      await admin.user(ETCD_USER).create(ETCD_PASSWORD);
      await admin.user(ETCD_USER).addRole('blockx');
      await admin.auth.authEnable({});
    } finally {
      admin.close();
    }
    cluster = await startCluster({
      workers: 2,
      etcd,
      env: {
        BLOCKX_TLS_CA: caFile,
        BLOCKX_TLS_CERT: nodeFiles.cert,
        BLOCKX_TLS_KEY: nodeFiles.key,
        ETCD_CA_FILE: caFile,
        ETCD_CERT_FILE: nodeFiles.cert,
        ETCD_KEY_FILE: nodeFiles.key,
        ETCD_USERNAME: ETCD_USER,
        ETCD_PASSWORD,
      },
      workerEnv: (i): Record<string, string> =>
        i === 1 ? { BLOCKX_TLS_CERT: elsewhereFiles.cert, BLOCKX_TLS_KEY: elsewhereFiles.key } : {},
      clientTls: pem(submitter),
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('etcd refuses a client without the password; the workers registered through TLS and auth', async () => {
    const anonymous = new Etcd3({ hosts: etcd.endpoint, credentials: etcdTls });
    try {
      await expect(anonymous.getAll().prefix('/blockx/').keys()).rejects.toThrow();
    } finally {
      anonymous.close();
    }
    const view = await cluster.status();
    expect(view.workers.map((w) => w.workerAddr).sort()).toEqual(cluster.workers.map((w) => w.addr).sort());
  });

  it('a submitter with a CA-signed certificate runs tasks; the worker whose certificate names another host is never used', async () => {
    const client = new BlockxClient({ coordinator: cluster.coordinatorAddr, tls: pem(submitter) });
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) => client.run(hello(`tls-ok-${Date.now()}-${i}`))),
      );
      expect(outcomes.every((o) => o.success)).toBe(true);
      const used = new Set(outcomes.map((o) => o.workerAddr));
      expect([...used]).toEqual([cluster.workers[0]!.addr]);
    } finally {
      client.close();
    }
  });

  it('a client without a certificate, or with one from another CA, is refused at the Coordinator and the Worker', async () => {
    const refused = async (opts: { tls?: TlsPem; target: 'coordinator' | 'worker' }) => {
      const client = new BlockxClient({
        ...(opts.target === 'coordinator'
          ? { coordinator: cluster.coordinatorAddr }
          : { worker: cluster.workers[0]!.addr }),
        ...(opts.tls === undefined ? {} : { tls: opts.tls }),
        rpcTimeoutMs: 3_000,
        maxReserveAttempts: 1,
        batching: 'off',
      });
      try {
        const outcome = await client.run(hello(`tls-refused-${Date.now()}`)).then(
          (r) => r,
          (err: unknown) => err as Error,
        );
        return outcome instanceof Error ? outcome : undefined;
      } finally {
        client.close();
      }
    };
    for (const target of ['coordinator', 'worker'] as const) {
      // Plaintext against a TLS port.
      expect(await refused({ target }), `plaintext → ${target}`).toBeInstanceOf(Error);
      // A certificate the cluster CA did not sign (our client trusts the cluster CA for the server).
      expect(
        await refused({ target, tls: { ca: ca.cert, cert: foreign.cert, key: foreign.key } }),
        `foreign certificate → ${target}`,
      ).toBeInstanceOf(Error);
    }
  });

  it('TLS without a client certificate gets nothing, GetClusterStatus included', async () => {
    const creds = grpc.credentials.createSsl(Buffer.from(ca.cert));
    const admin = new CoordinatorAdminServiceClient(cluster.coordinatorAddr, creds);
    const worker = new WorkerServiceClient(cluster.workers[0]!.addr, creds);
    const deadline = () => ({ deadline: Date.now() + 3_000 });
    try {
      const statusErr = await new Promise<grpc.ServiceError | null>((resolve) =>
        admin.getClusterStatus({}, new grpc.Metadata(), deadline(), (err) => resolve(err)),
      );
      expect(statusErr?.code).toBe(grpc.status.UNAVAILABLE);
      const slotErr = await new Promise<grpc.ServiceError | null>((resolve) =>
        worker.requestTaskSlot({ taskId: 'x', ttlMs: 1000 }, new grpc.Metadata(), deadline(), (err) =>
          resolve(err),
        ),
      );
      expect(slotErr?.code).toBe(grpc.status.UNAVAILABLE);
    } finally {
      admin.close();
      worker.close();
    }
    // The same call with the submitter's certificate is answered.
    const client = new BlockxClient({ coordinator: cluster.coordinatorAddr, tls: pem(submitter) });
    try {
      expect((await client.clusterStatus()).workers.length).toBe(2);
    } finally {
      client.close();
    }
  });

  it('the CLI reads the tls key: `blockx status` with BLOCKX_TLS_* is answered, without them it is unreachable (exit 2)', async () => {
    const status = (env: Record<string, string>) =>
      execFileAsync(process.execPath, [CLI, 'status', '--json', '--timeout', '3000'], {
        env: { ...cluster.env, ...env },
        timeout: 30_000,
      }).then(
        (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
        (err: { code?: number; stdout?: string; stderr?: string }) => ({
          code: typeof err.code === 'number' ? err.code : -1,
          stdout: err.stdout ?? '',
          stderr: err.stderr ?? '',
        }),
      );
    const ok = await status({
      BLOCKX_TLS_CA: caFile,
      BLOCKX_TLS_CERT: nodeFiles.cert,
      BLOCKX_TLS_KEY: nodeFiles.key,
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect((JSON.parse(ok.stdout) as { workers: unknown[] }).workers).toHaveLength(2);
    // Without them the TLS handshake never completes: an unreachable coordinator (exit 2), one line
    // that names the address and suggests the TLS mismatch (src/client/reachability.ts).
    const plain = await status({});
    expect(plain.code, plain.stderr).toBe(2);
    expect(plain.stderr).toMatch(/TLS mismatch \(this client uses plaintext/);
    expect(plain.stderr.trim().split('\n')).toHaveLength(1);
  });
});
