// The Worker's real Calls path, over real gRPC: runWorker in this process with createExecutorPorts
// (dispatcher + ExecutorLink + a supervised executor child from src/ under tsx). Covers
// docs/task-lifecycle.md's hello_world example end to end, a hot loop cut off at its call deadline without
// stalling another task, and a function edited while a task runs (that task keeps its pinned code epoch).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { taskInputToWire } from '../../../../src/grpc/convert.js';
import { eventually } from '../../../support/eventually.js';
import { killExecutor, startWorkerWithExecutor, type WorkerWithExecutor } from './worker-executor-harness.js';
import {
  REPO,
  callListTask,
  makeFunctionsDir,
  outputsOf,
  removeDir,
  SLEEPY,
  submit,
  terminalOf,
} from '../../../support/worker-tasks.js';

// Real executor processes started from src/ under tsx: the bounds these tests had in the process tier.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const SPIN = `export default function spin() { for (;;) { /* ignores ctx.signal */ } }\n`;
const version = (v: string) =>
  `export default (ctx, ms) => new Promise((resolve) => setTimeout(() => resolve('${v}'), ms));\n`;

let functionsDir = '';
let w: WorkerWithExecutor | undefined;

beforeAll(async () => {
  functionsDir = makeFunctionsDir({ 'sleepy.mjs': SLEEPY, 'spin.mjs': SPIN, 'version.mjs': version('v1') });
  w = await startWorkerWithExecutor({
    functionsDir,
    // A small budget so the hot loop is cut off quickly; a small cap so a task's calls go out over time.
    worker: {
      callDeadlineMs: 500,
      taskMaxInflightCalls: 4,
      callRetry: {
        maxAttempts: 2,
        initialBackoffMs: 20,
        maxBackoffMs: 100,
        retryOn: ['executor_crash', 'deadline', 'io', 'user'],
      },
    },
    executor: { threads: 2, cancelHardLimitMs: 300 },
  });
});

afterAll(async () => {
  try {
    await w?.close();
  } finally {
    killExecutor(w);
    removeDir(functionsDir);
  }
});

function worker(): WorkerWithExecutor {
  if (w === undefined) throw new Error('worker not started');
  return w;
}

