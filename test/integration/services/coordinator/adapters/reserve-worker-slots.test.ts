// ReserveWorkerSlots over real gRPC (docs/batched-protocol.md § Coordinator: ReserveWorkerSlots): a
// CoordinatorServer with the real WorkerRpcClient serving CoordinatorService and BundleCoordinatorService,
// in front of fake Workers on loopback that grant, refuse, hang or predate RequestTaskSlots.
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createBundleCoordinatorClient,
  createCoordinatorClient,
  unaryCall,
} from '../../../../../src/grpc/clients.js';
import {
  bundleCoordinatorServiceDefinition,
  coordinatorServiceDefinition,
} from '../../../../../src/grpc/proto.js';
import { bindServer, businessCodeOf } from '../../../../../src/grpc/status.js';
import type {
  ReserveWorkerSlotsResponseWireOut,
  WorkerSlotReservationWireOut,
} from '../../../../../src/grpc/wire-types.js';
import { MAX_BATCH_TASKS } from '../../../../../src/kernel/input-bounds.js';
import { BundleCoordinatorServer } from '../../../../../src/services/coordinator/adapters/bundle-coordinator-server.js';
import { CoordinatorServer } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import type { ReservationRecord } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import { WorkerRpcClient } from '../../../../../src/services/coordinator/adapters/worker-rpc-client.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import { BatchFakeWorker } from './batch-fakes.js';
import type { WorkerMode } from './batch-fakes.js';
import { FakeReserver, NOW, hb } from '../../../../unit/services/coordinator/adapters/fakes.js';

// Long enough that a granting fake answers in time on a loaded machine (at 200 ms a busy CI box timed a
// grant out and retried it, and "one RequestTaskSlots each" saw two); only the hanging worker waits it out.
const RPC_TIMEOUT_MS = 1_000;

