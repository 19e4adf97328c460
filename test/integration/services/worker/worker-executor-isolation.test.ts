// Issue 16, item 6 ("tasks isolated from each other"), against a real Worker and a real Executor child
// (worker-executor-harness.ts: runWorker + createExecutorPorts, the executor from src/ under tsx). Every
// probe of the issue is replayed (docs/security.md, "Task isolation"):
//  - task A pollutes Object.prototype, the global object and its module's state; task B, later on the
//    same execution thread, sees none of it (and with executor.isolation none it does: the probe works);
//  - relative TypeScript helpers and node_modules still load under isolation;
//  - a thread holding more off-heap memory than executor.threadMemoryMb, or over its heap limit, is
//    terminated and the task fails with EXECUTOR_MEMORY_LIMIT; the executor keeps serving;
//  - exponential ctx.call fan-out and a long subcall chain fail the task with CALL_BUDGET_EXCEEDED;
//  - thrown Proxies, prototype-less objects and other hostile values fail their call promptly.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FunctionCodeView } from '../../../../src/executor/code-epochs.js';
import type { TaskUpdate } from '../../../../src/grpc/domain-types.js';
import { ExecutorHarness } from '../../executor/executor-harness.js';
import { killExecutor, startWorkerWithExecutor, type WorkerWithExecutor } from './worker-executor-harness.js';
import { callListTask, outputsOf, submit, terminalOf } from '../../../support/worker-tasks.js';

// Real executor processes started from src/ under tsx: the bounds these tests had in the process tier.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const FUNCTIONS = fileURLToPath(new URL('../../../fixtures/isolation-functions/', import.meta.url)).replace(
  /\/$/,
  '',
);

let isolated: WorkerWithExecutor | undefined;
let open: WorkerWithExecutor | undefined;
let seq = 0;

beforeAll(async () => {
  // One execution thread, so task B's call runs on the thread task A polluted.
  isolated = await startWorkerWithExecutor({
    functionsDir: FUNCTIONS,
    worker: {
      callDeadlineMs: 20_000,
      taskMaxPendingSubcalls: 200,
      taskMaxCallAttempts: 2_000,
      callRetry: {
        maxAttempts: 2,
        initialBackoffMs: 20,
        maxBackoffMs: 100,
        retryOn: ['executor_crash', 'deadline', 'io', 'user'],
      },
    },
    // The signal guard is tested on its own: as PID 1 of a PID namespace (the default as root) the kernel
    // drops these signals anyway, the Executor's own included (test/integration/executor/pid-namespace.test.ts).
    executor: {
      threads: 1,
      isolation: 'task',
      threadHeapMb: 128,
      threadMemoryMb: 256,
      maxRssMb: 0,
      pidNamespace: false,
    },
  });
  open = await startWorkerWithExecutor({
    functionsDir: FUNCTIONS,
    executor: { threads: 1, isolation: 'none', pidNamespace: false },
  });
}, 90_000);

afterAll(async () => {
  for (const w of [isolated, open]) {
    try {
      await w?.close();
    } finally {
      killExecutor(w);
    }
  }
});

async function runTask(
  w: WorkerWithExecutor | undefined,
  fn: string,
  callList: unknown[][],
  timeoutMs = 60_000,
): Promise<TaskUpdate & { arrivedAt: number; tookMs: number }> {
  if (w === undefined) throw new Error('worker not started');
  const taskId = `iso-${fn}-${++seq}`;
  const started = performance.now();
  await submit(w.client, callListTask(taskId, fn, callList));
  const last = await terminalOf(w.client, taskId, timeoutMs);
  return { ...last, tookMs: last.arrivedAt - started };
}

