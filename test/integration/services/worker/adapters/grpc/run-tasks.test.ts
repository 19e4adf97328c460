// RunTasks and RequestTaskSlots (docs/batched-protocol.md § Worker) on a real WorkerService server
// (127.0.0.1:0) with a real grpc-js client. The Calls phase is the fake runner of grpc-fixture.ts, so a
// task stays RUNNING until the test finishes its run; empty tasks (no calls, no writer) finish alone.
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { unaryCall } from '../../../../../../src/grpc/clients.js';
import type { WorkerServiceClient } from '../../../../../../src/grpc/proto.js';
import type {
  RequestTaskSlotsResponseWireOut,
  TaskAdmissionWireOut,
  TaskSubmissionWire,
  TaskUpdateWireOut,
} from '../../../../../../src/grpc/wire-types.js';
import { MAX_BATCH_TASKS } from '../../../../../../src/kernel/input-bounds.js';
import type { RunRecord } from '../../../../../unit/services/worker/adapters/orchestration/harness.js';
import {
  getResult,
  hello,
  rejection,
  reserve,
  startFixture,
  stopFixture,
  type Fixture,
} from './grpc-fixture.js';
import { eventually } from '../../../../../support/eventually.js';
import { emptyTask, openRunTasks, type RunTasksSession } from './run-tasks-client.js';

// How these tests have always polled: every 5 ms, for about 10 s.
const POLL = { timeoutMs: 10_000, intervalMs: 5 } as const;

const ok = (outputs: string[] = []) => ({ success: true, retryable: false, outputs });

/** Waits until the fake runner has a run for `taskId`. */
async function runOf(f: Fixture, taskId: string): Promise<RunRecord> {
  let run: RunRecord | undefined;
  await eventually(() => (run = f.runner.runs.find((r) => r.task.taskId === taskId)) !== undefined, {
    ...POLL,
    message: `a run of ${taskId}`,
  });
  return run!;
}

const submission = (taskId: string, slotId = ''): TaskSubmissionWire => ({ task: hello(taskId), slotId });
const admissionOf = (s: RunTasksSession, taskId: string): TaskAdmissionWireOut | undefined =>
  s.admissions.find((a) => a.taskId === taskId);
const updatesOf = (s: RunTasksSession, taskId: string): TaskUpdateWireOut[] =>
  s.updates.filter((u) => u.taskId === taskId);
const summary = (a: TaskAdmissionWireOut) => [a.taskId, a.state, a.error?.code ?? '', a.error?.status ?? 0];

const requestTaskSlots = (c: WorkerServiceClient, taskIds: string[], ttlMs = 5_000) =>
  unaryCall<RequestTaskSlotsResponseWireOut>((md, o, cb) =>
    c.requestTaskSlots({ taskIds, ttlMs }, md, o, cb),
  );