describe('ReserveWorkerSlots over gRPC', () => {
  const grpcServer = new grpc.Server();
  const rpc = new WorkerRpcClient();
  const core = new CoordinatorCore({ ...DEFAULT_COORDINATOR_CORE_CONFIG, slotTtlMs: 4_000 });
  const records: ReservationRecord[] = [];
  let workers: BatchFakeWorker[] = [];
  let client: ReturnType<typeof createCoordinatorClient>;
  let bundleClient: ReturnType<typeof createBundleCoordinatorClient>;

  beforeAll(async () => {
    const server = new CoordinatorServer({
      core,
      reserver: rpc,
      config: { maxTimeoutRetries: 1, workerRpcTimeoutMs: RPC_TIMEOUT_MS },
      clock: () => NOW,
      observer: { onReservation: (r) => void records.push(r) },
    });
    grpcServer.addService(coordinatorServiceDefinition, server.handlers());
    grpcServer.addService(bundleCoordinatorServiceDefinition, new BundleCoordinatorServer(server).handlers());
    const port = await bindServer(grpcServer, '127.0.0.1:0');
    client = createCoordinatorClient(`127.0.0.1:${port}`);
    bundleClient = createBundleCoordinatorClient(`127.0.0.1:${port}`);
  });

  afterEach(() => {
    for (const w of workers) w.stop();
    workers = [];
    records.length = 0;
  });

  afterAll(() => {
    client?.close();
    bundleClient?.close();
    rpc.close();
    grpcServer.forceShutdown();
  });

  /** Starts one fake Worker per mode (w1, w2, ...), each with `slots` free slots, as the core's view. */
  async function fleet(modes: WorkerMode[], slots = 10): Promise<BatchFakeWorker[]> {
    workers = await Promise.all(modes.map((m, i) => new BatchFakeWorker(`w${i + 1}`, m).start()));
    // The clock is frozen at NOW: an empty list first forgets earlier tests' local reservations.
    core.applyFullWorkerList([], NOW);
    core.applyFullWorkerList(
      workers.map((w) => hb(w.addr, slots)),
      NOW,
    );
    return workers;
  }

  async function reserveMany(taskIds: string[], bundle = false) {
    try {
      const res = await unaryCall<ReserveWorkerSlotsResponseWireOut>(
        (md, o, cb) =>
          bundle
            ? bundleClient.reserveWorkerSlots({ taskIds }, md, o, cb)
            : client.reserveWorkerSlots({ taskIds }, md, o, cb),
        { timeoutMs: 10_000 },
      );
      return { code: grpc.status.OK, reservations: res.reservations };
    } catch (err) {
      const e = err as grpc.ServiceError;
      return { code: e.code, business: businessCodeOf(e), details: e.details, reservations: [] };
    }
  }

  const ids = (n: number, prefix = 't') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const byWorker = (rs: WorkerSlotReservationWireOut[], ws: BatchFakeWorker[]) =>
    Object.fromEntries(ws.map((w) => [w.name, rs.filter((r) => r.workerAddr === w.addr).length]));

  it.each([false, true])(
    'spreads a batch over three workers, one RequestTaskSlots each (bundle: %s)',
    async (bundle) => {
      const ws = await fleet(['grant', 'grant', 'grant']);
      const taskIds = ids(30);
      const { code, reservations } = await reserveMany(taskIds, bundle);
      expect(code).toBe(grpc.status.OK);
      expect(reservations.map((r) => r.taskId)).toEqual(taskIds); // request order
      expect(byWorker(reservations, ws)).toEqual({ w1: 10, w2: 10, w3: 10 });
      for (const r of reservations) {
        const w = ws.find((x) => x.addr === r.workerAddr)!;
        expect(r).toEqual({
          taskId: r.taskId,
          workerAddr: w.addr,
          slotId: `${w.name}-${r.taskId}`,
          error: null,
        });
      }
      for (const w of ws) {
        expect(w.batchCalls).toHaveLength(1);
        expect(w.batchCalls[0]!.ttlMs).toBe(4_000);
        expect(w.unaryCalls).toEqual([]);
      }
      // One observer record per task; every claim settled.
      expect(records.map((r) => r.taskId).sort()).toEqual([...taskIds].sort());
      for (const w of ws) expect(core.getWorker(w.addr)?.pendingClaims).toBe(0);
    },
  );

  it('a worker refusing every id (pool full): its ids move to the others, nothing counted against it', async () => {
    const ws = await fleet(['noSlot', 'grant', 'grant']);
    const { reservations } = await reserveMany(ids(12));
    expect(reservations.every((r) => r.error === null)).toBe(true);
    expect(byWorker(reservations, ws)).toEqual({ w1: 0, w2: 6, w3: 6 });
    expect(ws[0]!.batchedIds).toHaveLength(4);
    expect(core.getWorker(ws[0]!.addr)?.recentFailureCount).toBe(0);
  });

  it('a whole-call refusal is a refusal of each of its ids', async () => {
    const ws = await fleet(['wholeNoSlot', 'grant']);
    const { reservations } = await reserveMany(ids(4));
    expect(byWorker(reservations, ws)).toEqual({ w1: 0, w2: 4 });
  });

  it('a hanging worker: SlotUncertain for its ids only, retried there with the same ids, counted once', async () => {
    const ws = await fleet(['hang', 'grant', 'grant']);
    const taskIds = ids(6);
    const { code, reservations } = await reserveMany(taskIds);
    expect(code).toBe(grpc.status.OK);
    const hung = ws[0]!.batchCalls;
    expect(hung).toHaveLength(2);
    expect(hung[1]!.taskIds).toEqual(hung[0]!.taskIds);
    for (const r of reservations) {
      if (hung[0]!.taskIds.includes(r.taskId)) {
        expect(r).toEqual({
          taskId: r.taskId,
          workerAddr: '',
          slotId: '',
          error: {
            code: 'SlotUncertain',
            status: grpc.status.ABORTED,
            message: 'unable to confirm slot reservation',
          },
        });
      } else {
        expect(r.error).toBeNull();
        expect(r.workerAddr).not.toBe(ws[0]!.addr);
      }
    }
    expect(core.getWorker(ws[0]!.addr)?.recentFailureCount).toBe(1);
  });

  it('an older worker (UNIMPLEMENTED): its ids go out as RequestTaskSlot, one per id', async () => {
    const ws = await fleet(['legacy', 'grant']);
    const { reservations } = await reserveMany(ids(8));
    expect(reservations.every((r) => r.error === null)).toBe(true);
    expect(byWorker(reservations, ws)).toEqual({ w1: 4, w2: 4 });
    expect(ws[0]!.batchCalls).toHaveLength(1);
    expect(ws[0]!.unaryCalls.sort()).toEqual(
      reservations
        .filter((r) => r.workerAddr === ws[0]!.addr)
        .map((r) => r.taskId)
        .sort(),
    );
  });

  it('repeated ids are reserved once and answered alike', async () => {
    const ws = await fleet(['grant']);
    const { reservations } = await reserveMany(['a', 'b', 'a']);
    expect(reservations[2]).toEqual(reservations[0]);
    expect(ws[0]!.batchedIds.sort()).toEqual(['a', 'b']);
  });

  it('maps each refused id like ReserveWorkerSlot: a bad id is InvalidArgument (echoed cut), the rest reserved', async () => {
    const ws = await fleet(['grant']);
    const long = 'x'.repeat(1_000);
    const { reservations } = await reserveMany(['ok', '', long]);
    expect(reservations[0]).toMatchObject({ taskId: 'ok', workerAddr: ws[0]!.addr, error: null });
    expect(reservations[1]).toEqual({
      taskId: '',
      workerAddr: '',
      slotId: '',
      error: {
        code: 'InvalidArgument',
        status: grpc.status.INVALID_ARGUMENT,
        message: 'taskId must not be empty',
      },
    });
    expect(reservations[2]!.taskId).toBe(`${'x'.repeat(256)}…`);
    expect(reservations[2]!.error).toEqual({
      code: 'InvalidArgument',
      status: grpc.status.INVALID_ARGUMENT,
      message: 'taskId must be at most 256 bytes (UTF-8)',
    });
  });

  it.each([false, true])('refuses an empty or over-long batch as a whole (bundle: %s)', async (bundle) => {
    const ws = await fleet(['grant']);
    expect(await reserveMany([], bundle)).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      business: 'InvalidArgument',
      details: 'taskIds must not be empty',
    });
    expect(await reserveMany(ids(MAX_BATCH_TASKS + 1), bundle)).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      business: 'InvalidArgument',
      details: `taskIds must name at most ${MAX_BATCH_TASKS} ids, got ${MAX_BATCH_TASKS + 1}`,
    });
    expect(ws[0]!.batchCalls).toEqual([]);
  });

  it('accepts exactly MAX_BATCH_TASKS ids', async () => {
    // A fleet with no free slot: the call is accepted and every id gets its own answer, without 10,000
    // grants racing this suite's short worker deadline on a loaded machine.
    const ws = await fleet(['grant', 'grant'], 0);
    const { code, reservations } = await reserveMany(ids(MAX_BATCH_TASKS));
    expect(code).toBe(grpc.status.OK);
    expect(reservations).toHaveLength(MAX_BATCH_TASKS);
    expect(reservations.every((r) => r.error?.code === 'NoExecutableSlot')).toBe(true);
    expect(ws.every((w) => w.batchCalls.length === 0)).toBe(true);
  });

  it('not ready: every id Unavailable, no worker contacted', async () => {
    const ws = await fleet(['grant']);
    core.markWatchDisconnected(NOW - DEFAULT_COORDINATOR_CORE_CONFIG.watchGracePeriodMs - 1);
    try {
      const { reservations } = await reserveMany(['a', 'b']);
      expect(reservations.map((r) => [r.taskId, r.error?.code, r.error?.status])).toEqual([
        ['a', 'Unavailable', grpc.status.UNAVAILABLE],
        ['b', 'Unavailable', grpc.status.UNAVAILABLE],
      ]);
      expect(ws[0]!.batchCalls).toEqual([]);
    } finally {
      core.markWatchReconnected(NOW);
    }
  });
});

