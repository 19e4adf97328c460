// Roles on a real cluster with mutual TLS (docs/security.md § Roles): certificates for each role from
// the code behind `blockx certs --role`; every refusal is PERMISSION_DENIED naming the role needed,
// before the handler runs. The cluster's own services hold certificates without role names (what
// `blockx certs` issued before roles), so they keep working as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyAndCert } from '../../src/cli/certs/dev-ca.js';
import { BlockxClient } from '../../src/client/client.js';
import {
  CoordinatorAdminServiceClient,
  CoordinatorJobsServiceClient,
  CoordinatorServiceClient,
  WorkerAdminServiceClient,
  WorkerServiceClient,
} from '../../src/grpc/proto.js';
import type { TlsPem } from '../../src/kernel/tls-files.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { loopbackTls } from '../support/certs.js';
import { freePort } from '../support/ports.js';

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-roles-'));
const tls = loopbackTls(dir);
const pem = (kc: KeyAndCert): TlsPem => ({ ca: tls.ca.cert, cert: kc.cert, key: kc.key });
const submitter = tls.issue('alice'); // --client: no role name, a submitter
const viewer = tls.issue('vera', [], ['viewer']);
const deployer = tls.issue('dora', [], ['deployer']);
const workerOnly = tls.issue('w9', ['127.0.0.1'], ['worker']);
const mallory = tls.issue('mallory');

const hello = (taskId: string) => ({
  taskId,
  functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [['x']] } },
});

type Unary = (
  req: object,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null) => void,
) => void;
const call = (client: grpc.Client, method: string, req: object) =>
  new Promise<grpc.ServiceError | null>((resolve) =>
    ((client as unknown as Record<string, Unary>)[method] as Unary).call(
      client,
      req,
      new grpc.Metadata(),
      { deadline: Date.now() + 5_000 },
      (err) => resolve(err),
    ),
  );
const creds = (kc: KeyAndCert) =>
  grpc.credentials.createSsl(Buffer.from(tls.ca.cert), Buffer.from(kc.key), Buffer.from(kc.cert));

