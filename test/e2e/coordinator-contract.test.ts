// Contract E2E of the Coordinator (docs/coordinator.md § Tests: coordinator ↔ etcd and coordinator ↔ worker)
// with a REAL etcd, the real runCoordinator app over gRPC, and fake Workers: real grpc-js servers on
// 127.0.0.1:0 whose RequestTaskSlot we script, each registered by a real HeartbeatPublisher (leased puts).
// Timings are shortened through the COORDINATOR_* variables, as docs/coordinator.md § Tests describes.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCoordinator } from '../../src/services/coordinator/app/run-coordinator.js';
import type { RunningCoordinator } from '../../src/services/coordinator/app/run-coordinator.js';
import { HeartbeatPublisher } from '../../src/services/worker/adapters/telemetry/heartbeat-publisher.js';
import { EtcdRegistryWriter } from '../../src/services/registry/etcd-registry-writer.js';
import { encodeWorkerHeartbeat } from '../../src/contracts/heartbeat.js';
import { resolveConfig } from '../../src/kernel/config.js';
import { parseConfigText } from '../../src/kernel/config-source.js';
import { createCoordinatorClient, unaryCall } from '../../src/grpc/clients.js';
import { HealthClient, checkHealth } from '../../src/grpc/health.js';
import type { HealthStatus } from '../../src/grpc/health.js';
import { workerServiceDefinition, SERVICE_NAMES } from '../../src/grpc/proto.js';
import type { WorkerServiceHandlers } from '../../src/grpc/proto.js';
import { bindServer, businessCodeOf, grpcStatusError } from '../../src/grpc/status.js';
import type { ReserveWorkerSlotResponseWireOut } from '../../src/grpc/wire-types.js';
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { freePort, restartablePort } from '../support/ports.js';
import { spawnTracked, stopGroup, waitForLine } from '../support/processes.js';
import { UNIMPLEMENTED_WORKER_BATCH } from '../support/unimplemented.js';

const PREFIX = '/blockx/workers/';
const RPC_TIMEOUT_MS = 300;
const GRACE_MS = 1_000;
const HEARTBEAT_TIMEOUT_MS = 3_000;

type Mode = 'ok' | 'full' | 'hang';

/** A fake Worker: a real WorkerService whose RequestTaskSlot follows `mode`. */
class FakeWorker {
  mode: Mode = 'ok';
  readonly requests: { taskId: string; ttlMs: number }[] = [];
  private readonly server = new grpc.Server();
  addr = '';

  async start(): Promise<this> {
    const notUsed = (_c: unknown, cb: grpc.sendUnaryData<never>): void =>
      cb(grpcStatusError(grpc.status.UNIMPLEMENTED, 'fake worker'));
    const handlers: WorkerServiceHandlers = {
      ...UNIMPLEMENTED_WORKER_BATCH,
      RequestTaskSlot: (call, cb) => {
        this.requests.push({ taskId: call.request.taskId, ttlMs: call.request.ttlMs });
        if (this.mode === 'hang') return;
        if (this.mode === 'full')
          return cb(grpcStatusError(grpc.status.RESOURCE_EXHAUSTED, 'no free slot', 'NoSlot'));
        cb(null, {
          taskId: call.request.taskId,
          slotId: `${this.addr}/${call.request.taskId}`,
          state: 'TASK_STATE_ALLOCATED',
        });
      },
      SubmitTask: notUsed,
      GetTaskResult: notUsed,
      WatchTasks: (call) => call.end(),
    };
    this.server.addService(workerServiceDefinition, handlers);
    this.addr = `127.0.0.1:${await bindServer(this.server, '127.0.0.1:0')}`;
    return this;
  }

  stop(): void {
    this.server.forceShutdown();
  }
}

interface Outcome {
  code: number;
  business?: string;
  details?: string;
  workerAddr?: string;
  slotId?: string;
}

