// Contract E2E, coordinator ↔ worker (docs/coordinator.md § Tests)
// with REAL processes only: a real etcd, `blockx coordinator` and `blockx worker` from the built CLI
// (`node bin/blockx.js`), talking over real gRPC and registering through etcd (leased heartbeats).
// Workers run functions with their default call runner; the task is examples/tasks/hello-world.json.
//
// Each test starts its own cluster (test/support/cluster.ts) on one shared etcd: every cluster has its own
// v2 registry prefix, so no test sees another's workers, and the harness's config has the minimum
// `registry.etcd.leaseTtlMs`, 2000 ms, so a SIGKILLed worker vanishes quickly. Per-test timings come
// through the env (COORDINATOR_*, WORKER_*).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseWorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import { createCoordinatorClient, createWorkerClient, unaryCall } from '../../src/grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../../src/grpc/convert.js';
import type { TaskUpdate } from '../../src/grpc/domain-types.js';
import type { CoordinatorServiceClient, WorkerServiceClient } from '../../src/grpc/proto.js';
import { businessCodeOf, statusCodeOf } from '../../src/grpc/status.js';
import type {
  ReserveWorkerSlotResponseWireOut,
  SubmitTaskResponseWireOut,
  TaskInputWire,
  TaskUpdateWireOut,
} from '../../src/grpc/wire-types.js';
import { CLUSTER_LEASE_TTL_MS, REPO, startCluster } from '../support/cluster.js';
import type { ClusterOptions, ClusterWorker, TestCluster } from '../support/cluster.js';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import { eventually, present } from '../support/eventually.js';

const LEASE_TTL_MS = CLUSTER_LEASE_TTL_MS;

interface HelloExample {
  task_id: string;
  functionCallConfig: { type: string; config: unknown };
  resultHandler: { type: string; config: unknown };
  taskTimeoutMs: number;
}
const EXAMPLE = JSON.parse(
  readFileSync(path.join(REPO, 'examples/tasks/hello-world.json'), 'utf8'),
) as HelloExample;

/** The example task, under `taskId` (the example's own id by default). */
function helloTask(taskId = EXAMPLE.task_id): TaskInputWire {
  return taskInputToWire({
    taskId,
    functionCallConfig: EXAMPLE.functionCallConfig,
    resultHandler: EXAMPLE.resultHandler,
    taskTimeoutMs: EXAMPLE.taskTimeoutMs,
  });
}

interface Outcome {
  code: number;
  business?: string;
  details?: string;
  workerAddr?: string;
  slotId?: string;
}

async function outcome<T>(p: Promise<T>, ok: (r: T) => Partial<Outcome> = () => ({})): Promise<Outcome> {
  try {
    return { code: grpc.status.OK, ...ok(await p) };
  } catch (err) {
    return {
      code: statusCodeOf(err) ?? -1,
      business: businessCodeOf(err),
      details: (err as grpc.ServiceError).details,
    };
  }
}

// How this file has always polled: every 50 ms, for 15_000 ms unless a call says otherwise.
const POLL = { timeoutMs: 15_000, intervalMs: 50 } as const;

interface CoordinatorProc {
  readonly addr: string;
  readonly client: CoordinatorServiceClient;
}

