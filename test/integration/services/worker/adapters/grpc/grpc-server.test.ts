// WorkerService on a real gRPC server (127.0.0.1:0) with real clients: every status code of
// docs/task-lifecycle.md's table, GetTaskResult, WatchTasks, health, idempotency under concurrency. The Calls
// phase is a fake runner whose runs the test finishes by hand, so tasks stay RUNNING exactly as long as a
// test needs.
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerClient } from '../../../../../../src/grpc/clients.js';
import { HealthClient, checkHealth } from '../../../../../../src/grpc/health.js';
import type { WorkerServiceClient } from '../../../../../../src/grpc/proto.js';
import { runWorker, type RunningWorker } from '../../../../../../src/services/worker/app/run-worker.js';
import {
  REPO,
  getResult,
  hello,
  kernelWith,
  openWatch,
  rejection,
  reserve,
  startFixture,
  stopFixture,
  submit,
  watchAll,
  type Fixture,
} from './grpc-fixture.js';
import { eventually, present } from '../../../../../support/eventually.js';

/** Waits until the fake runner has a run for `taskId` (about 1 s, as it always has). */
function runOf(f: Fixture, taskId: string) {
  return eventually(() => present(f.runner.runs.find((r) => r.task.taskId === taskId)), {
    timeoutMs: 1_000,
    intervalMs: 5,
    message: `a call run for ${taskId}`,
  });
}

describe('WorkerService status codes (documented table)', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await startFixture({ WORKER_TASK_SLOTS: '3' });
  });
  afterAll(() => stopFixture(f));

  it.each([
    ['RequestTaskSlot with ttl_ms 0', (c: WorkerServiceClient) => reserve(c, 'x1', 0)],
    ['RequestTaskSlot without a task id', (c: WorkerServiceClient) => reserve(c, '')],
    ['SubmitTask without a task', (c: WorkerServiceClient) => submit(c, null)],
    ['SubmitTask without a task id', (c: WorkerServiceClient) => submit(c, hello(''))],
    [
      'SubmitTask with a negative task_timeout_ms',
      (c: WorkerServiceClient) => submit(c, hello('x2', { taskTimeoutMs: -5 })),
    ],
    [
      'SubmitTask with task_timeout_ms above maxTaskTimeoutMs',
      (c: WorkerServiceClient) => submit(c, hello('x3', { taskTimeoutMs: 8 * 3600_000 + 1 })),
    ],
    [
      'SubmitTask whose config is not JSON',
      (c: WorkerServiceClient) =>
        submit(
          c,
          hello('x4', { functionCallConfig: { type: 'CallListCallConfig', config: Buffer.from('{oops') } }),
        ),
    ],
    ['GetTaskResult without a task id', (c: WorkerServiceClient) => getResult(c, '')],
  ])('%s → INVALID_ARGUMENT (InvalidArgument)', async (_name, call) => {
    const r = await rejection(call(f!.client));
    expect(r.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(r.business).toBe('InvalidArgument');
  });

  it('SubmitTask whose builder config breaks the plugin schema → INVALID_ARGUMENT naming the rule', async () => {
    const task = hello('x5', {
      functionCallConfig: { type: 'CallListCallConfig', config: Buffer.from('{"function":"hello_world"}') },
    });
    const r = await rejection(submit(f!.client, task));
    expect(r.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(r.message).toContain('(rule: required)');
    expect(r.message).toContain('callList');
  });

  it('SubmitTask with an unknown slot_id → FAILED_PRECONDITION (InvalidSlot)', async () => {
    const r = await rejection(submit(f!.client, hello('x6'), 'no-such-slot'));
    expect(r).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, business: 'InvalidSlot' });
  });

  it('SubmitTask with a slot bound to another task → FAILED_PRECONDITION (InvalidSlot)', async () => {
    const { slotId } = await reserve(f!.client, 'owner');
    const r = await rejection(submit(f!.client, hello('intruder'), slotId));
    expect(r).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, business: 'InvalidSlot' });
  });

  it('GetTaskResult of an unknown task → NOT_FOUND (NotFound)', async () => {
    const r = await rejection(getResult(f!.client, 'never-seen'));
    expect(r).toMatchObject({ code: grpc.status.NOT_FOUND, business: 'NotFound' });
  });

  it('no free slot → RESOURCE_EXHAUSTED (NoSlot), for RequestTaskSlot and for SubmitTask without slot', async () => {
    // 'owner' holds one of the 3 slots already.
    await reserve(f!.client, 'fill-1');
    await reserve(f!.client, 'fill-2');
    const r1 = await rejection(reserve(f!.client, 'one-too-many'));
    expect(r1).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, business: 'NoSlot' });
    const r2 = await rejection(submit(f!.client, hello('one-too-many')));
    expect(r2).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, business: 'NoSlot' });
  });
});