describe('RunTasks: admissions, per-task errors, credits', () => {
  let f: Fixture | undefined;
  const open: RunTasksSession[] = [];
  const session = (): RunTasksSession => {
    const s = openRunTasks(f!.client);
    open.push(s);
    return s;
  };
  beforeAll(async () => {
    // 3 slots but 8 credits per stream, so a full worker shows as NoSlot inside a stream.
    f = await startFixture({ WORKER_TASK_SLOTS: '3', WORKER_RUN_TASKS_MAX_IN_FLIGHT: '8' });
  });
  afterEach(async () => {
    for (const s of open.splice(0)) s.call.cancel();
    // Finish whatever still runs so the next test starts with free slots.
    for (const r of f!.runner.runs) r.outcome.resolve(ok());
    const slots = () => f!.worker.core.deriveHeartbeat(f!.worker.orchestrator.now());
    await eventually(() => slots().runningTasks === 0 && slots().reservedSlots === 0, {
      ...POLL,
      message: 'no slot in use',
    });
  });
  afterAll(() => stopFixture(f));

  it('opens with the initial credits (worker.runTasks.maxInFlight)', async () => {
    const s = session();
    await s.until(() => s.messages.length === 1, 'the first message');
    expect(s.messages[0]).toEqual({ credits: 8, admissions: [], updates: [] });
  });

  it('answers every task of a batch in one message, in order: per-task errors while the others run', async () => {
    const s = session();
    await s.until(() => s.received() === 8, 'the initial credits');
    const { slotId } = await reserve(f!.client, 'reserved');
    const badConfig = hello('bad-config', {
      functionCallConfig: { type: 'CallListCallConfig', config: Buffer.from('{"function":"hello_world"}') },
    });
    s.send([
      submission('ok-1'),
      { task: badConfig, slotId: '' },
      submission('wrong-slot', 'no-such-slot'),
      submission('reserved', slotId),
      submission('ok-2'),
      submission('one-too-many'), // the 3 slots are taken by ok-1, reserved, ok-2
      { task: null, slotId: '' },
    ]);
    await s.until(() => s.messages.length === 2, 'the admissions');
    const answer = s.messages[1]!;
    expect(answer.admissions.map(summary)).toEqual([
      ['ok-1', 'TASK_STATE_RUNNING', '', 0],
      ['bad-config', 'TASK_STATE_UNSPECIFIED', 'InvalidArgument', grpc.status.INVALID_ARGUMENT],
      ['wrong-slot', 'TASK_STATE_UNSPECIFIED', 'InvalidSlot', grpc.status.FAILED_PRECONDITION],
      ['reserved', 'TASK_STATE_RUNNING', '', 0],
      ['ok-2', 'TASK_STATE_RUNNING', '', 0],
      ['one-too-many', 'TASK_STATE_UNSPECIFIED', 'NoSlot', grpc.status.RESOURCE_EXHAUSTED],
      ['', 'TASK_STATE_UNSPECIFIED', 'InvalidArgument', grpc.status.INVALID_ARGUMENT],
    ]);
    expect(answer.admissions[1]?.error?.message).toContain('(rule: required)');
    // The four refusals give their credits back at once; the three running tasks hold theirs.
    expect(answer.credits).toBe(4);
    expect(s.credits()).toBe(8 - 3);

    for (const id of ['ok-1', 'reserved', 'ok-2']) (await runOf(f!, id)).outcome.resolve(ok(['x']));
    await s.until(() => s.updates.length === 3, 'three terminal updates');
    expect(s.updates.map((u) => [u.taskId, u.state, u.isTerminal]).sort()).toEqual([
      ['ok-1', 'TASK_STATE_SUCCEEDED', true],
      ['ok-2', 'TASK_STATE_SUCCEEDED', true],
      ['reserved', 'TASK_STATE_SUCCEEDED', true],
    ]);
    expect(s.updates[0]?.workerAddr).toBe(f!.worker.address);
    expect(s.credits()).toBe(8);
  });

  it('a retained result answers in the admission, returns its credit, and nothing else follows', async () => {
    const s = session();
    await s.until(() => s.received() === 8, 'the initial credits');
    s.send([submission('retained')]);
    (await runOf(f!, 'retained')).outcome.resolve(ok(['r']));
    await s.until(() => s.updates.length === 1, 'the terminal update');
    s.send([submission('retained')]);
    await s.until(() => s.admissions.length === 2, 'the second admission');
    expect(s.admissions[1]).toMatchObject({ taskId: 'retained', state: 'TASK_STATE_SUCCEEDED', error: null });
    expect(s.admissions[1]?.result?.success).toBe(true);
    expect(s.credits()).toBe(8);
    s.call.end();
    expect((await s.status).code).toBe(grpc.status.OK);
    expect(s.updates).toHaveLength(1);
    expect(f!.runner.runs.filter((r) => r.task.taskId === 'retained')).toHaveLength(1);
  });

  it('duplicates of one task id, in one batch and across two streams, run once; each stream gets one terminal update', async () => {
    const a = session();
    const b = session();
    await a.until(() => a.received() === 8, 'credits of a');
    await b.until(() => b.received() === 8, 'credits of b');
    a.send([submission('dup'), submission('dup')]);
    await a.until(() => a.admissions.length === 2, 'admissions of a');
    b.send([submission('dup')]);
    await b.until(() => b.admissions.length === 1, 'admission of b');
    expect(a.admissions.map(summary)).toEqual([
      ['dup', 'TASK_STATE_RUNNING', '', 0],
      ['dup', 'TASK_STATE_RUNNING', '', 0],
    ]);
    expect(b.admissions.map(summary)).toEqual([['dup', 'TASK_STATE_RUNNING', '', 0]]);
    // The duplicate holds no credit: a holds one for the task, b one.
    expect([a.credits(), b.credits()]).toEqual([7, 7]);

    (await runOf(f!, 'dup')).outcome.resolve(ok(['once']));
    a.call.end();
    b.call.end();
    expect((await a.status).code).toBe(grpc.status.OK);
    expect((await b.status).code).toBe(grpc.status.OK);
    expect(updatesOf(a, 'dup')).toHaveLength(1);
    expect(updatesOf(b, 'dup')).toHaveLength(1);
    expect(f!.runner.runs.filter((r) => r.task.taskId === 'dup')).toHaveLength(1);
    expect([a.credits(), b.credits()]).toEqual([8, 8]);
  });

  it('a client sending beyond its credits gets the excess refused NoSlot per task; the stream survives', async () => {
    const s = session();
    await s.until(() => s.received() === 8, 'the initial credits');
    // 3 fit the slots, 5 more fit the credits (NoSlot from the slots), 2 exceed the credits.
    const ids = Array.from({ length: 10 }, (_, i) => `c-${i}`);
    s.send(ids.map((id) => submission(id)));
    await s.until(() => s.admissions.length === 10, 'ten admissions');
    const codes = s.admissions.map((a) => a.error?.code ?? a.state);
    expect(codes).toEqual([...Array(3).fill('TASK_STATE_RUNNING'), ...Array(7).fill('NoSlot')]);
    expect(s.admissions[8]?.error?.message).toContain('credit window 8');
    expect(s.admissions[7]?.error?.message).not.toContain('credit window');
    // The 5 slot refusals return their credits; the 2 over-credit refusals had none to return.
    expect(s.messages[1]?.credits).toBe(5);
    for (const id of ids.slice(0, 3)) (await runOf(f!, id)).outcome.resolve(ok());
    await s.until(() => s.updates.length === 3, 'three terminal updates');
    s.send([submission('after')]);
    await s.until(() => admissionOf(s, 'after') !== undefined, 'the next admission');
    expect(admissionOf(s, 'after')?.state).toBe('TASK_STATE_RUNNING');
  });

  it('fails the stream (RESOURCE_EXHAUSTED) when it keeps sending beyond its credits', async () => {
    const s = session();
    await s.until(() => s.received() === 8, 'the initial credits');
    // 8 within the credits (3 run, 5 NoSlot: their credits come back only with the answer), then 17
    // more without a credit: the 9th in a row exceeds the window of 8.
    s.send(Array.from({ length: 8 + 17 }, (_, i) => submission(`v-${i}`)));
    const status = await s.status;
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toContain('without a credit (credit window 8)');
  });

  it('fails the stream (RESOURCE_EXHAUSTED) on a request of more than MAX_BATCH_TASKS tasks', async () => {
    const s = session();
    await s.until(() => s.received() === 8, 'the initial credits');
    const task = emptyTask('big');
    s.send(Array.from({ length: MAX_BATCH_TASKS + 1 }, () => ({ task, slotId: '' })));
    const status = await s.status;
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toContain(`at most ${MAX_BATCH_TASKS} tasks`);
  });

  it('a half-closed stream stays open until every in-flight task has its terminal update, then ends OK', async () => {
    const s = session();
    await s.until(() => s.received() === 8, 'the initial credits');
    s.send([submission('hc-1'), submission('hc-2')]);
    await s.until(() => s.admissions.length === 2, 'the admissions');
    s.call.end();
    (await runOf(f!, 'hc-1')).outcome.resolve(ok());
    await s.until(() => s.updates.length === 1, 'the first terminal update');
    expect(s.isEnded()).toBe(false); // hc-2 is still running
    (await runOf(f!, 'hc-2')).outcome.resolve(ok());
    const status = await s.status;
    expect(status.code).toBe(grpc.status.OK);
    expect(s.updates.map((u) => u.taskId).sort()).toEqual(['hc-1', 'hc-2']);
    expect(s.credits()).toBe(8);
    await eventually(() => f!.worker.runTasks.size === 0, { ...POLL, message: 'the stream forgotten' });
  });

  it('counts as a watch while open: a cancelled stream detaches its tasks, which keep running (grace off)', async () => {
    const s = session();
    await s.until(() => s.received() === 8, 'the initial credits');
    s.send([submission('cx')]);
    await s.until(() => s.admissions.length === 1, 'the admission');
    const run = await runOf(f!, 'cx');
    expect(f!.worker.subscriptions.watchedTasks).toBe(1);
    s.call.cancel();
    await eventually(() => f!.worker.subscriptions.watchedTasks === 0, {
      ...POLL,
      message: 'the watch detached',
    });
    expect(run.task.signal.aborted).toBe(false);
    run.outcome.resolve(ok(['still here']));
    await eventually(async () => (await getResult(f!.client, 'cx')).state !== 'TASK_STATE_RUNNING', {
      ...POLL,
      message: 'the task finished',
    });
    const result = await getResult(f!.client, 'cx');
    expect(result.state).toBe('TASK_STATE_SUCCEEDED');
    expect(result.result?.success).toBe(true);
  });
});