describe('contract: coordinator ↔ worker (real etcd, real blockx processes)', () => {
  let etcd: EtcdServer;
  let raw: Etcd3;
  const clients: grpc.Client[] = [];
  const clusters: TestCluster[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(clusters.splice(0).map((c) => c.stop()));
  });

  afterAll(async () => {
    await Promise.all(clusters.map((c) => c.stop()));
    raw?.close();
    await etcd?.stop();
  });

  /** A cluster of its own on the shared etcd, with a gRPC client of its coordinator. */
  async function startOwnCluster(
    opts: Omit<ClusterOptions, 'etcd'>,
  ): Promise<{ cluster: TestCluster; co: CoordinatorProc; ws: readonly ClusterWorker[] }> {
    const cluster = await startCluster({ ...opts, etcd });
    clusters.push(cluster);
    const client = createCoordinatorClient(cluster.coordinatorAddr);
    clients.push(client);
    return { cluster, co: { addr: cluster.coordinatorAddr, client }, ws: cluster.workers };
  }

  const reserve = (c: CoordinatorProc, taskId: string): Promise<Outcome> =>
    outcome(
      unaryCall<ReserveWorkerSlotResponseWireOut>(
        (md, o, cb) => c.client.reserveWorkerSlot({ taskId }, md, o, cb),
        { timeoutMs: 10_000 },
      ),
      (r) => ({ workerAddr: r.workerAddr, slotId: r.slotId }),
    );

  /** ReserveWorkerSlot until it succeeds (the coordinator's watch may not have listed the workers yet). */
  const reserveOk = (c: CoordinatorProc, taskId: string): Promise<Outcome> =>
    eventually(
      async () => {
        const r = await reserve(c, taskId);
        return present(r.code === grpc.status.OK ? r : undefined, `a reservation for ${taskId}`);
      },
      { ...POLL, message: `a reservation for ${taskId}` },
    );

  const submit = (w: WorkerServiceClient, task: TaskInputWire, slotId: string): Promise<Outcome> =>
    outcome(
      unaryCall<SubmitTaskResponseWireOut>((md, o, cb) => w.submitTask({ task, slotId }, md, o, cb), {
        timeoutMs: 10_000,
      }),
    );

  function watchToEnd(w: WorkerServiceClient, taskId: string): Promise<TaskUpdate[]> {
    return new Promise((resolve, reject) => {
      const updates: TaskUpdate[] = [];
      const stream = w.watchTasks({ taskIds: [taskId] });
      stream.on('data', (u: TaskUpdateWireOut) => updates.push(taskUpdateFromWire(u)));
      stream.on('end', () => resolve(updates));
      stream.on('error', reject);
    });
  }

  const workerClient = (addr: string): WorkerServiceClient => {
    const c = createWorkerClient(addr);
    clients.push(c);
    return c;
  };

  it('ReserveWorkerSlot, then SubmitTask with the slot_id to the returned worker, runs hello-world', async () => {
    const { co, ws } = await startOwnCluster({ workers: 2 });

    const r = await reserveOk(co, EXAMPLE.task_id);
    expect(r.slotId).toMatch(/\S/);
    expect(ws.map((w) => w.addr)).toContain(r.workerAddr);
    const target = workerClient(r.workerAddr ?? '');
    expect(await submit(target, helloTask(), r.slotId ?? '')).toMatchObject({ code: grpc.status.OK });
    const last = (await watchToEnd(target, EXAMPLE.task_id)).at(-1);
    expect(last).toMatchObject({
      taskId: EXAMPLE.task_id,
      state: 'SUCCEEDED',
      isTerminal: true,
      workerAddr: r.workerAddr,
    });
    expect(last?.result?.executeResult.pluginResults[0]).toMatchObject({
      pluginName: 'ReturnValueResultHandler',
      success: true,
      result: ['hello, ct2', 'hello, blockx'],
    });
  });

  it('SubmitTask after the slot TTL expired → FAILED_PRECONDITION (InvalidSlot)', async () => {
    const { cluster, co } = await startOwnCluster({ workers: 1, env: { COORDINATOR_SLOT_TTL_MS: '500' } });

    const r = await reserveOk(co, 'ttl-1');
    const reservedAt = Date.now(); // the slot's TTL started before this
    // TTL 500 ms; the worker's timer scan runs every 500 ms (timerScanMs) and drops the slot. Its heartbeat
    // (every 100 ms) says so: one written after the TTL had run out, with no reserved slot.
    const key = `${cluster.registryPrefix}${r.workerAddr ?? ''}`;
    await eventually(
      async () => {
        const hb = parseWorkerHeartbeat((await raw.get(key).string()) ?? '');
        return hb.ok && hb.value.lastHeartbeatMs > reservedAt + 500 && hb.value.reservedSlots === 0;
      },
      { ...POLL, message: 'a heartbeat without the expired slot' },
    );
    const target = workerClient(r.workerAddr ?? '');
    expect(await submit(target, helloTask('ttl-1'), r.slotId ?? '')).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      business: 'InvalidSlot',
    });
    // Control: a fresh reservation submitted at once is accepted.
    const fresh = await reserveOk(co, 'ttl-2');
    expect(
      await submit(workerClient(fresh.workerAddr ?? ''), helloTask('ttl-2'), fresh.slotId ?? ''),
    ).toMatchObject({
      code: grpc.status.OK,
    });
  });

  it('an old slot id is invalid after a worker restart (same address)', async () => {
    // A long slot TTL: the old slot would still be valid had the worker not restarted.
    const { co, ws } = await startOwnCluster({ workers: 1, env: { COORDINATOR_SLOT_TTL_MS: '60000' } });
    const worker = ws[0];
    if (worker === undefined) throw new Error('the worker did not start');
    const addrBefore = worker.addr;
    const r = await reserveOk(co, 'restart-1');
    expect(r.workerAddr).toBe(addrBefore);

    await worker.restart(); // SIGKILL, then the same address again
    expect(worker.addr).toBe(addrBefore);
    const after = { addr: worker.addr, client: workerClient(worker.addr) };
    expect(await submit(after.client, helloTask('restart-1'), r.slotId ?? '')).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      business: 'InvalidSlot',
    });
    // The restarted worker serves new reservations through the coordinator.
    const again = await reserveOk(co, 'restart-2');
    expect(again).toMatchObject({ workerAddr: after.addr });
    expect(again.slotId).not.toBe(r.slotId);
    expect(await submit(after.client, helloTask('restart-2'), again.slotId ?? '')).toMatchObject({
      code: grpc.status.OK,
    });
  });

  it('a full slot pool (WORKER_TASK_SLOTS=1): a second reservation → RESOURCE_EXHAUSTED', async () => {
    const { co, ws } = await startOwnCluster({
      workers: 1,
      taskSlots: 1,
      env: { COORDINATOR_SLOT_TTL_MS: '1000' },
    });
    const w = { addr: ws[0]?.addr };

    expect(await reserveOk(co, 'full-1')).toMatchObject({ workerAddr: w.addr });
    const second = await reserve(co, 'full-2');
    expect(second.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // Either the worker said NoSlot (all candidates rejected) or the coordinator already saw the full
    // pool in the worker's heartbeat (reservedSlots = taskSlots) and contacted nobody: both are the
    // documented ResourceExhausted, and which one wins is a race with the 100 ms heartbeat.
    expect(['AllCandidatesRejected', 'NoExecutableSlot']).toContain(second.business);
    // The reservation expires with its TTL and the slot comes back.
    const later = await reserveOk(co, 'full-3');
    expect(later).toMatchObject({ workerAddr: w.addr });
  });

  it('a SIGKILLed worker leaves the registry after its lease and traffic moves to the other worker', async () => {
    const { cluster, co, ws } = await startOwnCluster({
      workers: 2,
      // The victim (worker 0) has more free slots, so it is ranked first while it is registered; the
      // survivor has enough for the five reservations below even while their tasks are still running.
      workerEnv: (i) => ({ WORKER_TASK_SLOTS: i === 0 ? '16' : '8' }),
      // Probing reservations that land on the survivor hold its slots for one slot TTL: keep it short so
      // they cannot fill its slots while the victim is still being killed and expired.
      env: { COORDINATOR_SLOT_TTL_MS: '1000' },
    });
    const [victim, survivorWorker] = ws;
    if (victim === undefined || survivorWorker === undefined) throw new Error('workers did not start');
    const survivor = { addr: survivorWorker.addr, client: workerClient(survivorWorker.addr) };
    const prefix = cluster.registryPrefix;
    const first = await eventually(
      async () => {
        const r = await reserve(co, `kill-${Date.now()}`);
        return present(r.workerAddr === victim.addr ? r : undefined, 'the victim ranked first');
      },
      { ...POLL, message: 'the victim ranked first' },
    );
    expect(first.code).toBe(grpc.status.OK);

    const killedAt = Date.now();
    await victim.kill('SIGKILL');
    // No clean shutdown: the key goes only when its lease (2 s) expires.
    await eventually(async () => (await raw.get(`${prefix}${victim.addr}`).string()) === null, {
      ...POLL,
      timeoutMs: LEASE_TTL_MS + 5_000,
      message: 'the victim key expired',
    });
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_TTL_MS - 1_000);

    for (let i = 0; i < 5; i++) {
      const r = await reserve(co, `after-kill-${i}`);
      expect(r, `${i}: ${JSON.stringify(r)}`).toMatchObject({
        code: grpc.status.OK,
        workerAddr: survivor.addr,
      });
      expect(await submit(survivor.client, helloTask(`after-kill-${i}`), r.slotId ?? '')).toMatchObject({
        code: grpc.status.OK,
      });
    }
  });
});