describe('roles from certificates on a TLS cluster', () => {
  let cluster: TestCluster;
  let dashboardUrl = '';

  beforeAll(async () => {
    const dashboardPort = await freePort();
    dashboardUrl = `https://127.0.0.1:${dashboardPort}/`;
    cluster = await startCluster({
      workers: 1,
      env: {
        BLOCKX_TLS_CA: tls.files.ca,
        BLOCKX_TLS_CERT: tls.files.cert,
        BLOCKX_TLS_KEY: tls.files.key,
        BLOCKX_DASHBOARD_LISTEN_ADDR: `127.0.0.1:${dashboardPort}`,
        BLOCKX_DASHBOARD_INTERVAL_MS: '200',
      },
      clientTls: pem(tls.node),
    });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a submitter runs tasks and reads the cluster, but cannot deploy code', async () => {
    const client = new BlockxClient({ coordinator: cluster.coordinatorAddr, tls: pem(submitter) });
    try {
      const outcome = await client.run(hello(`roles-submit-${Date.now()}`));
      expect(outcome.success).toBe(true);
      expect((await client.clusterStatus()).workers).toHaveLength(1);
    } finally {
      client.close();
    }
    const admin = new CoordinatorAdminServiceClient(cluster.coordinatorAddr, creds(submitter));
    try {
      for (const method of ['deployFunctions', 'useFunctions']) {
        const err = await call(admin, method, { version: 'x' });
        expect(err?.code, method).toBe(grpc.status.PERMISSION_DENIED);
        expect(err?.details).toMatch(/needs the role deployer or admin .*holds: submitter/);
      }
    } finally {
      admin.close();
    }
  });

  it('a viewer reads the cluster but cannot reserve, submit or deploy', async () => {
    const admin = new CoordinatorAdminServiceClient(cluster.coordinatorAddr, creds(viewer));
    const coordinator = new CoordinatorServiceClient(cluster.coordinatorAddr, creds(viewer));
    const worker = new WorkerServiceClient(cluster.workers[0]!.addr, creds(viewer));
    try {
      expect(await call(admin, 'getClusterStatus', {})).toBeNull();
      // Past the role check (this cluster has no functions store, which the handler says).
      expect((await call(admin, 'listFunctions', {}))?.code).not.toBe(grpc.status.PERMISSION_DENIED);
      const reserve = await call(coordinator, 'reserveWorkerSlot', { taskId: 'roles-v' });
      expect(reserve?.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(reserve?.details).toMatch(/ReserveWorkerSlot needs the role submitter or admin .*holds: viewer/);
      const slot = await call(worker, 'requestTaskSlot', { taskId: 'roles-v', ttlMs: 1_000 });
      expect(slot?.code).toBe(grpc.status.PERMISSION_DENIED);
      expect((await call(admin, 'deployFunctions', { version: 'x' }))?.code).toBe(
        grpc.status.PERMISSION_DENIED,
      );
    } finally {
      admin.close();
      coordinator.close();
      worker.close();
    }
  });

  it('a deployer reaches the deploy handler but cannot run tasks', async () => {
    const admin = new CoordinatorAdminServiceClient(cluster.coordinatorAddr, creds(deployer));
    try {
      // Past the role check: the handler itself refuses an empty bundle.
      const err = await call(admin, 'deployFunctions', { version: 'x' });
      expect(err?.code).not.toBe(grpc.status.PERMISSION_DENIED);
      expect(err).not.toBeNull();
    } finally {
      admin.close();
    }
    const client = new BlockxClient({
      coordinator: cluster.coordinatorAddr,
      tls: pem(deployer),
      maxReserveAttempts: 1,
      batching: 'off',
    });
    try {
      await expect(client.run(hello(`roles-deployer-${Date.now()}`))).rejects.toThrow(
        /needs the role submitter/,
      );
    } finally {
      client.close();
    }
  });

  it('a worker certificate may not submit to another worker or read its tasks', async () => {
    const worker = new WorkerServiceClient(cluster.workers[0]!.addr, creds(workerOnly));
    try {
      for (const method of ['requestTaskSlot', 'getTaskResult']) {
        const err = await call(worker, method, { taskId: 'roles-w', ttlMs: 1_000 });
        expect(err?.code, method).toBe(grpc.status.PERMISSION_DENIED);
      }
    } finally {
      worker.close();
    }
  });

  it("a task id is its submitter's: another client gets a refusal, never the first one's result", async () => {
    const id = `roles-shared-id-${Date.now()}`;
    const as = (kc: KeyAndCert) =>
      new BlockxClient({
        coordinator: cluster.coordinatorAddr,
        tls: pem(kc),
        maxReserveAttempts: 1,
        batching: 'off',
      });
    const m = as(mallory);
    const a = as(submitter);
    try {
      const first = await m.run({
        taskId: id,
        functionCallConfig: {
          type: 'CallListCallConfig',
          config: { function: 'hello_world', callList: [['MALLORY']] },
        },
      });
      expect(first.success).toBe(true);
      const second = await a.run(hello(id)).then(
        (r) => r,
        (err: unknown) => err as Error,
      );
      // The one Worker holds the id for mallory: like a full cluster for alice, never mallory's result.
      expect(second).toBeInstanceOf(Error);
    } finally {
      m.close();
      a.close();
    }
    // Straight at the Worker: alice reads nothing of mallory's task; mallory reads it.
    const read = async (kc: KeyAndCert) => {
      const worker = new WorkerServiceClient(cluster.workers[0]!.addr, creds(kc));
      try {
        return await call(worker, 'getTaskResult', { taskId: id });
      } finally {
        worker.close();
      }
    };
    expect((await read(submitter))?.code).toBe(grpc.status.NOT_FOUND);
    expect(await read(mallory)).toBeNull();
    // Straight at the Worker, a submit of the id says why.
    const worker = new WorkerServiceClient(cluster.workers[0]!.addr, creds(submitter));
    try {
      const config = Buffer.from(JSON.stringify({ function: 'hello_world', callList: [['x']] }));
      const err = await call(worker, 'submitTask', {
        task: { taskId: id, functionCallConfig: { type: 'CallListCallConfig', config } },
      });
      expect(err?.code, err?.details).toBe(grpc.status.ALREADY_EXISTS);
      expect(err?.details).toMatch(/is in use by another client on this worker: choose another id/);
    } finally {
      worker.close();
    }
  });

  it("ListRecentTasks shows a submitter its own tasks, a viewer everyone's", async () => {
    const list = async (kc: KeyAndCert): Promise<string[]> => {
      const admin = new WorkerAdminServiceClient(cluster.workers[0]!.addr, creds(kc));
      try {
        return await new Promise((resolve, reject) =>
          admin.listRecentTasks(
            { afterSeq: 0, limit: 256 },
            new grpc.Metadata(),
            { deadline: Date.now() + 5_000 },
            (err, res) => (err ? reject(err) : resolve((res?.tasks ?? []).map((t) => t.taskId))),
          ),
        );
      } finally {
        admin.close();
      }
    };
    const all = await list(viewer);
    const alices = all.filter((id) => id.startsWith('roles-submit-'));
    const mallorys = all.filter((id) => id.startsWith('roles-shared-id-'));
    expect(alices.length).toBeGreaterThan(0);
    expect(mallorys.length).toBeGreaterThan(0);
    expect((await list(submitter)).sort()).toEqual(alices.sort());
    expect((await list(mallory)).sort()).toEqual(mallorys.sort());
  });

  it("the dashboard shows a submitter its own tasks and backfills, a viewer everyone's (over HTTPS)", async () => {
    // Alice reports a backfill's progress, as `blockx backfill` does.
    const jobs = new CoordinatorJobsServiceClient(cluster.coordinatorAddr, creds(submitter));
    try {
      const report = { jobId: 'alices-job', run: 'r1', per: 'block', fromBlock: 1, toBlock: 9, units: 9 };
      expect(await call(jobs, 'reportBackfillProgress', { ...report, startedAtMs: Date.now() })).toBeNull();
    } finally {
      jobs.close();
    }
    interface Seen {
      status: number;
      tasks: string[];
      backfills: string[];
      body: string;
    }
    const look = (kc: KeyAndCert): Promise<Seen> =>
      new Promise((resolve, reject) => {
        const req = httpsRequest(
          `${dashboardUrl}api/snapshot`,
          { ca: tls.ca.cert, cert: kc.cert, key: kc.key },
          (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => {
              const s =
                res.statusCode === 200
                  ? (JSON.parse(body) as {
                      recentTasks: { taskId: string }[];
                      backfills: { jobId: string }[];
                    })
                  : { recentTasks: [], backfills: [] };
              resolve({
                status: res.statusCode ?? 0,
                tasks: s.recentTasks.map((t) => t.taskId),
                backfills: s.backfills.map((j) => j.jobId),
                body,
              });
            });
          },
        );
        req.on('error', reject);
        req.end();
      });
    // The feed polls the Worker every 200 ms: wait until the viewer sees both submitters' tasks.
    let all: Seen = await look(viewer);
    for (let i = 0; i < 100; i++) {
      const ok =
        all.tasks.some((id) => id.startsWith('roles-submit-')) &&
        all.tasks.some((id) => id.startsWith('roles-shared-id-')) &&
        all.backfills.includes('alices-job');
      if (ok) break;
      await new Promise((r) => setTimeout(r, 200));
      all = await look(viewer);
    }
    expect(all.status).toBe(200);
    const alices = all.tasks.filter((id) => id.startsWith('roles-submit-'));
    const mallorys = all.tasks.filter((id) => id.startsWith('roles-shared-id-'));
    expect(alices.length).toBeGreaterThan(0);
    expect(mallorys.length).toBeGreaterThan(0);
    expect(all.backfills).toContain('alices-job');

    const a = await look(submitter);
    expect(a.status).toBe(200);
    expect(a.tasks.sort()).toEqual(alices.sort());
    expect(a.backfills).toEqual(['alices-job']);
    const m = await look(mallory);
    expect(m.tasks.sort()).toEqual(mallorys.sort());
    expect(m.backfills).toEqual([]);
    // A deployer submits nothing, so it sees no task; no view names a submitter.
    const d = await look(deployer);
    expect(d.status).toBe(200);
    expect(d.tasks).toEqual([]);
    for (const seen of [all, a, m, d]) expect(seen.body).not.toMatch(/"client"/);
  });
});
