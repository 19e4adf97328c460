// BlockxClient against real grpc-js servers on loopback that play scripted Coordinator and Worker parts.
// Waits are injected (recorded, never slept), so retries cost no wall time.
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../../src/client/client.js';
import { BlockxClientError, ClientErrorCode } from '../../../src/client/errors.js';
import { watchTaskUpdates } from '../../../src/client/watch.js';
import { createWorkerClient } from '../../../src/grpc/clients.js';
import type { TaskUpdate } from '../../../src/grpc/domain-types.js';
import {
  ABORTED,
  INVALID_SLOT,
  NO_CAPACITY,
  NO_SLOT,
  UNAVAILABLE,
  failed,
  startFakeCluster,
} from './fake-servers.js';

const TASK = {
  functionCallConfig: {
    type: 'CallListCallConfig',
    config: { function: 'hello_world', callList: [['ct2']] },
  },
  resultHandler: { type: 'ReturnValueResultHandler', config: {} },
};

describe('BlockxClient against fake servers', () => {
  let cluster: Awaited<ReturnType<typeof startFakeCluster>>;
  const clients: BlockxClient[] = [];
  let sleeps: number[] = [];

  const newClient = (mode: 'coordinator' | 'worker' = 'coordinator', extra = {}) => {
    const c = new BlockxClient({
      ...(mode === 'coordinator' ? { coordinator: cluster.coordinatorAddr } : { worker: cluster.workerAddr }),
      slotTtlMs: 5_000,
      sleep: async (ms) => void sleeps.push(ms),
      random: () => 0,
      ...extra,
    });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    cluster = await startFakeCluster();
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
    sleeps = [];
    cluster.coordinator.script = [];
    cluster.worker.submitScript = [];
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('run: Unavailable, then Aborted (one slot TTL), then a slot; submit; watch to SUCCEEDED', async () => {
    cluster.coordinator.script = [UNAVAILABLE, ABORTED];
    const reservesBefore = cluster.coordinator.reserveCalls.length;
    const result = await newClient().run(TASK);

    const reserves = cluster.coordinator.reserveCalls.slice(reservesBefore);
    expect(reserves).toHaveLength(3);
    expect(new Set(reserves)).toEqual(new Set([result.taskId])); // the SAME task id every time
    expect(result.taskId).toMatch(/^[0-9a-f-]{36}$/); // generated: crypto.randomUUID()
    expect(sleeps).toEqual([5_000]); // Unavailable retried at once, Aborted after one slot TTL
    const submit = cluster.worker.submitCalls.find((c) => c.task.taskId === result.taskId);
    expect(submit?.slotId).toMatch(/^slot-\d+$/);
    expect(JSON.parse(submit!.task.functionCallConfig!.config.toString())).toEqual(
      TASK.functionCallConfig.config,
    );
    expect(result).toMatchObject({
      state: 'SUCCEEDED',
      success: true,
      failureCode: '',
      workerAddr: cluster.workerAddr,
      attempts: 4,
      pluginResults: [{ pluginName: 'ReturnValueResultHandler', success: true, result: ['hello ct2'] }],
    });
    expect(result.update.isTerminal).toBe(true);
  });

  it('run: a task that ends FAILED resolves with success=false, its failure code and retryable', async () => {
    cluster.worker.endings.set('fail-1', failed('CALL_FAILED', 'function nope not found'));
    const result = await newClient().run({ ...TASK, taskId: 'fail-1' });
    expect(result).toMatchObject({
      taskId: 'fail-1',
      state: 'FAILED',
      success: false,
      failureCode: 'CALL_FAILED',
      failureMessage: 'function nope not found',
      retryable: false,
    });
  });

  it('run: keeps the given task id and re-reserves when the slot was refused (InvalidSlot)', async () => {
    cluster.worker.submitScript = [INVALID_SLOT];
    const before = cluster.coordinator.reserveCalls.length;
    const result = await newClient().run({ ...TASK, taskId: 'mine-1' });
    expect(result.taskId).toBe('mine-1');
    expect(cluster.coordinator.reserveCalls.slice(before)).toEqual(['mine-1', 'mine-1']);
    const slots = cluster.worker.submitCalls.filter((c) => c.task.taskId === 'mine-1').map((c) => c.slotId);
    expect(slots).toHaveLength(2);
    expect(slots[0]).not.toBe(slots[1]);
  });

  it('run: gives up with NO_CAPACITY (and the business code) once attempts run out', async () => {
    cluster.coordinator.script = [NO_CAPACITY, NO_CAPACITY, NO_CAPACITY];
    const e = await newClient('coordinator', { maxReserveAttempts: 3 })
      .run(TASK)
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BlockxClientError);
    expect(e).toMatchObject({
      code: ClientErrorCode.NO_CAPACITY,
      grpcStatus: grpc.status.RESOURCE_EXHAUSTED,
      businessCode: 'NoExecutableSlot',
      attempts: 3,
      rpc: 'ReserveWorkerSlot',
      address: cluster.coordinatorAddr,
    });
    expect(sleeps).toEqual([25, 50]);
  });

  it('direct-to-worker mode: SubmitTask without a slot id, NoSlot backed off', async () => {
    cluster.worker.submitScript = [NO_SLOT];
    const before = cluster.coordinator.reserveCalls.length;
    const result = await newClient('worker').run({ ...TASK, taskId: 'direct-1' });
    expect(result.state).toBe('SUCCEEDED');
    expect(cluster.coordinator.reserveCalls.length).toBe(before);
    const calls = cluster.worker.submitCalls.filter((c) => c.task.taskId === 'direct-1');
    expect(calls.map((c) => c.slotId)).toEqual(['', '']);
    expect(sleeps).toEqual([25]);
  });

  it('submit + watch + getResult as separate steps', async () => {
    const client = newClient();
    const sub = await client.submit({ ...TASK, taskId: 'steps-1' });
    expect(sub).toMatchObject({ taskId: 'steps-1', workerAddr: cluster.workerAddr, state: 'RUNNING' });
    const updates: TaskUpdate[] = [];
    for await (const u of client.watch(['steps-1', 'unknown-1'], { workerAddr: sub.workerAddr }))
      updates.push(u);
    expect(updates.map((u) => `${u.taskId} ${u.state} ${u.isTerminal} ${u.error}`)).toEqual([
      'steps-1 RUNNING false ',
      'unknown-1 UNSPECIFIED true not_found',
      'steps-1 SUCCEEDED true ',
    ]);
    const status = await client.getResult('steps-1', { workerAddr: sub.workerAddr });
    expect(status).toMatchObject({ taskId: 'steps-1', state: 'SUCCEEDED', result: { success: true } });
    await expect(client.getResult('never', { workerAddr: sub.workerAddr })).rejects.toMatchObject({
      code: ClientErrorCode.NOT_FOUND,
      grpcStatus: grpc.status.NOT_FOUND,
      businessCode: 'NotFound',
    });
  });

  it('leaving a watch early cancels the stream', async () => {
    cluster.worker.terminalAfterMs = 5_000;
    try {
      const client = newClient();
      await client.submit({ ...TASK, taskId: 'early-1' });
      const before = cluster.worker.cancelledStreams;
      for await (const u of client.watch(['early-1'], { workerAddr: cluster.workerAddr })) {
        expect(u.state).toBe('RUNNING');
        break;
      }
      await expect.poll(() => cluster.worker.cancelledStreams, { timeout: 2_000 }).toBe(before + 1);
    } finally {
      cluster.worker.terminalAfterMs = 5;
    }
  });

  it('a watch whose tasks all ended leaves the stream for the Worker to end, never cancelling it', async () => {
    // The fake ends the stream 150 ms after the terminal update: a client that cancelled once it had
    // seen every task terminal would be counted.
    cluster.worker.endDelayMs = 150;
    try {
      const client = newClient();
      await client.submit({ ...TASK, taskId: 'clean-1' });
      const before = cluster.worker.cancelledStreams;
      const ended = cluster.worker.endedStreams;
      const states: string[] = [];
      for await (const u of client.watch(['clean-1'], { workerAddr: cluster.workerAddr }))
        states.push(u.state);
      expect(states).toEqual(['RUNNING', 'SUCCEEDED']);
      // run() watches to the terminal update the same way.
      expect((await client.run({ ...TASK, taskId: 'clean-2' })).success).toBe(true);
      // Each stream either ends on the Worker's side or was cancelled before; wait for both to do one.
      await expect
        .poll(() => cluster.worker.endedStreams - ended + cluster.worker.cancelledStreams - before, {
          timeout: 2_000,
        })
        .toBe(2);
      expect(cluster.worker.cancelledStreams).toBe(before);
    } finally {
      cluster.worker.endDelayMs = 0;
    }
  });

  it('a stream that is not ended after every task ended is cancelled after the grace', async () => {
    cluster.worker.endDelayMs = Infinity;
    const worker = createWorkerClient(cluster.workerAddr);
    try {
      const client = newClient();
      await client.submit({ ...TASK, taskId: 'stuck-1' });
      const before = cluster.worker.cancelledStreams;
      const seen: boolean[] = [];
      for await (const u of watchTaskUpdates(worker, ['stuck-1'], { endGraceMs: 100 }))
        seen.push(u.isTerminal);
      expect(seen).toEqual([false, true]);
      await expect.poll(() => cluster.worker.cancelledStreams, { timeout: 2_000 }).toBe(before + 1);
    } finally {
      worker.close();
      cluster.worker.endDelayMs = 0;
    }
  });

  it('an aborted signal cancels run() with CANCELLED', async () => {
    cluster.worker.terminalAfterMs = 5_000;
    try {
      const abort = new AbortController();
      const pending = newClient().run({ ...TASK, taskId: 'abort-1' }, { signal: abort.signal });
      await expect.poll(() => cluster.worker.watchCalls.some((ids) => ids.includes('abort-1'))).toBe(true);
      abort.abort();
      await expect(pending).rejects.toMatchObject({ code: ClientErrorCode.CANCELLED });
    } finally {
      cluster.worker.terminalAfterMs = 5;
    }
  });

  it('many concurrent runs share one channel per address', async () => {
    const client = newClient();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => client.run({ ...TASK, taskId: `many-${i}` })),
    );
    expect(results.every((r) => r.success)).toBe(true);
    expect([...client.channelAddresses].sort()).toEqual([cluster.coordinatorAddr, cluster.workerAddr].sort());
  });

  it('rejects options naming both or neither of coordinator and worker', () => {
    expect(() => new BlockxClient({})).toThrow(BlockxClientError);
    expect(() => new BlockxClient({ coordinator: 'a:1', worker: 'b:2' })).toThrow(/exactly one/);
    expect(() => new BlockxClient({ worker: 'b:2', slotTtlMs: 0 })).toThrow(/slotTtlMs/);
  });
});
