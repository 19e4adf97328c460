// The client's batched path (src/client/batch/, docs/batched-protocol.md § Client) against scripted
// servers over real gRPC: credits, per-task refusals and their retries, streams that break, Workers that
// are gone, older servers (UNIMPLEMENTED) and coalescing of concurrent run() calls.
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../../src/client/client.js';
import { BlockxClientError, ClientErrorCode } from '../../../src/client/errors.js';
import { STREAM_FAILURE_LIMIT } from '../../../src/client/batch/worker-stream.js';
import { coordinatorServiceDefinition, workerServiceDefinition } from '../../../src/grpc/proto.js';
import { BatchFakeCoordinator, BatchFakeWorker } from './batch-fakes.js';
import {
  FakeCoordinator,
  FakeWorker,
  INVALID_SLOT,
  NO_CAPACITY,
  NO_SLOT,
  failed,
  serve,
  type Fault,
} from './fake-servers.js';

const INVALID_ARG: Fault = {
  status: grpc.status.INVALID_ARGUMENT,
  business: 'InvalidArgument',
  message: 'bad config',
};

const task = (taskId: string) => ({
  taskId,
  functionCallConfig: { type: 'CallListCallConfig', config: { function: 'f', callList: [] } },
});
const ids = (n: number, prefix = 't') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

const stops: (() => Promise<void>)[] = [];
const clients: BlockxClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of stops.splice(0)) await s();
});

async function batchWorker(setup?: (w: BatchFakeWorker) => void): Promise<BatchFakeWorker> {
  const worker = new BatchFakeWorker();
  setup?.(worker);
  const unary = new FakeWorker();
  const s = await serve((srv) =>
    srv.addService(workerServiceDefinition, { ...unary.handlers(), ...worker.handlers() }),
  );
  worker.address = s.address;
  stops.push(s.stop);
  return worker;
}

function client(opts: ConstructorParameters<typeof BlockxClient>[0]): BlockxClient {
  const c = new BlockxClient({ backoff: { initialMs: 1, maxMs: 5 }, slotTtlMs: 5, ...opts });
  clients.push(c);
  return c;
}