describe('RunTasks: Watch-disconnect grace', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await startFixture({ WATCH_DISCONNECT_GRACE_MS: '50' });
  });
  afterAll(() => stopFixture(f));

  it('a task whose stream is cancelled mid-flight fails WATCH_DISCONNECTED after the grace', async () => {
    const s = openRunTasks(f!.client);
    await s.until(() => s.received() > 0, 'the initial credits');
    s.send([submission('wd')]);
    await s.until(() => s.admissions.length === 1, 'the admission');
    const run = await runOf(f!, 'wd');
    s.call.cancel();
    await eventually(async () => (await getResult(f!.client, 'wd')).state === 'TASK_STATE_FAILED', {
      ...POLL,
      message: 'the task failed',
    });
    const result = await getResult(f!.client, 'wd');
    expect(result.result?.executeResult).toMatchObject({
      failureCode: 'WATCH_DISCONNECTED',
      retryable: false,
    });
    expect(run.task.signal.aborted).toBe(true);
  });

  it('a second stream attached to the task keeps it alive when the first goes away', async () => {
    const a = openRunTasks(f!.client);
    const b = openRunTasks(f!.client);
    await a.until(() => a.received() > 0, 'credits of a');
    await b.until(() => b.received() > 0, 'credits of b');
    a.send([submission('kept')]);
    await a.until(() => a.admissions.length === 1, 'admission of a');
    b.send([submission('kept')]);
    await b.until(() => b.admissions.length === 1, 'admission of b');
    const run = await runOf(f!, 'kept');
    a.call.cancel();
    await eventually(() => f!.worker.runTasks.size === 1, { ...POLL, message: 'a released' });
    run.outcome.resolve(ok());
    await b.until(() => b.updates.length === 1, 'the terminal update on b');
    expect(b.updates[0]?.state).toBe('TASK_STATE_SUCCEEDED');
    b.call.end();
    expect((await b.status).code).toBe(grpc.status.OK);
  });
});

