// WorkerRpcClient against a real grpc-js WorkerService on loopback: replies, classified failures
// (connection refused is a transport failure, a hang past the deadline is uncertain), and one channel
// per worker address.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerRpcClient } from '../../../../../src/services/coordinator/adapters/worker-rpc-client.js';
import { workerServiceDefinition } from '../../../../../src/grpc/proto.js';
import type { WorkerServiceHandlers } from '../../../../../src/grpc/proto.js';
import { bindServer, grpcStatusError } from '../../../../../src/grpc/status.js';
import { freePort } from '../../../../support/ports.js';
import { UNIMPLEMENTED_WORKER_BATCH } from '../../../../support/unimplemented.js';

const notUsed = (_call: unknown, cb?: unknown): void => {
  if (typeof cb === 'function')
    (cb as grpc.sendUnaryData<never>)(grpcStatusError(grpc.status.UNIMPLEMENTED, 'n/a'));
};

describe('WorkerRpcClient', () => {
  let server: grpc.Server;
  let addr: string;
  const seen: { taskId: string; ttlMs: number }[] = [];
  const client = new WorkerRpcClient();

  beforeAll(async () => {
    server = new grpc.Server();
    const handlers: WorkerServiceHandlers = {
      ...UNIMPLEMENTED_WORKER_BATCH,
      RequestTaskSlot: (call, cb) => {
        const { taskId, ttlMs } = call.request;
        seen.push({ taskId, ttlMs });
        if (taskId === 'hang') return; // never answers
        if (taskId === 'full')
          return cb(grpcStatusError(grpc.status.RESOURCE_EXHAUSTED, 'no free slot', 'NoSlot'));
        if (taskId === 'draining')
          return cb(grpcStatusError(grpc.status.UNAVAILABLE, 'draining', 'Unavailable'));
        if (taskId === 'empty') return cb(null, { taskId, slotId: '', state: 'TASK_STATE_ALLOCATED' });
        cb(null, { taskId, slotId: `slot-${taskId}`, state: 'TASK_STATE_ALLOCATED' });
      },
      SubmitTask: notUsed,
      GetTaskResult: notUsed,
      WatchTasks: (call) => call.end(),
    };
    server.addService(workerServiceDefinition, handlers);
    addr = `127.0.0.1:${await bindServer(server, '127.0.0.1:0')}`;
  });

  afterAll(async () => {
    client.close();
    server?.forceShutdown();
  });

  it('returns the grant and sends task_id and ttl_ms', async () => {
    const r = await client.requestTaskSlot(addr, { taskId: 'a', ttlMs: 5_000 }, { timeoutMs: 2_000 });
    expect(r).toEqual({ ok: true, grant: { taskId: 'a', slotId: 'slot-a', state: 'TASK_STATE_ALLOCATED' } });
    expect(seen.at(-1)).toEqual({ taskId: 'a', ttlMs: 5_000 });
  });

  it('passes an empty slot id through (the orchestration treats it as uncertain)', async () => {
    const r = await client.requestTaskSlot(addr, { taskId: 'empty', ttlMs: 1 }, { timeoutMs: 2_000 });
    expect(r.ok && r.grant.slotId).toBe('');
  });

  it('classifies a full pool as NoSlot, rejected', async () => {
    const r = await client.requestTaskSlot(addr, { taskId: 'full', ttlMs: 1 }, { timeoutMs: 2_000 });
    expect(!r.ok && [r.error.code, r.error.kind]).toEqual(['NoSlot', 'rejected']);
  });

  it('classifies a worker that answers Unavailable as an explicit rejection', async () => {
    const r = await client.requestTaskSlot(addr, { taskId: 'draining', ttlMs: 1 }, { timeoutMs: 2_000 });
    expect(!r.ok && [r.error.code, r.error.kind]).toEqual(['Unavailable', 'rejected']);
  });

  it('classifies a hang past the deadline as uncertain (may have allocated)', async () => {
    const r = await client.requestTaskSlot(addr, { taskId: 'hang', ttlMs: 1 }, { timeoutMs: 150 });
    expect(!r.ok && [r.error.code, r.error.mayHaveAllocated]).toEqual(['SlotUncertain', true]);
    expect(!r.ok && r.error.grpcCode).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  it('classifies a cancel by the caller as uncertain', async () => {
    const abort = new AbortController();
    const pending = client.requestTaskSlot(
      addr,
      { taskId: 'hang', ttlMs: 1 },
      { timeoutMs: 5_000, signal: abort.signal },
    );
    setTimeout(() => abort.abort(), 50);
    const r = await pending;
    expect(!r.ok && [r.error.grpcCode, r.error.mayHaveAllocated]).toEqual([grpc.status.CANCELLED, true]);
  });

  it('classifies connection refused as a transport failure (nothing allocated)', async () => {
    const closed = `127.0.0.1:${await freePort()}`;
    const r = await client.requestTaskSlot(closed, { taskId: 'x', ttlMs: 1 }, { timeoutMs: 2_000 });
    expect(!r.ok && [r.error.code, r.error.kind, r.error.mayHaveAllocated]).toEqual([
      'Unavailable',
      'transport',
      false,
    ]);
    client.forget(closed);
  });

  it('keeps one channel per worker address and closes it on forget', async () => {
    const own = new WorkerRpcClient();
    try {
      await own.requestTaskSlot(addr, { taskId: 'c1', ttlMs: 1 }, { timeoutMs: 2_000 });
      await own.requestTaskSlot(addr, { taskId: 'c2', ttlMs: 1 }, { timeoutMs: 2_000 });
      expect(own.channelCount).toBe(1);
      own.forget(addr);
      expect(own.channelCount).toBe(0);
      const again = await own.requestTaskSlot(addr, { taskId: 'c3', ttlMs: 1 }, { timeoutMs: 2_000 });
      expect(again.ok).toBe(true);
      expect(own.channelCount).toBe(1);
    } finally {
      own.close();
    }
    const r = await own.requestTaskSlot(addr, { taskId: 'after-close', ttlMs: 1 }, { timeoutMs: 2_000 });
    expect(!r.ok && [r.error.kind, r.error.mayHaveAllocated]).toEqual(['transport', false]);
  });
});
