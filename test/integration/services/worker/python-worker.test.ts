// Python functions on a Worker (docs/executor.md § Python functions on a Worker), behind a real Worker
// over real gRPC: both executors run, each call goes to the executor of its function's language
// (subcalls across languages too), ctx.io from Python goes through the task read cache, one name in two
// languages is a load error, a SIGKILLed Python executor is restarted and its calls retried, and a
// spinning Python call is cut off without stalling another task.
import { writeFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../../../src/kernel/config.js';
import {
  createExecutorPorts,
  type ExecutorPorts,
} from '../../../../src/services/call-host/adapters/executor-ports.js';
import { tsxExecutorCommand } from '../../../../src/services/call-host/adapters/executor-supervisor.js';
import { eventually } from '../../../support/eventually.js';
import {
  callListTask,
  makeFunctionsDir,
  outputsOf,
  REPO,
  removeDir,
  submit,
  terminalOf,
} from '../../../support/worker-tasks.js';
import {
  collectingLogger,
  killExecutors,
  startPythonWorker,
  type PythonWorker,
} from './python-worker-harness.js';

// Two real executor processes (one under tsx): the bounds of the other executor integration files.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const PY = {
  'greet.py': 'async def main(ctx, name):\n    return "hello, %s" % name\n',
  // JS → Python → JS: each level reports who ran it.
  'outer.ts': 'export default async (ctx, x) => ({ js: x, inner: await ctx.call("middle", x + 1) });\n',
  'middle.py': 'async def main(ctx, x):\n    return {"py": x, "leaf": await ctx.call("leaf", x + 1)}\n',
  'leaf.ts': 'export default (ctx, x) => `leaf ${x}`;\n',
  'miner_of.py':
    'async def main(ctx, number):\n' +
    '    row = await ctx.io.get("blocks", {"chain_id": 1, "number": number, "hash": "0x%02x" % number})\n' +
    '    return None if row is None else row["miner"]\n',
  'nap.py':
    'import asyncio\n\nasync def main(ctx, ms):\n    await asyncio.sleep(ms / 1000)\n    return "napped %d" % ms\n',
  // Waits on `naps` subcalls (time that does not count against its budget), then calls `late_name`
  // (which exists in two languages by then).
  'late_caller.py':
    'async def main(ctx, naps):\n' +
    '    for _ in range(naps):\n' +
    '        await ctx.call("nap", 900)\n' +
    '    return await ctx.call("late_name", "x")\n',
  'late_name.py': 'def main(ctx, x):\n    return "python %s" % x\n',
  'spin.py': 'def main(ctx):\n    while True:\n        pass\n',
};

let functionsDir = '';
let w: PythonWorker | undefined;

beforeAll(async () => {
  functionsDir = makeFunctionsDir(PY);
  w = await startPythonWorker({
    functionsDir,
    worker: {
      taskMaxInflightCalls: 16,
      callDeadlineMs: 1_500,
      callRetry: {
        maxAttempts: 3,
        initialBackoffMs: 50,
        maxBackoffMs: 200,
        retryOn: ['executor_crash', 'deadline', 'io', 'user'],
      },
    },
    executor: { threads: 2, restartBackoffInitialMs: 100, cancelHardLimitMs: 500 },
  });
  const rows = [5, 6].map((n) => ({
    chain_id: 1,
    number: n,
    hash: `0x0${n}`,
    parent_hash: '0x00',
    timestamp: 1_700_000_000 + n,
    miner: `miner-${n}`,
    gas_used: 0,
    gas_limit: 0,
    tx_count: 0,
    canonical: true,
  }));
  await w.storage.backend.transaction((tx) => tx.insertRows('blocks', rows));
});

afterAll(async () => {
  try {
    await w?.close();
  } finally {
    killExecutors(w);
    removeDir(functionsDir);
  }
});

/** Both executors over `dir` without a Worker around them (no storage), logging into `logs`. */
function executorPortsOn(dir: string, logs: string[]): ExecutorPorts {
  const config = loadConfig({
    configPath: path.join(REPO, 'blockx.config.yaml'),
    cwd: REPO,
    env: { BLOCKX_FUNCTIONS_DIR: dir, BLOCKX_LOG_LEVEL: 'warn' },
    deployments: ['block'],
  });
  return createExecutorPorts({
    config,
    deployment: 'block',
    functionsDir: dir,
    executorCommand: tsxExecutorCommand(),
    logger: collectingLogger(logs),
  });
}

const started = (): PythonWorker => {
  if (w === undefined) throw new Error('worker not started');
  return w;
};