describe('RunTasks: a client that stops reading', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await startFixture({ WORKER_RUN_TASKS_MAX_IN_FLIGHT: '64', WORKER_RUN_TASKS_FLUSH_MS: '0' });
  });
  afterAll(() => stopFixture(f));

  it('holds at most the credit window of outcomes, stops reading requests, and resumes on drain', async () => {
    const window = 64;
    const s = openRunTasks(f!.client);
    await s.until(() => s.received() === window, 'the initial credits');
    s.call.pause(); // stop reading: the responses pile up in the HTTP/2 flow-control window, then on the server
    const ids = Array.from({ length: window }, (_, i) => `slow-${i}`);
    s.send(ids.map((id) => submission(id)));
    const stats = () => f!.worker.runTasks.stats()[0]!;
    await eventually(() => stats().submissions === window, { ...POLL, message: 'the tasks admitted' });
    // Large results, one at a time, so every terminal update is a message of its own.
    const big = 'x'.repeat(256 * 1024);
    let maxPending = 0;
    let maxQueued = 0;
    for (const id of ids) {
      (await runOf(f!, id)).outcome.resolve(ok([big]));
      await eventually(() => stats().inFlight < window - ids.indexOf(id), {
        ...POLL,
        message: `${id} terminal`,
      });
      maxPending = Math.max(maxPending, stats().pendingOutbound);
      maxQueued = Math.max(maxQueued, stats().queuedUpdates);
    }
    await eventually(() => stats().readingPaused, { ...POLL, message: 'reading paused' });
    // More tasks while the server does not read: they wait in the transport, unprocessed.
    s.send([submission('late-1'), submission('late-2')]);
    for (let i = 0; i < 20; i++) {
      await new Promise<void>((r) => setTimeout(r, 5));
      expect(stats().submissions).toBe(window);
    }
    expect(stats().pendingOutbound).toBeLessThanOrEqual(window);
    expect(maxPending).toBeLessThanOrEqual(window);
    // Once gRPC's buffers were full the Worker kept the later updates itself, waiting for 'drain'.
    expect(maxQueued).toBeGreaterThan(0);
    expect(stats().inFlight).toBe(0);

    s.call.resume();
    await s.until(() => s.updates.length === window, 'every terminal update');
    await s.until(() => s.admissions.length === window + 2, 'the late admissions');
    expect(new Set(s.updates.map((u) => u.taskId)).size).toBe(window);
    expect(s.admissions.slice(window).map(summary)).toEqual([
      ['late-1', 'TASK_STATE_RUNNING', '', 0],
      ['late-2', 'TASK_STATE_RUNNING', '', 0],
    ]);
    for (const id of ['late-1', 'late-2']) (await runOf(f!, id)).outcome.resolve(ok());
    s.call.end();
    expect((await s.status).code).toBe(grpc.status.OK);
    expect(s.updates).toHaveLength(window + 2);
  });
});