describe('task isolation on one execution thread', () => {
  it('isolation task: Object.prototype, new globals and module state do not reach the next task', async () => {
    const a = await runTask(isolated, 'probe', [['pollute'], ['pollute']]);
    expect(a.state).toBe('SUCCEEDED');
    // Both calls of task A share its instance (counter 1 then 2); the writes are refused.
    expect(outputsOf(a)).toEqual([
      { counter: 1, proto: 'TypeError', global: 'TypeError' },
      { counter: 2, proto: 'TypeError', global: 'TypeError' },
    ]);
    const b = await runTask(isolated, 'probe', [['peek']]);
    expect(b.state).toBe('SUCCEEDED');
    expect(outputsOf(b)).toEqual([{ pwned: null, stash: null, counter: 1 }]);
  });

  it('isolation none: the same probe leaks from task A to task B (so the test above can fail)', async () => {
    const a = await runTask(open, 'probe', [['pollute']]);
    expect(outputsOf(a)).toEqual([{ counter: 1, proto: 'set', global: 'set' }]);
    const b = await runTask(open, 'probe', [['peek']]);
    expect(outputsOf(b)).toEqual([{ pwned: a.taskId, stash: a.taskId, counter: 2 }]);
  });

  it('relative TypeScript helpers, node_modules and overriding inherited methods still work', async () => {
    const t = await runTask(isolated, 'uses_imports', [[21]]);
    expect(t.state, JSON.stringify(t.result?.executeResult)).toBe('SUCCEEDED');
    expect(outputsOf(t)).toEqual([
      { twice: 42, yaml: { a: 1, b: ['x', 'y'] }, tagged: 'tagged', own: 'own', url: '/p' },
    ]);
  });
});

describe('a function may not signal its own Executor (docs/security.md § Task isolation)', () => {
  it('isolation task: process.kill at the Executor, a thread of it, its group, 0, -1 or the Worker is EPERM; its own child is not', async () => {
    const pid = isolated!.ports.supervisor.pid;
    const targets = ['self', 'thread', 'group', 'all-in-group', 'everything', 'worker', 'restore', 'child'];
    const t = await runTask(
      isolated,
      'signals',
      targets.map((target) => [target]),
    );
    expect(t.state, JSON.stringify(t.result?.executeResult)).toBe('SUCCEEDED');
    expect(outputsOf(t)).toEqual([
      'EPERM',
      'EPERM',
      'EPERM',
      'EPERM',
      'EPERM',
      'EPERM',
      'TypeError',
      'sent SIGKILL',
    ]);
    // The same Executor process serves on.
    const after = await runTask(isolated, 'signals', [['alive']]);
    expect(outputsOf(after)).toEqual([pid]);
    expect(isolated!.ports.supervisor.pid).toBe(pid);
  });

  it('isolation none: the same call ends the Executor (so the test above can fail)', async () => {
    const pid = open!.ports.supervisor.pid;
    const t = await runTask(open, 'signals', [['self']]);
    // The call's Executor died under it: the call failed (or ran again on the new one), and the pid changed.
    expect(t.state === 'FAILED' || outputsOf(t) !== undefined).toBe(true);
    await vi.waitFor(() => expect(open!.ports.supervisor.pid).not.toBe(pid), { timeout: 30_000 });
  });
});

describe('memory bound', () => {
  it('a call holding 512 MiB of Buffer (threadMemoryMb 256) fails EXECUTOR_MEMORY_LIMIT; the executor serves on', async () => {
    const pid = isolated!.ports.supervisor.pid;
    const t = await runTask(isolated, 'alloc', [[512, 30_000]]);
    expect(t.state).toBe('FAILED');
    expect(t.result?.executeResult.failureCode).toBe('CALL_FAILED');
    expect(t.result?.executeResult.failureMessage).toContain('EXECUTOR_MEMORY_LIMIT');
    expect(t.result?.executeResult.failureMessage).toContain('executor.threadMemoryMb');
    expect(t.tookMs).toBeLessThan(15_000); // not the 30 s the call would hold it
    expect(isolated!.ports.supervisor.pid).toBe(pid); // the thread went, not the process
    const ok = await runTask(isolated, 'alloc', [[16, 10]]);
    expect(outputsOf(ok)).toEqual([16 * 2 ** 20]);
  });

  it('a call growing the V8 heap past threadHeapMb fails EXECUTOR_MEMORY_LIMIT', async () => {
    const t = await runTask(isolated, 'heap_hog', [[]]);
    expect(t.state).toBe('FAILED');
    expect(t.result?.executeResult.failureMessage).toContain('EXECUTOR_MEMORY_LIMIT');
    const ok = await runTask(isolated, 'leaf', [[]]);
    expect(outputsOf(ok)).toEqual([1]);
  });
});