describe('Coordinator contract (real etcd, real gRPC, fake workers)', () => {
  let etcd: EtcdServer;
  let raw: Etcd3;
  let coordinator: RunningCoordinator | undefined;
  let client: ReturnType<typeof createCoordinatorClient>;
  let health: HealthClient;
  const workers: FakeWorker[] = [];
  const publishers: HeartbeatPublisher[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
  });

  afterEach(async () => {
    client?.close();
    health?.close();
    await coordinator?.close();
    coordinator = undefined;
    if (etcd.pid === undefined) await etcd.restart();
    for (const p of publishers.splice(0)) await p.stop();
    for (const w of workers.splice(0)) w.stop();
    await raw.delete().prefix('/blockx/');
  });

  afterAll(async () => {
    raw?.close();
    await etcd?.stop();
  });

  async function startCoordinator(env: NodeJS.ProcessEnv = {}): Promise<RunningCoordinator> {
    const yaml = `version: 1
registry:
  etcd:
    endpoints: ["${etcd.endpoint}"]
deployments:
  block:
    kind: block
`;
    const config = resolveConfig(parseConfigText(yaml, '/tmp/blockx-e2e/blockx.config.yaml'), {
      deployments: ['block'],
      env: {
        COORDINATOR_LISTEN: '127.0.0.1:0',
        COORDINATOR_WORKER_RPC_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
        COORDINATOR_ETCD_WATCH_RETRY_DELAY_MS: '100',
        COORDINATOR_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS),
        COORDINATOR_WATCH_GRACE_PERIOD_MS: String(GRACE_MS),
        COORDINATOR_MAX_TIMEOUT_RETRIES: '1',
        // Real host figures are published; a busy CI box must not filter the fake workers.
        COORDINATOR_CPU_RED_LINE: '1',
        COORDINATOR_MEMORY_RED_LINE: '1',
        BLOCKX_LOG_LEVEL: 'silent',
        ...env,
      },
    });
    coordinator = await runCoordinator({ config, deployment: 'block' });
    client = createCoordinatorClient(coordinator.address);
    health = new HealthClient(coordinator.address, grpc.credentials.createInsecure());
    return coordinator;
  }

  async function addWorker(taskSlots: number, opts: { leaseTtlMs?: number } = {}): Promise<FakeWorker> {
    const w = await new FakeWorker().start();
    workers.push(w);
    const p = new HeartbeatPublisher({
      writer: new EtcdRegistryWriter({ endpoints: [etcd.endpoint], leaseTtlMs: opts.leaseTtlMs ?? 10_000 }),
      prefix: PREFIX,
      workerAddr: w.addr,
      intervalMs: 100,
      deriveHeartbeat: () => ({ taskSlots, reservedSlots: 0, runningTasks: 0 }),
    });
    publishers.push(p);
    p.start();
    return w;
  }

  async function reserve(taskId: string): Promise<Outcome> {
    try {
      const r = await unaryCall<ReserveWorkerSlotResponseWireOut>(
        (md, o, cb) => client.reserveWorkerSlot({ taskId }, md, o, cb),
        { timeoutMs: 10_000 },
      );
      return { code: grpc.status.OK, workerAddr: r.workerAddr, slotId: r.slotId };
    } catch (err) {
      const e = err as grpc.ServiceError;
      return { code: e.code, business: businessCodeOf(e), details: e.details };
    }
  }

  const healthOf = (): Promise<HealthStatus> => checkHealth(health, SERVICE_NAMES.coordinator, 2_000);

  const waitFor = async (what: string, cond: () => Promise<boolean> | boolean, timeoutMs = 10_000) => {
    await eventually(cond, { timeoutMs, intervalMs: 25, message: `waiting for ${what}` });
  };

  const routable = async (n: number): Promise<boolean> => coordinator?.watcherStats().workers === n;

  it('etcd started after the coordinator: Unavailable (NOT_SERVING) first, then recovery', async () => {
    await etcd.kill(); // the endpoint is known, nothing listens there yet
    await startCoordinator();
    expect(await reserve('early')).toMatchObject({ code: grpc.status.UNAVAILABLE, business: 'Unavailable' });
    expect(await healthOf()).toBe('NOT_SERVING');

    await etcd.restart();
    const w = await addWorker(4);
    await waitFor('SERVING', async () => (await healthOf()) === 'SERVING');
    await waitFor('the worker in the view', () => routable(1));
    expect(await reserve('late')).toMatchObject({
      code: grpc.status.OK,
      workerAddr: w.addr,
      slotId: `${w.addr}/late`,
    });
  });

  it('keeps routing while the watch recovers within the grace, and is Unavailable beyond it', async () => {
    await startCoordinator();
    const w = await addWorker(4);
    await waitFor('the worker in the view', () => routable(1));
    expect((await reserve('before')).workerAddr).toBe(w.addr);

    await etcd.kill();
    await waitFor(
      'disconnect noticed',
      () => coordinator?.watcherStats().disconnectedPrefixes.length === 1,
      5_000,
    );
    expect(await reserve('within-grace')).toMatchObject({ code: grpc.status.OK, workerAddr: w.addr });
    await etcd.restart();
    await waitFor('reconnected', () => coordinator?.watcherStats().disconnectedPrefixes.length === 0, 5_000);
    expect(await reserve('after-blip')).toMatchObject({ code: grpc.status.OK, workerAddr: w.addr });

    await etcd.kill();
    await waitFor('not ready beyond the grace', () => coordinator?.isReady() === false, GRACE_MS + 5_000);
    expect(await reserve('beyond-grace')).toMatchObject({
      code: grpc.status.UNAVAILABLE,
      business: 'Unavailable',
    });
    expect(await healthOf()).toBe('NOT_SERVING');
    const contacted = w.requests.length;
    expect(w.requests.map((r) => r.taskId)).not.toContain('beyond-grace');

    await etcd.restart();
    await waitFor('SERVING again', async () => (await healthOf()) === 'SERVING', 5_000);
    await waitFor(
      'fresh heartbeat routable',
      async () => (await reserve('recovered')).code === grpc.status.OK,
      5_000,
    );
    expect(w.requests.length).toBeGreaterThan(contacted);
  });

  it('switches to the next worker after a transport failure (registered, port closed)', async () => {
    await startCoordinator();
    const good = await addWorker(2);
    // Below the ephemeral range: no server of a file running beside this one can start on it meanwhile.
    const deadAddr = `127.0.0.1:${await restartablePort()}`;
    await raw
      .lease(60, { autoKeepAlive: false })
      .put(`${PREFIX}${deadAddr}`)
      .value(
        encodeWorkerHeartbeat({
          workerAddr: deadAddr,
          taskSlots: 16, // ranked first
          reservedSlots: 0,
          runningTasks: 0,
          cpuPercent: 0.1,
          memoryPercent: 0.1,
          memoryAvailableBytes: 1,
          memoryTotalBytes: 2,
          processRssBytes: 1,
          errorRate: 0,
          // Within maxClockSkewMs ahead (a stamp further ahead is not routable): fresh for ~7 s.
          lastHeartbeatMs: Date.now() + 4_000,
        }),
      );
    await waitFor('both in the view', () => routable(2));
    const r = await reserve('t1');
    expect(r).toMatchObject({ code: grpc.status.OK, workerAddr: good.addr, slotId: `${good.addr}/t1` });
    expect(good.requests).toEqual([{ taskId: 't1', ttlMs: 5_000 }]);
  });

  it('the registry probe (issue 16): forged lease-less keys and a leased key from the future never get a task', async () => {
    await startCoordinator();
    const good = await addWorker(64); // room for every reservation below
    const forged = (addr: string, lastHeartbeatMs: number): string =>
      encodeWorkerHeartbeat({
        workerAddr: addr,
        taskSlots: 100_000,
        reservedSlots: 0,
        runningTasks: 0,
        cpuPercent: 0,
        memoryPercent: 0,
        memoryAvailableBytes: 1,
        memoryTotalBytes: 2,
        processRssBytes: 1,
        errorRate: 0,
        lastHeartbeatMs,
      });
    // 200 keys written WITHOUT a lease on ports nothing listens on, each claiming the largest pool and a
    // heartbeat that never ages: before the fix every reservation went to them and failed.
    for (let i = 0; i < 200; i++) {
      const addr = `127.0.0.1:${1 + i}`;
      await raw.put(`${PREFIX}${addr}`).value(forged(addr, Number.MAX_SAFE_INTEGER));
    }
    // A key under a valid lease but stamped an hour ahead of the coordinator's clock.
    const futureAddr = `127.0.0.1:${await freePort()}`;
    await raw
      .lease(60, { autoKeepAlive: false })
      .put(`${PREFIX}${futureAddr}`)
      .value(forged(futureAddr, Date.now() + 3_600_000));
    await waitFor(
      'the forged keys seen and ignored',
      () => coordinator?.watcherStats().unleasedValues === 200 && coordinator.watcherStats().workers === 2,
    );
    for (let i = 0; i < 20; i++) {
      expect(await reserve(`probe-${i}`)).toMatchObject({ code: grpc.status.OK, workerAddr: good.addr });
    }
    expect(good.requests).toHaveLength(20);
  });

  it('a RequestTaskSlot that hangs past the rpc timeout → Aborted (SlotUncertain), same worker retried only', async () => {
    await startCoordinator();
    const hung = await addWorker(8);
    hung.mode = 'hang';
    const other = await addWorker(2);
    await waitFor('both in the view', () => routable(2));
    const started = Date.now();
    const r = await reserve('t-hang');
    expect(r).toEqual({
      code: grpc.status.ABORTED,
      business: 'SlotUncertain',
      details: 'unable to confirm slot reservation',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * RPC_TIMEOUT_MS);
    expect(hung.requests.map((q) => q.taskId)).toEqual(['t-hang', 't-hang']); // 1 + maxTimeoutRetries
    expect(other.requests).toEqual([]);
  });

  it('a full slot pool: every worker ResourceExhausted → ResourceExhausted "all candidates rejected"', async () => {
    await startCoordinator();
    const ws = [await addWorker(4), await addWorker(3), await addWorker(2)];
    for (const w of ws) w.mode = 'full';
    await waitFor('all in the view', () => routable(3));
    expect(await reserve('t-full')).toEqual({
      code: grpc.status.RESOURCE_EXHAUSTED,
      business: 'AllCandidatesRejected',
      details: 'all candidates rejected',
    });
    expect(ws.map((w) => w.requests.length)).toEqual([1, 1, 1]);
    // Backpressure does not trip breakers: the same workers are tried again at once.
    expect((await reserve('t-full-2')).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(ws.map((w) => w.requests.length)).toEqual([2, 2, 2]);
  });

  it('a worker whose heartbeat key is removed disappears and traffic moves to the others', async () => {
    await startCoordinator();
    const first = await addWorker(8);
    const second = await addWorker(4);
    await waitFor('both in the view', () => routable(2));
    expect((await reserve('a')).workerAddr).toBe(first.addr);

    await publishers[0]?.stop(); // clean shutdown: the key is deleted
    await waitFor('removal seen', () => routable(1));
    expect((await reserve('b')).workerAddr).toBe(second.addr);
    expect(first.requests.map((q) => q.taskId)).toEqual(['a']);
  });

  it('a killed worker vanishes once its lease expires', async () => {
    await startCoordinator({ COORDINATOR_HEARTBEAT_TIMEOUT_MS: '60000' });
    const survivor = await addWorker(2);
    const victim = await new FakeWorker().start();
    workers.push(victim);
    // The victim's heartbeats come from a separate process that we SIGKILL: no cleanup, no revoke.
    const child = spawnPublisher(victim.addr, 8, 2_000);
    try {
      await waitForLine(child, /published/, 20_000);
      await waitFor('both in the view', () => routable(2));
      expect((await reserve('v1')).workerAddr).toBe(victim.addr);
      await stopGroup(child, 'SIGKILL', 1_000);
      victim.stop();
      await waitFor('lease expiry removed the victim', () => routable(1), 8_000);
      expect((await reserve('v2')).workerAddr).toBe(survivor.addr);
    } finally {
      await stopGroup(child, 'SIGKILL', 1_000);
    }
  });

  /** A heartbeat publisher for `workerAddr` in a child process (prints "published" once registered). */
  function spawnPublisher(workerAddr: string, taskSlots: number, leaseTtlMs: number): ChildProcess {
    const src = (rel: string): string => JSON.stringify(fileURLToPath(new URL(rel, import.meta.url)));
    const script = `
      const { HeartbeatPublisher } = await import(${src('../../src/services/worker/adapters/telemetry/heartbeat-publisher.ts')});
      const { EtcdRegistryWriter } = await import(${src('../../src/services/registry/etcd-registry-writer.ts')});
      const writer = new EtcdRegistryWriter({ endpoints: [${JSON.stringify(etcd.endpoint)}], leaseTtlMs: ${leaseTtlMs} });
      const p = new HeartbeatPublisher({ writer, prefix: ${JSON.stringify(PREFIX)}, workerAddr: ${JSON.stringify(workerAddr)},
        intervalMs: 100, deriveHeartbeat: () => ({ taskSlots: ${taskSlots}, reservedSlots: 0, runningTasks: 0 }) });
      p.start();
      console.log('published', await p.publishOnce());
    `;
    return spawnTracked(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
  }
});