describe('RunTasks: 100,000 empty tasks on one stream', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await startFixture({ WORKER_TASK_SLOTS: '1024', WORKER_RUN_TASKS_MAX_IN_FLIGHT: '1024' });
  });
  afterAll(() => stopFixture(f));

  it(
    'completes with every admission and every terminal update exactly once',
    { timeout: 60_000 },
    async () => {
      const total = 100_000;
      const s = openRunTasks(f!.client);
      let next = 0;
      let maxInFlight = 0;
      // Send as the credits allow, in messages of at most 1,000 tasks.
      const pump = (): void => {
        while (s.credits() > 0 && next < total) {
          const n = Math.min(s.credits(), total - next, 1_000);
          s.send(Array.from({ length: n }, (_, i) => ({ task: emptyTask(`e-${next + i}`), slotId: '' })));
          next += n;
          maxInFlight = Math.max(maxInFlight, next - s.updates.length);
        }
        if (next === total) s.call.end();
      };
      s.call.on('data', () => {
        if (next < total) pump();
      });
      const status = await s.status;
      expect(status.code).toBe(grpc.status.OK);
      expect(s.admissions).toHaveLength(total);
      expect(s.admissions.every((a) => a.state === 'TASK_STATE_RUNNING' && a.error === null)).toBe(true);
      expect(s.updates).toHaveLength(total);
      expect(new Set(s.updates.map((u) => u.taskId)).size).toBe(total);
      expect(s.updates.every((u) => u.state === 'TASK_STATE_SUCCEEDED' && u.isTerminal)).toBe(true);
      expect(maxInFlight).toBeLessThanOrEqual(1024);
      expect(s.credits()).toBe(1024);
    },
  );
});