describe('a Worker with JS and Python functions', () => {
  it('started the Python executor at start, because the folder holds .py functions', () => {
    const { ports } = started();
    expect(ports.pythonStarted).toBe(true);
    expect(ports.pythonSupervisor?.ready).toBe(true);
    expect(ports.supervisor.ready).toBe(true);
  });

  it('runs a task of a Python function through the Worker’s gRPC', async () => {
    const { client } = started();
    await submit(client, callListTask('py-greet', 'greet', [['ct2'], ['blockx']]));
    const last = await terminalOf(client, 'py-greet');
    expect(last.state).toBe('SUCCEEDED');
    expect(outputsOf(last)).toEqual(['hello, ct2', 'hello, blockx']);
  });

  it('a JS function calls a Python one, which calls a JS one back', async () => {
    const { client } = started();
    await submit(client, callListTask('js-py-js', 'outer', [[1], [10]]));
    const last = await terminalOf(client, 'js-py-js');
    expect(last.state).toBe('SUCCEEDED');
    expect(outputsOf(last)).toEqual([
      { js: 1, inner: { py: 2, leaf: 'leaf 3' } },
      { js: 10, inner: { py: 11, leaf: 'leaf 12' } },
    ]);
  });

  it('serves ctx.io reads from Python through the task read cache', async () => {
    const { client, factory } = started();
    const before = factory.stats();
    const n = 20;
    await submit(
      client,
      callListTask(
        'py-io',
        'miner_of',
        Array.from({ length: n }, (_, i) => [i % 2 === 0 ? 5 : 6]),
      ),
    );
    const last = await terminalOf(client, 'py-io');
    expect(last.state).toBe('SUCCEEDED');
    expect(outputsOf(last)).toEqual(
      Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 'miner-5' : 'miner-6')),
    );
    const after = await eventually(() => {
      const s = factory.stats();
      return s.openScopes === 0 ? s : false;
    });
    // Two distinct keys: two misses, every other read a hit (the Worker's cache or the read copies).
    expect(after.cacheMisses - before.cacheMisses).toBe(2);
    expect(after.cacheHits - before.cacheHits).toBe(n - 2);
  });

  it('a name that appears in a second language: new tasks fail with a load error, running ones keep their epoch', async () => {
    const { client, logs } = started();
    // Pinned before the collision: its late subcall of late_name still runs the Python one.
    await submit(client, callListTask('before-collision', 'late_caller', [[3]]));
    const beforeTerminal = terminalOf(client, 'before-collision');
    await eventually(
      () => (started().ports.callRunner.core.taskStats('before-collision')?.inflight ?? 0) > 0,
      {
        message: 'the first task running',
      },
    );
    const jsTwin = path.join(functionsDir, 'late_name.ts');
    writeFileSync(jsTwin, 'export default () => "js";\n');
    try {
      // Reported when the folder changes, naming both files.
      await eventually(
        () => logs.some((l) => l.startsWith('error') && l.includes('late_name.py, late_name.ts')),
        {
          timeoutMs: 5_000,
          message: 'the collision error logged',
        },
      );
      await submit(client, callListTask('after-collision', 'late_name', [['y']]));
      const after = await terminalOf(client, 'after-collision');
      expect(after.state).toBe('FAILED');
      expect(after.result?.executeResult.retryable).toBe(false);
      const message = JSON.stringify(after.result);
      expect(message).toContain('function \\"late_name\\" is defined in two languages');
      expect(message).toContain('late_name.py, late_name.ts');
      const before = await beforeTerminal;
      expect(before.state).toBe('SUCCEEDED');
      expect(outputsOf(before)).toEqual(['python x']);
    } finally {
      unlinkSync(jsTwin);
    }
  });

  it('a SIGKILLed Python executor is restarted; its calls are retried and the task succeeds', async () => {
    const { client, ports } = started();
    const py = ports.pythonSupervisor!;
    const firstPid = py.pid!;
    const jsPid = ports.supervisor.pid;
    const startsBefore = py.starts;
    const n = 60;
    const calls = Array.from({ length: n }, () => [100]);
    await submit(client, callListTask('py-killed', 'nap', calls));
    const terminal = terminalOf(client, 'py-killed', 45_000);
    await eventually(
      () => {
        const s = ports.callRunner.core.taskStats('py-killed');
        return s !== undefined && s.rootsSucceeded >= 8 && s.inflight > 0;
      },
      { timeoutMs: 20_000, message: 'Python calls in flight mid-task' },
    );
    process.kill(firstPid, 'SIGKILL');
    const last = await terminal;
    expect(last.state).toBe('SUCCEEDED');
    expect(outputsOf(last)).toEqual(Array.from({ length: n }, () => 'napped 100'));
    expect(py.starts).toBe(startsBefore + 1);
    expect(py.pid).not.toBe(firstPid);
    expect(ports.supervisor.pid).toBe(jsPid); // the JS executor was not touched
    await eventually(() => py.ready, { message: 'the Python executor ready again' });
  });

  it('cuts off a `while True:` Python call without stalling another task', async () => {
    const { client } = started();
    await submit(client, callListTask('py-spin', 'spin', [[]]));
    const spinning = terminalOf(client, 'py-spin', 45_000);
    await eventually(() => (started().ports.callRunner.core.taskStats('py-spin')?.inflight ?? 0) > 0, {
      message: 'the spinning call sent',
    });
    // Give the executor's main process time to see the unit is stuck (it judges after 50 ms of silence):
    // calls sent at the very same moment may land on the spinning unit before that.
    const sentAt = performance.now();
    await eventually(() => performance.now() - sentAt >= 250, { message: 'the spin judged stuck' });
    const t0 = performance.now();
    await submit(client, callListTask('py-beside-spin', 'greet', [['a'], ['b'], ['c']]));
    const beside = await terminalOf(client, 'py-beside-spin');
    expect(beside.state).toBe('SUCCEEDED');
    expect(outputsOf(beside)).toEqual(['hello, a', 'hello, b', 'hello, c']);
    expect(beside.arrivedAt - t0).toBeLessThan(1_500); // well inside one spin's budget
    const spun = await spinning;
    expect(spun.state).toBe('FAILED');
    expect(JSON.stringify(spun.result)).toContain('deadline');
    expect(beside.arrivedAt).toBeLessThan(spun.arrivedAt);
  });
});

