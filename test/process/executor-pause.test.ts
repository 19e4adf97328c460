// A Worker paused (SIGSTOP) for longer than executor.heartbeatTimeoutMs and resumed (SIGCONT) keeps its
// healthy Executor: same pid, no restart, no "killing it" log line; a task in flight across the pause
// and a task submitted after it both succeed (issue 14: before the fix the resumed worker read its
// heartbeat clock before the heartbeats queued on the socket, killed the Executor and re-ran its calls).
// Runs the built CLI (`blockx worker`) as its own process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { callListTask, outputsOf, submit, terminalOf } from '../support/worker-tasks.js';
import { alive, ensureBuilt, spawnWorker, type SpawnedWorker } from './worker-health-harness.js';

const SLEEPY = `export default (ctx, ms) => new Promise((resolve) => setTimeout(() => resolve('slept ' + ms), ms));\n`;
const PAUSE_MS = 3_000;

let w: SpawnedWorker | undefined;

beforeAll(async () => {
  ensureBuilt();
  w = await spawnWorker({
    functions: { 'sleepy.mjs': SLEEPY },
    executor: { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 1_000 },
  });
  await eventually(() => (w?.executorPids.length ?? 0) > 0, {
    timeoutMs: 10_000,
    message: 'the executor ready log line',
  });
});

afterAll(async () => {
  w?.client.close();
  await w?.stop();
});

describe('a worker paused longer than the executor heartbeat timeout', () => {
  it('keeps its executor and finishes the task in flight and the next one', async () => {
    const { child, client, executorPids, output } = w!;
    const executorPid = executorPids[0]!;
    expect(alive(executorPid)).toBe(true);

    // In flight across the pause: the call finishes on the executor while the worker is stopped.
    expect((await submit(client, callListTask('across', 'sleepy', [[500], [800]]))).state).toBe(
      'TASK_STATE_RUNNING',
    );
    const across = terminalOf(client, 'across', 30_000);
    process.kill(child.pid!, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, PAUSE_MS));
    process.kill(child.pid!, 'SIGCONT');

    const first = await across;
    expect(first.state, output.text()).toBe('SUCCEEDED');
    expect(outputsOf(first)).toEqual(['slept 500', 'slept 800']);

    expect((await submit(client, callListTask('after', 'sleepy', [[10]]))).state).toBe('TASK_STATE_RUNNING');
    const second = await terminalOf(client, 'after', 30_000);
    expect(second.state, output.text()).toBe('SUCCEEDED');

    // Give a wrongly-killed executor time to show up as a second "executor ready".
    await new Promise((r) => setTimeout(r, 1_500));
    const log = output.text();
    expect(executorPids, log).toEqual([executorPid]);
    expect(alive(executorPid)).toBe(true);
    expect(log).not.toMatch(/killing it|executor lost/);
    expect(log).toMatch(/event loop did not run for \d+ ms/);
  });
});
