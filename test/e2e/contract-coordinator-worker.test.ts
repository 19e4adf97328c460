// Contract E2E, coordinator ↔ worker (seeds/coordinator.md § Testing, e2e/contract/coordinator-worker)
// with REAL processes only: a real etcd, `blockx coordinator` and `blockx worker` from the built CLI
// (`node bin/blockx.js`), talking over real gRPC and registering through etcd (leased heartbeats).
// Workers run functions with their default call runner; the task is examples/tasks/hello-world.json.
//
// Each test starts its own cluster under its own v2 registry prefix, so no test sees another's workers.
// Timings are shortened through the env (COORDINATOR_*, WORKER_*) and a temp copy of blockx.config.yaml
// whose `registry.etcd.leaseTtlMs` is the minimum, 2000 ms, so a SIGKILLed worker vanishes quickly.
import { execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
import { startEtcd } from '../support/etcd.js';
import type { EtcdServer } from '../support/etcd.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../support/processes.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(REPO, 'bin/blockx.js');
const LEASE_TTL_MS = 2_000;
const HEARTBEAT_TIMEOUT_MS = 3_000;

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

/** The environment without any BlockX / etcd variable of the caller's shell. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_|TASK_DEADLINE_MS|MAX_TASK_TIMEOUT_MS|RESULT_RETENTION_MS|WATCH_DISCONNECT_GRACE_MS|CALL_DEADLINE_MS)/.test(
          k,
        ),
    ),
  );
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

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface WorkerProc {
  readonly child: ChildProcess;
  readonly addr: string;
  readonly client: WorkerServiceClient;
  output(): string;
}

interface CoordinatorProc {
  readonly child: ChildProcess;
  readonly addr: string;
  readonly client: CoordinatorServiceClient;
  output(): string;
}

describe('contract: coordinator ↔ worker (real etcd, real blockx processes)', () => {
  let etcd: EtcdServer;
  let raw: Etcd3;
  let tmp = '';
  let configFile = '';
  let cluster = 0;
  const clients: grpc.Client[] = [];
  const children: ChildProcess[] = [];

  beforeAll(() => {
    if (!existsSync(path.join(REPO, 'dist/cli/main.js'))) {
      execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'ignore' });
    }
    // The repo's config with the shortest lease; relative dirs made absolute (they resolve against the
    // config file's directory).
    tmp = mkdtempSync(path.join(tmpdir(), 'blockx-contract-'));
    const yaml = readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8');
    const patched = yaml
      .replace(/leaseTtlMs: \d+/, `leaseTtlMs: ${LEASE_TTL_MS}`)
      .replace(/^( {2}dir:) functions$/m, `$1 ${JSON.stringify(path.join(REPO, 'functions'))}`)
      .replace(
        /^( {2}dirs:) \[plugins\/builders, plugins\/writers\]$/m,
        `$1 ${JSON.stringify([path.join(REPO, 'plugins/builders'), path.join(REPO, 'plugins/writers')])}`,
      );
    expect(patched).toContain(`leaseTtlMs: ${LEASE_TTL_MS}`);
    expect(patched).toContain(JSON.stringify(path.join(REPO, 'functions')));
    expect(patched).toContain(JSON.stringify(path.join(REPO, 'plugins/writers')));
    configFile = path.join(tmp, 'blockx.config.yaml');
    writeFileSync(configFile, patched);
  });
  beforeAll(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: etcd.endpoint });
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await Promise.all(children.splice(0).map((c) => stopGroup(c, 'SIGKILL', 1_000)));
  });

  afterAll(async () => {
    await Promise.all(children.map((c) => stopGroup(c, 'SIGKILL', 1_000)));
    raw?.close();
    await etcd?.stop();
    if (tmp !== '') rmSync(tmp, { recursive: true, force: true });
  });

  /** A registry prefix of its own for each cluster (v2 form, block kind). */
  const newPrefix = (): string => `/blockx/e2e/lanes/c${++cluster}/workers/`;

  function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
    const child = spawnTracked(process.execPath, [CLI, ...args, '--config', configFile], {
      cwd: REPO,
      env: { ...cleanEnv(), ETCD_ENDPOINTS: etcd.endpoint, ...env },
    });
    children.push(child);
    return child;
  }

  async function startWorker(prefix: string, env: Record<string, string> = {}): Promise<WorkerProc> {
    const child = spawnCli(['worker', '--deployment', 'block'], {
      WORKER_LISTEN: '127.0.0.1:0',
      WORKER_REGISTRY_PREFIX: prefix,
      WORKER_HEARTBEAT_INTERVAL: '100',
      BLOCKX_LOG_LEVEL: 'warn',
      ...env,
    });
    const out = captureOutput(child);
    const line = await waitForLine(child, /^worker listening on \S+/, 30_000);
    const addr = /^worker listening on (\S+)/.exec(line)?.[1] ?? '';
    const client = createWorkerClient(addr);
    clients.push(client);
    // Registered in etcd (the coordinator learns about it through its watch).
    await waitFor(`${addr} in etcd`, async () =>
      (await raw.get(`${prefix}${addr}`).string()) ? true : undefined,
    );
    return { child, addr, client, output: () => out.text() };
  }

  async function startCoordinator(
    prefix: string,
    env: Record<string, string> = {},
  ): Promise<CoordinatorProc> {
    const child = spawnCli(['coordinator', '--deployment', 'block'], {
      COORDINATOR_LISTEN: '127.0.0.1:0',
      COORDINATOR_REGISTRY_PREFIXES: prefix,
      COORDINATOR_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS),
      COORDINATOR_WATCH_GRACE_PERIOD_MS: '1000',
      COORDINATOR_ETCD_WATCH_RETRY_DELAY_MS: '100',
      COORDINATOR_WORKER_RPC_TIMEOUT_MS: '2000',
      // Real host figures are published; a busy CI box must not filter the workers out.
      COORDINATOR_CPU_RED_LINE: '1',
      COORDINATOR_MEMORY_RED_LINE: '1',
      BLOCKX_LOG_LEVEL: 'info', // the `coordinator listening` line carries the bound address
      ...env,
    });
    const out = captureOutput(child);
    const line = await waitForLine(child, /"msg":"coordinator listening"/, 30_000);
    const addr = (JSON.parse(line) as { address: string }).address;
    const client = createCoordinatorClient(addr);
    clients.push(client);
    return { child, addr, client, output: () => out.text() };
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
    waitFor(`a reservation for ${taskId}`, async () => {
      const r = await reserve(c, taskId);
      return r.code === grpc.status.OK ? r : undefined;
    });

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
    const prefix = newPrefix();
    const ws = await Promise.all([startWorker(prefix), startWorker(prefix)]);
    const co = await startCoordinator(prefix);

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
    const prefix = newPrefix();
    await startWorker(prefix);
    const co = await startCoordinator(prefix, { COORDINATOR_SLOT_TTL_MS: '500' });

    const r = await reserveOk(co, 'ttl-1');
    // TTL 500 ms; the worker's timer scan runs every 500 ms (timerScanMs).
    await sleep(1_500);
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
    const prefix = newPrefix();
    const before = await startWorker(prefix);
    // A long slot TTL: the old slot would still be valid had the worker not restarted.
    const co = await startCoordinator(prefix, { COORDINATOR_SLOT_TTL_MS: '60000' });
    const r = await reserveOk(co, 'restart-1');
    expect(r.workerAddr).toBe(before.addr);

    await stopGroup(before.child, 'SIGKILL', 1_000);
    const after = await startWorker(prefix, { WORKER_LISTEN: before.addr });
    expect(after.addr).toBe(before.addr);
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
    const prefix = newPrefix();
    const w = await startWorker(prefix, { WORKER_TASK_SLOTS: '1' });
    const co = await startCoordinator(prefix, { COORDINATOR_SLOT_TTL_MS: '1000' });

    expect(await reserveOk(co, 'full-1')).toMatchObject({ workerAddr: w.addr });
    const second = await reserve(co, 'full-2');
    expect(second.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // Either the worker said NoSlot (all candidates rejected) or the coordinator already saw the full
    // pool in the worker's heartbeat (reservedSlots = taskSlots) and contacted nobody: both are the seeds'
    // ResourceExhausted, and which one wins is a race with the 100 ms heartbeat.
    expect(['AllCandidatesRejected', 'NoExecutableSlot']).toContain(second.business);
    // The reservation expires with its TTL and the slot comes back.
    const later = await reserveOk(co, 'full-3');
    expect(later).toMatchObject({ workerAddr: w.addr });
  });

  it('a SIGKILLed worker leaves the registry after its lease and traffic moves to the other worker', async () => {
    const prefix = newPrefix();
    // The victim has more free slots, so it is ranked first while it is registered.
    const [victim, survivor] = await Promise.all([
      startWorker(prefix, { WORKER_TASK_SLOTS: '16' }),
      // Enough slots for the five reservations below even while their tasks are still running.
      startWorker(prefix, { WORKER_TASK_SLOTS: '8' }),
    ]);
    if (victim === undefined || survivor === undefined) throw new Error('workers did not start');
    // Probing reservations that land on the survivor hold its slots for one slot TTL: keep it short so
    // they cannot fill its slots while the victim is still being killed and expired.
    const co = await startCoordinator(prefix, { COORDINATOR_SLOT_TTL_MS: '1000' });
    const first = await waitFor('the victim ranked first', async () => {
      const r = await reserve(co, `kill-${Date.now()}`);
      return r.workerAddr === victim.addr ? r : undefined;
    });
    expect(first.code).toBe(grpc.status.OK);

    const killedAt = Date.now();
    await stopGroup(victim.child, 'SIGKILL', 1_000);
    // No clean shutdown: the key goes only when its lease (2 s) expires.
    await waitFor(
      'the victim key expired',
      async () => ((await raw.get(`${prefix}${victim.addr}`).string()) === null ? true : undefined),
      LEASE_TTL_MS + 5_000,
    );
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