describe('a collision present at worker start', () => {
  it('is logged at start naming both files; the worker starts and serves the other functions', async () => {
    const dir = makeFunctionsDir({
      'twice.ts': 'export default () => 1;\n',
      'twice.py': 'def main(ctx):\n    return 2\n',
    });
    const logs: string[] = [];
    const ports = executorPortsOn(dir, logs);
    try {
      await ports.start();
      const errors = logs.filter((l) => l.startsWith('error'));
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(
        `function "twice" is defined in two languages in ${dir}: twice.py, twice.ts`,
      );
      await ports.whenReady();
      const pin = await ports.codeEpochs.pin();
      const signal = new AbortController().signal;
      const outcome = await ports.callRunner.run(
        { taskId: 'start-collision', codeEpoch: pin.epoch, deadlineMs: Date.now() + 20_000, signal },
        [
          { function: 'hello_world', args: ['x'] },
          { function: 'twice', args: [] },
        ],
      );
      pin.release();
      expect(outcome).toMatchObject({ success: false, retryable: false });
      expect(outcome.message).toContain('twice.py, twice.ts');
      expect(logs.filter((l) => l.startsWith('error'))).toHaveLength(1); // once per epoch, not per call
    } finally {
      await ports.close();
      removeDir(dir);
    }
  });
});

describe('a Worker whose folder gets its first .py function while it runs', () => {
  it('starts the Python executor then, without closing admissions', async () => {
    const dir = makeFunctionsDir({});
    const logs: string[] = [];
    const ports = executorPortsOn(dir, logs);
    const readiness: string[] = [];
    const unsubscribe = ports.executorReadiness.subscribe((e) => readiness.push(e.type));
    try {
      await ports.start();
      await ports.whenReady();
      expect(ports.pythonStarted).toBe(false);
      expect(ports.pythonSupervisor?.pid).toBeUndefined();
      writeFileSync(path.join(dir, 'late.py'), 'def main(ctx, x):\n    return ["late", x]\n');
      const signal = new AbortController().signal;
      // A task pins the folder as the code view last saw it (stat TTL 250 ms): retried until it sees late.py.
      const outcome = await eventually(
        async () => {
          const pin = await ports.codeEpochs.pin();
          try {
            const o = await ports.callRunner.run(
              { taskId: `lazy-${Date.now()}`, codeEpoch: pin.epoch, deadlineMs: Date.now() + 20_000, signal },
              [
                { function: 'late', args: [1] },
                { function: 'hello_world', args: ['x'] },
              ],
            );
            return o.success ? o : false;
          } finally {
            pin.release();
          }
        },
        { timeoutMs: 20_000, intervalMs: 100, message: 'the call of the first Python function' },
      );
      expect(outcome.outputs).toEqual([['late', 1], 'hello, x']);
      expect(ports.pythonStarted).toBe(true);
      expect(readiness).not.toContain('lost'); // admissions stayed open while Python started
    } finally {
      unsubscribe();
      await ports.close();
      removeDir(dir);
    }
  });
});
