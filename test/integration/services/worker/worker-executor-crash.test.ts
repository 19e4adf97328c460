// An executor killed with SIGKILL in the middle of a task, behind a real Worker over real gRPC: the
// link reports the loss, the dispatcher fails the attempts that were at the executor (retryable,
// executor_crash), the supervisor starts a new executor, and the calls are retried there. The task
// ends SUCCEEDED — or FAILED with retryable=true — within a bounded time; it never hangs.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eventually } from '../../../support/eventually.js';
import { killExecutor, startWorkerWithExecutor, type WorkerWithExecutor } from './worker-executor-harness.js';
import {
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

let functionsDir = '';
let w: WorkerWithExecutor | undefined;

beforeAll(async () => {
  functionsDir = makeFunctionsDir({ 'sleepy.mjs': SLEEPY });
  w = await startWorkerWithExecutor({
    functionsDir,
    // 16 calls at a time, so the kill finds a batch in flight and more still to send.
    worker: { taskMaxInflightCalls: 16 },
    executor: { threads: 2, restartBackoffInitialMs: 100 },
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

describe('executor killed with SIGKILL mid-task', () => {
  it('retries the lost calls on the restarted executor; the task never hangs', async () => {
    if (w === undefined) throw new Error('worker not started');
    const { client, ports } = w;
    const firstPid = ports.supervisor.pid;
    expect(firstPid).toBeGreaterThan(0);
    const n = 120;
    await submit(
      client,
      callListTask(
        'killed-mid-task',
        'sleepy',
        Array.from({ length: n }, () => [50]),
      ),
    );
    const terminal = terminalOf(client, 'killed-mid-task', 45_000);
    // Kill once some calls are done and others are at the executor.
    await eventually(
      () => {
        const s = ports.callRunner.core.taskStats('killed-mid-task');
        return s !== undefined && s.rootsSucceeded >= 16 && s.inflight > 0;
      },
      { timeoutMs: 20_000, message: 'calls in flight mid-task' },
    );
    const inflightAtKill = ports.callRunner.core.taskStats('killed-mid-task')?.inflight ?? 0;
    const retriesBefore = ports.callRunner.stats().retries;
    process.kill(firstPid!, 'SIGKILL');

    const last = await terminal;
    if (last.state === 'FAILED') {
      // Allowed by the contract, but only as a retryable failure (the client may resubmit).
      expect(last.result?.executeResult.retryable).toBe(true);
    } else {
      expect(last.state).toBe('SUCCEEDED');
      expect(outputsOf(last)).toEqual(Array.from({ length: n }, () => 'slept 50'));
    }
    // A new executor process took over, and the calls lost with the old one were sent again.
    expect(ports.supervisor.starts).toBeGreaterThanOrEqual(2);
    expect(ports.supervisor.pid).not.toBe(firstPid);
    expect(inflightAtKill).toBeGreaterThan(0);
    expect(ports.callRunner.stats().retries - retriesBefore).toBeGreaterThanOrEqual(inflightAtKill);
    expect(w.logs.some((l) => l.includes('executor lost'))).toBe(true);
  });
});