describe('batched path straight to one Worker', () => {
  it('runs many tasks on one stream and never has more in flight than the Worker granted', async () => {
    const w = await batchWorker((w) => (w.credits = 16));
    const c = client({ worker: w.address });
    const out = await c.runMany(ids(500).map(task));
    expect(out.every((o) => o.ok && o.result.success)).toBe(true);
    expect(out.map((o) => (o.ok ? o.result.taskId : ''))).toEqual(ids(500));
    expect(w.streams).toBe(1);
    expect(w.overCredit).toBe(0);
    expect(w.maxInFlight).toBeLessThanOrEqual(16);
    expect(w.maxInFlight).toBeGreaterThan(1);
  });

  it('answers each refusal for its own task: InvalidArgument is final, NoSlot is tried again', async () => {
    const w = await batchWorker((w) => {
      w.admissionScript.set('t3', [INVALID_ARG]);
      w.admissionScript.set('t5', [NO_SLOT, NO_SLOT]);
      w.endings.set('t7', failed('CALL_FAILED', 'boom'));
    });
    const c = client({ worker: w.address });
    const out = await c.runMany(ids(10).map(task));
    const byId = new Map(out.map((o) => [o.ok ? o.result.taskId : o.taskId, o]));
    const bad = byId.get('t3');
    expect(bad?.ok).toBe(false);
    expect(bad?.ok === false && bad.error.code).toBe(ClientErrorCode.INVALID_ARGUMENT);
    expect(w.received.filter((r) => r.taskId === 't3')).toHaveLength(1);
    const retried = byId.get('t5');
    expect(retried?.ok === true && retried.result.success).toBe(true);
    expect(w.received.filter((r) => r.taskId === 't5')).toHaveLength(3);
    const failedTask = byId.get('t7');
    expect(failedTask?.ok === true && failedTask.result.failureCode).toBe('CALL_FAILED');
    for (const id of ['t0', 't1', 't2', 't4', 't6', 't8', 't9']) {
      expect(byId.get(id)?.ok === true).toBe(true);
    }
  });

  it('sends the unfinished tasks again with the same ids when the stream breaks', async () => {
    const w = await batchWorker((w) => {
      w.credits = 4;
      w.terminalAfterMs = 50;
      w.breakAfter = [{ admitted: 2, status: grpc.status.UNAVAILABLE }];
    });
    const c = client({ worker: w.address });
    const out = await c.runMany(ids(6).map(task));
    expect(out.every((o) => o.ok && o.result.success)).toBe(true);
    expect(w.streams).toBeGreaterThanOrEqual(2);
    const firstStream = w.received.filter((r) => r.stream === 1).map((r) => r.taskId);
    const later = new Set(w.received.filter((r) => r.stream > 1).map((r) => r.taskId));
    // Every task admitted on the broken stream was sent again on a later one (the Worker is idempotent).
    for (const id of firstStream) expect(later.has(id)).toBe(true);
  });

  it('a task the restarted Worker no longer knows is lost (NOT_FOUND after acceptance), not re-run', async () => {
    const w = await batchWorker((w) => {
      w.terminalAfterMs = 10_000;
      w.breakAfter = [{ admitted: 3, status: grpc.status.UNAVAILABLE }];
      w.forgetOnBreak = true;
    });
    const c = client({ worker: w.address });
    const out = await c.runMany(ids(3).map(task));
    for (const o of out) {
      expect(o.ok).toBe(false);
      if (!o.ok) expect(o.error).toMatchObject({ code: ClientErrorCode.NOT_FOUND, rpc: 'WatchTasks' });
    }
    // Each was sent once more (the resend), refused, and not sent a third time.
    for (const id of ids(3)) expect(w.received.filter((r) => r.taskId === id)).toHaveLength(2);
  });

  it('gives up on a Worker whose streams fail in a row: UNAVAILABLE for each task', async () => {
    const w = await batchWorker((w) => (w.failEveryStream = grpc.status.UNAVAILABLE));
    const c = client({ worker: w.address, maxReserveAttempts: 2 });
    const out = await c.runMany(ids(3).map(task));
    for (const o of out) {
      expect(o.ok).toBe(false);
      if (!o.ok) expect(o.error.code).toBe(ClientErrorCode.UNAVAILABLE);
    }
    expect(w.streams).toBeGreaterThanOrEqual(STREAM_FAILURE_LIMIT);
  });

  it('cancels a task that waits, without cancelling the others', async () => {
    const w = await batchWorker((w) => (w.terminalAfterMs = 30));
    const c = client({ worker: w.address });
    const ac = new AbortController();
    const a = c.batched.run(task('a'), { signal: ac.signal });
    const b = c.batched.run(task('b'));
    ac.abort();
    await expect(a).rejects.toMatchObject({ code: ClientErrorCode.CANCELLED });
    await expect(b).resolves.toMatchObject({ success: true, taskId: 'b' });
  });

  it('falls back to the unary RPCs on a Worker without RunTasks', async () => {
    const unary = new FakeWorker();
    const s = await serve((srv) => srv.addService(workerServiceDefinition, unary.handlers()));
    stops.push(s.stop);
    unary.address = s.address;
    const c = client({ worker: s.address });
    const out = await c.runMany(ids(5).map(task));
    expect(out.every((o) => o.ok && o.result.success)).toBe(true);
    expect(unary.submitCalls.map((x) => x.task.taskId).sort()).toEqual(ids(5));
  });
});