describe('memory bound: the executor RSS', () => {
  it('over executor.maxRssMb, the thread holding the most is terminated: EXECUTOR_MEMORY_LIMIT', async () => {
    // 1 MiB: any executor is over it, so the first sweep terminates the only thread (its call with it).
    const view = new FunctionCodeView({ dir: FUNCTIONS });
    const h = new ExecutorHarness({
      functionsDir: FUNCTIONS,
      epochs: view,
      threads: 1,
      maxRssMb: 1,
      threadMemoryMb: 0,
    });
    try {
      await h.start();
      const ev = await h.run({ function: 'alloc', args: [1, 20_000], codeEpoch: await view.currentEpoch() });
      expect(ev).toMatchObject({
        type: 'callFailed',
        kind: 'executor_crash',
        retryable: true,
        code: 'EXECUTOR_MEMORY_LIMIT',
      });
      expect(ev.type === 'callFailed' && ev.message).toContain('over executor.maxRssMb (1)');
      expect(h.supervisor.starts).toBe(1); // a thread went, not the executor
    } finally {
      await h.stop();
    }
  });
});

describe('per-task call budget', () => {
  it('exponential ctx.call fan-out fails the task CALL_BUDGET_EXCEEDED at taskMaxPendingSubcalls', async () => {
    const t = await runTask(isolated, 'fanout', [[24]]);
    expect(t.state).toBe('FAILED');
    expect(t.result?.executeResult).toMatchObject({ failureCode: 'CALL_BUDGET_EXCEEDED', retryable: false });
    expect(t.result?.executeResult.failureMessage).toContain('worker.taskMaxPendingSubcalls (200)');
    expect(t.tookMs).toBeLessThan(15_000);
    // The fan-out's calls were cancelled: nothing of that task is left at the executor.
    expect(isolated!.ports.callRunner.core.taskStats(t.taskId)).toBeUndefined();
    const ok = await runTask(isolated, 'fanout', [[3]]);
    expect(outputsOf(ok)).toEqual([8]);
  });

  it('a long subcall chain fails the task CALL_BUDGET_EXCEEDED at taskMaxCallAttempts', async () => {
    const t = await runTask(isolated, 'chain', [[5_000]]);
    expect(t.state).toBe('FAILED');
    expect(t.result?.executeResult).toMatchObject({ failureCode: 'CALL_BUDGET_EXCEEDED', retryable: false });
    expect(t.result?.executeResult.failureMessage).toContain('worker.taskMaxCallAttempts (2000)');
    const ok = await runTask(isolated, 'chain', [[10]]);
    expect(outputsOf(ok)).toEqual([10]);
  });
});

describe('hostile thrown values fail their call promptly', () => {
  it.each([
    ['proxy', 'threw a Proxy'],
    ['proxy-sync', 'threw a Proxy'],
    ['revoked', 'threw a Proxy'],
    ['null-proto', 'non-Error value ([object Object])'],
    ['getters', 'non-Error value ([object Object])'],
    ['symbol', 'Symbol(thrown)'],
    ['return-proxy', 'not JSON-serialisable'],
    ['return-then-proxy', 'non-Error value ([object Object])'],
  ])('%s → CALL_FAILED naming it, well within the 20 s budget', async (mode, text) => {
    const t = await runTask(isolated, 'throws', [[mode]]);
    expect(t.state).toBe('FAILED');
    expect(t.result?.executeResult.failureCode).toBe('CALL_FAILED');
    expect(t.result?.executeResult.failureMessage).toContain(text);
    expect(t.tookMs).toBeLessThan(5_000);
  });
});