describe('readiness, health and draining', () => {
  let f: Fixture | undefined;
  let health: HealthClient | undefined;
  beforeAll(async () => {
    f = await startFixture({}, false);
    health = new HealthClient(f.worker.address, grpc.credentials.createInsecure());
  });
  afterAll(async () => {
    health?.close();
    await stopFixture(f);
  });

  it('is NOT_SERVING and answers UNAVAILABLE until the executor is ready, then SERVING', async () => {
    expect(await checkHealth(health!, '', 2_000)).toBe('NOT_SERVING');
    expect(await checkHealth(health!, 'blockx.worker.v1.WorkerService', 2_000)).toBe('NOT_SERVING');
    const r = await rejection(submit(f!.client, hello('early')));
    expect(r).toMatchObject({ code: grpc.status.UNAVAILABLE, business: 'Unavailable' });
    expect((await rejection(reserve(f!.client, 'early'))).code).toBe(grpc.status.UNAVAILABLE);
    f!.readiness.markReady();
    expect(await checkHealth(health!, '', 2_000)).toBe('SERVING');
    expect((await submit(f!.client, hello('ready-1'))).state).toBe('TASK_STATE_RUNNING');
  });

  it('while draining: NOT_SERVING, new work UNAVAILABLE, the running task finishes and is reported', async () => {
    const run = await runOf(f!, 'ready-1');
    const watch = openWatch(f!.client, ['ready-1']);
    await watch.received(1);
    const drained = f!.worker.drain();
    expect(await checkHealth(health!, '', 2_000)).toBe('NOT_SERVING');
    const r = await rejection(submit(f!.client, hello('late')));
    expect(r).toMatchObject({ code: grpc.status.UNAVAILABLE, business: 'Unavailable' });
    run.outcome.resolve({ success: true, retryable: false, outputs: ['hello, ct2', 'hello, blockx'] });
    const updates = await watch.ended;
    expect(updates.at(-1)).toMatchObject({ taskId: 'ready-1', state: 'SUCCEEDED', isTerminal: true });
    await drained;
  });
});

describe('GetTaskResult, WatchTasks, idempotency', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await startFixture();
  });
  afterAll(() => stopFixture(f));

  it('GetTaskResult: ALLOCATED after a reservation, RUNNING after submit, then the terminal state and result', async () => {
    const { slotId, state } = await reserve(f!.client, 'g1');
    expect(state).toBe('TASK_STATE_ALLOCATED');
    expect(await getResult(f!.client, 'g1')).toMatchObject({
      taskId: 'g1',
      state: 'TASK_STATE_ALLOCATED',
      result: null,
    });
    expect((await submit(f!.client, hello('g1'), slotId)).state).toBe('TASK_STATE_RUNNING');
    expect((await getResult(f!.client, 'g1')).state).toBe('TASK_STATE_RUNNING');
    (await runOf(f!, 'g1')).outcome.resolve({ success: true, retryable: false, outputs: ['a', 'b'] });
    const updates = await watchAll(f!.client, ['g1']);
    expect(updates.at(-1)?.state).toBe('SUCCEEDED');
    const done = await getResult(f!.client, 'g1');
    expect(done.state).toBe('TASK_STATE_SUCCEEDED');
    expect(done.result?.success).toBe(true);
    expect(JSON.parse(done.result?.executeResult?.pluginResults[0]?.result.toString() ?? 'null')).toEqual([
      'a',
      'b',
    ]);
  });

  it('WatchTasks: a snapshot per id (unknown → not_found), one terminal update per running task, then the stream ends', async () => {
    await submit(f!.client, hello('w1'));
    await submit(f!.client, hello('w2'));
    const watch = openWatch(f!.client, ['w1', 'nope', 'w2']);
    await watch.received(3);
    (await runOf(f!, 'w2')).outcome.resolve({
      success: false,
      failureCode: 'CALL_FAILED',
      retryable: false,
      outputs: [],
      message: 'boom',
    });
    (await runOf(f!, 'w1')).outcome.resolve({ success: true, retryable: false, outputs: [] });
    const updates = await watch.ended;
    expect(updates.map((u) => [u.taskId, u.state, u.isTerminal, u.error])).toEqual([
      ['w1', 'RUNNING', false, ''],
      ['nope', 'UNSPECIFIED', true, 'not_found'],
      ['w2', 'RUNNING', false, ''],
      ['w2', 'FAILED', true, ''],
      ['w1', 'SUCCEEDED', true, ''],
    ]);
    for (const u of updates) {
      expect(u.workerAddr).toBe(f!.worker.address);
      expect(u.timestampMs).toBeGreaterThan(0);
    }
    expect(updates[3]?.result?.executeResult).toMatchObject({ failureCode: 'CALL_FAILED', retryable: false });
  });

  it('WatchTasks of terminal and unknown ids only: snapshots, then the stream ends at once', async () => {
    const updates = await watchAll(f!.client, ['w1', 'never']);
    expect(updates.map((u) => [u.taskId, u.isTerminal, u.error])).toEqual([
      ['w1', true, ''],
      ['never', true, 'not_found'],
    ]);
    expect(updates[0]?.result?.success).toBe(true);
  });

  it('an unknown builder type is admitted and fails BUILDER_NOT_FOUND', async () => {
    const task = hello('nb', { functionCallConfig: { type: 'NoSuchCallConfig', config: Buffer.from('{}') } });
    expect((await submit(f!.client, task)).state).toBe('TASK_STATE_RUNNING');
    const updates = await watchAll(f!.client, ['nb']);
    expect(updates.at(-1)?.result?.executeResult).toMatchObject({
      failureCode: 'BUILDER_NOT_FOUND',
      retryable: false,
    });
  });

  it('100 concurrent SubmitTask calls with one task_id execute the task once', async () => {
    const answers = await Promise.all(Array.from({ length: 100 }, () => submit(f!.client, hello('same'))));
    expect(new Set(answers.map((a) => a.state))).toEqual(new Set(['TASK_STATE_RUNNING']));
    const run = await runOf(f!, 'same');
    run.outcome.resolve({ success: true, retryable: false, outputs: ['once'] });
    await watchAll(f!.client, ['same']);
    expect(f!.runner.runs.filter((r) => r.task.taskId === 'same')).toHaveLength(1);
    // A retained result answers SubmitTask with its terminal state; nothing runs again.
    const again = await submit(f!.client, hello('same'));
    expect(again.state).toBe('TASK_STATE_SUCCEEDED');
    expect(again.result?.success).toBe(true);
    expect(f!.runner.runs.filter((r) => r.task.taskId === 'same')).toHaveLength(1);
  });
});