describe('worker → executor over real gRPC', () => {
  it('runs examples/tasks/hello-world.json: SUCCEEDED with ["hello, ct2", "hello, blockx"]', async () => {
    const { client, worker: running, ports } = worker();
    const example = JSON.parse(readFileSync(path.join(REPO, 'examples/tasks/hello-world.json'), 'utf8')) as {
      task_id: string;
      functionCallConfig: { type: string; config: unknown };
      resultHandler: { type: string; config: unknown };
      taskTimeoutMs: number;
    };
    const task = taskInputToWire({
      taskId: example.task_id,
      functionCallConfig: example.functionCallConfig,
      resultHandler: example.resultHandler,
      taskTimeoutMs: example.taskTimeoutMs,
    });
    const attemptsBefore = ports.callRunner.stats().attempts;
    expect((await submit(client, task)).state).toBe('TASK_STATE_RUNNING');
    const last = await terminalOf(client, example.task_id);
    expect(last).toMatchObject({ taskId: example.task_id, state: 'SUCCEEDED', workerAddr: running.address });
    expect(last.result?.executeResult.pluginResults[0]).toMatchObject({
      pluginName: 'ReturnValueResultHandler',
      success: true,
    });
    expect(outputsOf(last)).toEqual(['hello, ct2', 'hello, blockx']);
    // It really went through the dispatcher and the executor (not an in-process runner).
    expect(ports.callRunner.stats().attempts - attemptsBefore).toBe(2);
    expect(ports.supervisor.pid).toBeGreaterThan(0);
  });

  it('an unknown function fails the task CALL_FAILED, not retryable, naming the function', async () => {
    const { client } = worker();
    await submit(client, callListTask('missing-fn', 'no_such_function', [[1]]));
    const last = await terminalOf(client, 'missing-fn');
    expect(last.state).toBe('FAILED');
    expect(last.result?.executeResult).toMatchObject({ failureCode: 'CALL_FAILED', retryable: false });
    expect(last.result?.executeResult.failureMessage).toContain('no_such_function');
  });

  it('cuts a while(true) call off at its call deadline without stalling a task running beside it', async () => {
    const { client, ports } = worker();
    const started = performance.now();
    const deadlinesBefore = ports.callRunner.stats().deadlinesExpired;
    await submit(client, callListTask('hot-loop', 'spin', [[]]));
    const hotTerminal = terminalOf(client, 'hot-loop');
    await eventually(() => (ports.callRunner.core.taskStats('hot-loop')?.inflight ?? 0) > 0, {
      timeoutMs: 10_000,
      message: 'spin dispatched',
    });
    // The neighbour's call goes to the executor thread that is not spinning (the executor routes a call
    // to the thread with the fewest running calls) and finishes while the hot loop still spins.
    // (Calls routed onto the spinning thread itself would wait until that thread is terminated: the
    // executor's routing does not yet avoid a thread whose event loop is blocked; see the report.)
    await submit(client, callListTask('beside-hot-loop', 'sleepy', [[20]]));
    const beside = await terminalOf(client, 'beside-hot-loop');
    expect(beside.state).toBe('SUCCEEDED');
    expect(outputsOf(beside)).toEqual(['slept 20']);
    expect(ports.callRunner.core.taskStats('hot-loop')).toBeDefined(); // still spinning meanwhile
    const hot = await hotTerminal;
    expect(beside.arrivedAt).toBeLessThan(hot.arrivedAt);
    // The hot loop: 2 attempts, each cut off at its 500 ms budget → CALL_FAILED (deadline), bounded in time.
    expect(hot.state).toBe('FAILED');
    expect(hot.result?.executeResult.failureCode).toBe('CALL_FAILED');
    expect(hot.result?.executeResult.failureMessage).toContain('exceeded its execution budget of 500 ms');
    expect(hot.arrivedAt - started).toBeGreaterThanOrEqual(2 * 500);
    expect(hot.arrivedAt - started).toBeLessThan(15_000);
    expect(ports.callRunner.stats().deadlinesExpired - deadlinesBefore).toBe(2);
    // The executor terminated the spinning thread and carried on: fresh calls still run, on every thread.
    await submit(
      client,
      callListTask(
        'after-hot-loop',
        'hello_world',
        Array.from({ length: 8 }, (_, i) => [`n${i}`]),
      ),
    );
    expect(outputsOf(await terminalOf(client, 'after-hot-loop'))).toEqual(
      Array.from({ length: 8 }, (_, i) => `hello, n${i}`),
    );
  });

  it('a function edited while a task runs: that task finishes on the old code, the next one gets the new', async () => {
    const { client, ports } = worker();
    // 12 calls of 150 ms, 4 at a time: the task runs for ~450+ ms and dispatches calls after the edit.
    const calls = Array.from({ length: 12 }, () => [150]);
    await submit(client, callListTask('old-code', 'version', calls));
    await eventually(() => (ports.callRunner.core.taskStats('old-code')?.rootsSucceeded ?? 0) >= 1, {
      timeoutMs: 10_000,
      message: 'the first call of old-code',
    });
    writeFileSync(path.join(functionsDir, 'version.mjs'), version('v2'));
    const pendingAtEdit = ports.callRunner.core.taskStats('old-code')?.rootsPending ?? 0;
    expect(pendingAtEdit).toBeGreaterThan(0); // calls not yet sent when the file changed
    const old = await terminalOf(client, 'old-code');
    expect(old.state).toBe('SUCCEEDED');
    expect(outputsOf(old)).toEqual(calls.map(() => 'v1'));
    // The code view re-stats the folder at most every 250 ms: wait that out, then the next task.
    await new Promise((r) => setTimeout(r, 300));
    await submit(client, callListTask('new-code', 'version', [[1], [1]]));
    const fresh = await terminalOf(client, 'new-code');
    expect(outputsOf(fresh)).toEqual(['v2', 'v2']);
    // The old epoch was retired once no task pinned it: only the current one is left.
    await eventually(() => ports.codeView.epochs().length === 1, {
      timeoutMs: 5_000,
      message: 'the old epoch to retire',
    });
    expect(ports.codeView.epochs()[0]).toMatchObject({ current: true, pins: 0 });
  });
});