describe('CoordinatorServer.reserveWorkerSlots with a SlotReserver without requestTaskSlots', () => {
  it('sends one RequestTaskSlot per id and answers in request order', async () => {
    const core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
    core.applyFullWorkerList([hb('w1', 3), hb('w2', 3)], NOW);
    const reserver = new FakeReserver({ w1: ['noSlot'] });
    const server = new CoordinatorServer({ core, reserver, clock: () => NOW });
    const results = await server.reserveWorkerSlots(['a', 'b', 'c']);
    // Claims by free capacity: a → w1, b → w2, c → w1; w1 refuses a (its first call), a moves to w2.
    expect(results.map((r) => (r.ok ? [r.taskId, r.workerAddr] : r.error.code))).toEqual([
      ['a', 'w2'],
      ['b', 'w2'],
      ['c', 'w1'],
    ]);
    expect(reserver.calls.map((c) => [c.workerAddr, c.taskId])).toEqual([
      ['w1', 'a'],
      ['w1', 'c'],
      ['w2', 'b'],
      ['w2', 'a'],
    ]);
  });

  it('a reserver that throws: its ids are Internal, the others answered, every claim settled', async () => {
    const core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
    core.applyFullWorkerList([hb('w1', 1), hb('w2', 1)], NOW);
    const fake = new FakeReserver();
    const reserver = {
      requestTaskSlot: fake.requestTaskSlot.bind(fake),
      requestTaskSlots: async (addr: string, req: { taskIds: readonly string[]; ttlMs: number }) => {
        if (addr === 'w1') throw new Error('boom');
        return Promise.all(
          req.taskIds.map((taskId) =>
            fake.requestTaskSlot(addr, { taskId, ttlMs: req.ttlMs }, { timeoutMs: 1 }),
          ),
        );
      },
    };
    const server = new CoordinatorServer({ core, reserver, clock: () => NOW });
    const results = await server.reserveWorkerSlots(['a', 'b']);
    expect(results.map((r) => (r.ok ? r.workerAddr : r.error.code))).toEqual(['Internal', 'w2']);
    expect(core.getWorker('w1')).toMatchObject({ pendingClaims: 0, localReservedAtMs: [NOW] });
    expect(core.getWorker('w2')?.pendingClaims).toBe(0);
  });

  it('a batch out of bounds throws InvalidArgument', async () => {
    const core = new CoordinatorCore(DEFAULT_COORDINATOR_CORE_CONFIG);
    const server = new CoordinatorServer({ core, reserver: new FakeReserver(), clock: () => NOW });
    await expect(server.reserveWorkerSlots([])).rejects.toMatchObject({ code: 'InvalidArgument' });
  });
});