describe('Watch-disconnect grace', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await startFixture({ WATCH_DISCONNECT_GRACE_MS: '50' });
  });
  afterAll(() => stopFixture(f));

  it('a watched task whose last stream goes away fails WATCH_DISCONNECTED after the grace', async () => {
    await submit(f!.client, hello('wd'));
    await runOf(f!, 'wd');
    const stream = f!.client.watchTasks({ taskIds: ['wd'] });
    await new Promise<void>((resolve) => stream.once('data', () => resolve()));
    stream.on('error', () => undefined); // the cancel below surfaces as CANCELLED
    stream.cancel();
    const result = await eventually(
      async () => {
        const r = await getResult(f!.client, 'wd');
        expect(r.state).toBe('TASK_STATE_FAILED');
        return r;
      },
      { timeoutMs: 2_000, intervalMs: 20, message: 'wd failed after the grace' },
    );
    expect(result.result?.executeResult).toMatchObject({
      failureCode: 'WATCH_DISCONNECTED',
      retryable: false,
    });
    // The cancelled calls' signal was aborted.
    expect((await runOf(f!, 'wd')).task.signal.aborted).toBe(true);
  });
});

describe('hello_world end to end with the in-process link (runWorker default)', () => {
  let worker: RunningWorker | undefined;
  let client: WorkerServiceClient | undefined;
  beforeAll(async () => {
    const kernel = await kernelWith({ BLOCKX_FUNCTIONS_DIR: path.join(REPO, 'functions') });
    worker = await runWorker({
      config: kernel.config,
      deployment: 'block',
      plugins: kernel.plugins,
      listen: '127.0.0.1:0',
      shutdownGraceMs: 200,
    });
    client = createWorkerClient(worker.address);
  });
  afterAll(async () => {
    client?.close();
    await worker?.close();
  });

  it('returns ["hello, ct2", "hello, blockx"] in the ReturnValueResultHandler result', async () => {
    await submit(client!, hello('3f2b1c9e-8a4d-4c1e-9b0a-6f7e5d4c3b2a'));
    const updates = await watchAll(client!, ['3f2b1c9e-8a4d-4c1e-9b0a-6f7e5d4c3b2a']);
    const last = updates.at(-1);
    expect(last).toMatchObject({ state: 'SUCCEEDED', isTerminal: true });
    expect(last?.result?.executeResult.pluginResults).toEqual([
      {
        pluginName: 'ReturnValueResultHandler',
        success: true,
        failureCode: '',
        failureMessage: '',
        result: ['hello, ct2', 'hello, blockx'],
      },
    ]);
  });
});