describe('RequestTaskSlots', () => {
  let f: Fixture | undefined;
  beforeAll(async () => {
    f = await startFixture({ WORKER_TASK_SLOTS: '3' });
  });
  afterAll(() => stopFixture(f));

  it('answers one grant per id in request order, with per-id errors; a repeated id gets the same answer', async () => {
    const huge = 'h'.repeat(300);
    const { grants } = await requestTaskSlots(f!.client, ['a', '', 'b', 'a', huge, 'c', 'd']);
    expect(grants.map((g) => [g.taskId, g.state, g.error?.code ?? '', g.error?.status ?? 0])).toEqual([
      ['a', 'TASK_STATE_ALLOCATED', '', 0],
      ['', 'TASK_STATE_UNSPECIFIED', 'InvalidArgument', grpc.status.INVALID_ARGUMENT],
      ['b', 'TASK_STATE_ALLOCATED', '', 0],
      ['a', 'TASK_STATE_ALLOCATED', '', 0],
      [`${'h'.repeat(256)}…`, 'TASK_STATE_UNSPECIFIED', 'InvalidArgument', grpc.status.INVALID_ARGUMENT],
      ['c', 'TASK_STATE_ALLOCATED', '', 0],
      ['d', 'TASK_STATE_UNSPECIFIED', 'NoSlot', grpc.status.RESOURCE_EXHAUSTED],
    ]);
    expect(grants[3]?.slotId).toBe(grants[0]?.slotId);
    expect(new Set([grants[0]?.slotId, grants[2]?.slotId, grants[5]?.slotId]).size).toBe(3);
    expect(grants[6]).toMatchObject({
      slotId: '',
      error: { message: 'NoSlot: no free task slot (3/3 in use)' },
    });
    // The grants are the RequestTaskSlot reservations: SubmitTask takes them.
    const s = openRunTasks(f!.client);
    await s.until(() => s.received() > 0, 'the initial credits');
    expect(s.messages[0]?.credits).toBe(3); // worker.runTasks.maxInFlight unset: the taskSlots
    s.send([submission('a', grants[0]!.slotId), submission('b', 'wrong')]);
    await s.until(() => s.admissions.length === 2, 'the admissions');
    expect(s.admissions.map(summary)).toEqual([
      ['a', 'TASK_STATE_RUNNING', '', 0],
      ['b', 'TASK_STATE_UNSPECIFIED', 'InvalidSlot', grpc.status.FAILED_PRECONDITION],
    ]);
    s.call.cancel();
  });

  it.each([
    ['no ids', [] as string[], 5_000, 'taskIds must hold 1 to 10000 ids, got 0'],
    [
      'more than 10,000 ids',
      Array.from({ length: MAX_BATCH_TASKS + 1 }, (_, i) => `n-${i}`),
      5_000,
      'got 10001',
    ],
    ['a ttl_ms of 0', ['t'], 0, 'ttlMs must be a positive integer'],
    ['a ttl_ms above maxSlotTtlMs', ['t'], 60_001, 'ttlMs must be <= maxSlotTtlMs (60000)'],
  ])('refuses the whole call with %s → INVALID_ARGUMENT', async (_name, ids, ttlMs, mentions) => {
    const r = await rejection(requestTaskSlots(f!.client, ids, ttlMs));
    expect(r).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, business: 'InvalidArgument' });
    expect(r.message).toContain(mentions);
  });
});