describe('batched path through a Coordinator', () => {
  async function cluster(workers = 2) {
    const ws = await Promise.all(Array.from({ length: workers }, () => batchWorker()));
    const coordinator = new BatchFakeCoordinator();
    coordinator.workers = ws.map((w) => w.address);
    const s = await serve((srv) => srv.addService(coordinatorServiceDefinition, coordinator.handlers()));
    stops.push(s.stop);
    return { ws, coordinator, address: s.address };
  }

  it('reserves in bulk and sends each task to the Worker its slot is on, with that slot', async () => {
    const { ws, coordinator, address } = await cluster(2);
    const c = client({ coordinator: address });
    const out = await c.runMany(ids(300).map(task));
    expect(out.every((o) => o.ok && o.result.success)).toBe(true);
    // Reserved once and submitted once: one attempt each, as submit --json reports it (issue 33).
    expect(new Set(out.map((o) => (o.ok ? o.result.attempts : 0)))).toEqual(new Set([1]));
    // Far fewer calls than tasks: ids of one turn share a call.
    expect(coordinator.calls.length).toBeLessThan(30);
    expect(coordinator.calls.flat().sort()).toEqual(ids(300).sort());
    for (const w of ws) {
      expect(w.received.length).toBeGreaterThan(0);
      expect(w.received.every((r) => r.slotId.startsWith('s'))).toBe(true);
      expect(w.overCredit).toBe(0);
    }
  });

  it('retries a task whose reservation had no capacity, and reserves again after InvalidSlot', async () => {
    const { ws, coordinator, address } = await cluster(1);
    coordinator.script.set('t1', [NO_CAPACITY]);
    ws[0]?.admissionScript.set('t2', [INVALID_SLOT]);
    const c = client({ coordinator: address });
    const out = await c.runMany(ids(4).map(task));
    expect(out.every((o) => o.ok && o.result.success)).toBe(true);
    expect(coordinator.calls.flat().filter((id) => id === 't1')).toHaveLength(2);
    expect(coordinator.calls.flat().filter((id) => id === 't2')).toHaveLength(2);
    // t2 was placed twice (a slot refused, then the one that ran); the others once: "no capacity" while
    // our own tasks hold the cluster is waiting, not an attempt.
    expect(out.map((o) => (o.ok ? [o.result.taskId, o.result.attempts] : []))).toEqual([
      ['t0', 1],
      ['t1', 1],
      ['t2', 2],
      ['t3', 1],
    ]);
    const slots = ws[0]?.received.filter((r) => r.taskId === 't2').map((r) => r.slotId) ?? [];
    expect(slots).toHaveLength(2);
    expect(slots[0]).not.toBe(slots[1]);
  });

  it('asks for about as many slots as the cluster has: the window follows "no capacity"', async () => {
    const { ws, coordinator, address } = await cluster(1);
    const w = ws[0] as BatchFakeWorker;
    w.credits = 64;
    w.terminalAfterMs = 5;
    coordinator.capacity = { limit: 16, finished: () => w.finished.size };
    const c = client({ coordinator: address, maxReserveAttempts: 3 });
    const out = await c.runMany(ids(400).map(task), { concurrency: 400 });
    expect(out.every((o) => o.ok && o.result.success)).toBe(true);
    // Waiting for our own tasks is not an attempt: none ran out of its 3 attempts.
    expect(Math.max(...out.map((o) => (o.ok ? o.result.attempts : 99)))).toBeLessThanOrEqual(3);
    // Without the window every one of the 400 would ask again after each refusal: thousands of asks.
    const asks = coordinator.calls.flat().length;
    expect(asks).toBeLessThan(400 * 3);
    expect(coordinator.refusedForCapacity).toBeLessThan(800);
  });

  it('coalesces concurrent run() calls onto one bulk call and one stream per Worker', async () => {
    const { ws, coordinator, address } = await cluster(1);
    const c = client({ coordinator: address });
    const results = await Promise.all(ids(64).map((id) => c.run(task(id))));
    expect(results.every((r) => r.success)).toBe(true);
    // The first run() was alone and took the unary RPCs; the other 63 shared bulk calls and one stream.
    expect(coordinator.unaryCalls).toEqual(['t0']);
    expect(coordinator.calls.flat().sort()).toEqual(ids(64).slice(1).sort());
    expect(ws[0]?.streams).toBe(1);
    expect(coordinator.calls.length).toBeLessThan(8);
  });

  it('falls back to unary ReserveWorkerSlot on a Coordinator without the bulk RPC', async () => {
    const w = await batchWorker();
    const unaryCoordinator = new FakeCoordinator();
    unaryCoordinator.workerAddr = w.address;
    const s = await serve((srv) => srv.addService(coordinatorServiceDefinition, unaryCoordinator.handlers()));
    stops.push(s.stop);
    const c = client({ coordinator: s.address });
    const out = await c.runMany(ids(5).map(task));
    expect(out.every((o) => o.ok && o.result.success)).toBe(true);
    expect(unaryCoordinator.reserveCalls.sort()).toEqual(ids(5));
    expect(w.received.map((r) => r.taskId).sort()).toEqual(ids(5));
  });

  describe('slot reuse (reuseSlots)', () => {
    /** Task ids sent without a slot id: placed on a reused Worker, not through the Coordinator. */
    const reusedIds = (w: BatchFakeWorker | undefined): string[] =>
      (w?.received ?? []).filter((r) => r.slotId === '').map((r) => r.taskId);

    it('a task that SUCCEEDED hands its Worker to the next one; a chain is at most reuseSlots long', async () => {
      const { ws, coordinator, address } = await cluster(2);
      const c = client({ coordinator: address, reuseSlots: 3 });
      const out = await c.runMany(ids(120).map(task), { concurrency: 6 });
      expect(out.every((o) => o.ok && o.result.success)).toBe(true);
      const reserved = coordinator.calls.flat();
      const reused = ws.flatMap(reusedIds);
      // Every task went one way or the other, once: reserved through the Coordinator or sent on a reuse.
      expect([...reserved, ...reused].sort()).toEqual(ids(120).sort());
      expect(reused.length).toBeGreaterThan(0);
      // At most 3 reuses follow each reservation.
      expect(reused.length).toBeLessThanOrEqual(3 * reserved.length);
      // Each task was received once: a reused send is not a second run.
      for (const w of ws) expect(new Set(w.received.map((r) => r.taskId)).size).toBe(w.received.length);
    });

    it('a refused reuse is placed through the Coordinator at once, without costing an attempt', async () => {
      const { ws, coordinator, address } = await cluster(1);
      const w = ws[0] as BatchFakeWorker;
      // t1 follows t0 on its Worker; its inline admission finds no slot.
      w.admissionScript.set('t1', [NO_SLOT]);
      const c = client({ coordinator: address, reuseSlots: 8, maxReserveAttempts: 1 });
      const out = await c.runMany(ids(3).map(task), { concurrency: 1 });
      expect(out.every((o) => o.ok && o.result.success)).toBe(true);
      expect(w.received.filter((r) => r.taskId === 't1').map((r) => r.slotId === '')).toEqual([true, false]);
      expect(coordinator.calls.flat()).toEqual(['t0', 't1']);
      // t1 succeeded after its reservation: t2 reuses the Worker again.
      expect(reusedIds(w)).toEqual(['t1', 't2']);
    });

    it('a task that FAILED does not hand its Worker on; without reuseSlots every task reserves', async () => {
      const { ws, coordinator, address } = await cluster(1);
      ws[0]?.endings.set('t0', failed('CALL_FAILED', 'boom'));
      const c = client({ coordinator: address, reuseSlots: 8 });
      await c.runMany(ids(2).map(task), { concurrency: 1 });
      expect(coordinator.calls.flat()).toEqual(['t0', 't1']);

      const off = client({ coordinator: address });
      const out = await off.runMany(ids(20, 'u').map(task), { concurrency: 2 });
      expect(out.every((o) => o.ok)).toBe(true);
      expect(reusedIds(ws[0])).toEqual([]);
    });

    it('reuseSlots must be a non-negative integer', () => {
      expect(() => client({ coordinator: '127.0.0.1:1', reuseSlots: -1 })).toThrow(/reuseSlots/);
      expect(() => client({ coordinator: '127.0.0.1:1', reuseSlots: 1.5 })).toThrow(/reuseSlots/);
    });
  });

  it('errors carry the business code and the RPC of the per-task refusal', async () => {
    const { coordinator, address } = await cluster(1);
    coordinator.script.set('t0', [INVALID_ARG]);
    const c = client({ coordinator: address });
    const err = await c.batched.run(task('t0')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlockxClientError);
    expect(err).toMatchObject({
      code: ClientErrorCode.INVALID_ARGUMENT,
      businessCode: 'InvalidArgument',
      rpc: 'ReserveWorkerSlots',
      taskId: 't0',
    });
  });
});
