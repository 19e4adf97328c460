// bench/calls: the Calls phase through Worker → Executor, side by side with its peers, in one run.
//
//   npx tsx bench/calls.ts [--calls 100000] [--tasks 100] [--task-calls 1000] [--task-slots 32]
//                          [--threads 2] [--executor built|tsx] [--runs 3]
//                          [--only worker|isolation|tenants|tenants-python|python-pidns|python|uds|piscina]
//
// Rows (no-op calls; the function is test/fixtures/functions/noop.ts, `async () => null`):
//  - dispatcher→executor, 1 task × 100,000 calls: ExecutorCallRunner.run (the Worker's dispatcher core
//    and executor link) → a real executor child process with `--threads` worker threads → back.
//  - dispatcher→executor, 100 tasks × 1,000 calls: the same, at most `--task-slots` tasks in their Calls
//    phase at once (the Worker's executorTaskSlots, 32), each with its own window and cap.
//  - worker over gRPC, 100 tasks × 1,000 calls: the whole Worker (runWorker in this process): SubmitTask
//    + WatchTasks per task from `--task-slots` concurrent clients, CallListCallConfig → Calls phase on
//    the executor → ReturnValueResultHandler; counts calls/s from first submit to last terminal update.
//  - raw UDS ping-pong: length-prefixed JSON frames (the executor's own codec) over a Unix socket with
//    1,024 in flight, echoed by this process: the transport alone, the ceiling of any socket executor.
//  - Piscina 5.3.2, 100,000 no-op tasks (default threads, and 2 threads). Not a dependency: installed
//    on demand into bench/.work/ (gitignored) with `npm install --prefix bench/.work piscina@5.3.2`.
//  - isolation: the two dispatcher→executor rows with `executor.isolation` none and task (SES lockdown,
//    frozen global, a module instance per task; docs/security.md, "Task isolation"), measured in turn in
//    the same run (none, task, none, task, …), and the per-call ratio task/none.
//  - tenants: the 100-task row with every task from one submitter and with two submitters alternating
//    (calls of different submitters never share an execution thread at once, docs/security.md § Task
//    isolation), in turn in one executor, and the ratio two/one. tenants-python: the same on the Python
//    executor (`def main(ctx): return None`), whose execution processes under isolation task serve one
//    submitter each in their life (a drained one is replaced by a fresh fork for the other submitter).
//    python-pidns: tenants-python with each execution process in a PID namespace of its own and without
//    (BLOCKX_PYTHON_PROCESS_PIDNS on / off), in turns off, on, on, off in one run.
//  - python (docs/executor.md § Python functions on a Worker): one Worker with both executors over one
//    functions folder (noop.ts and noop_py.py, `def main(ctx): return None`), 1 task × 100,000 calls of
//    each language through the same dispatcher and router, and the whole Worker over gRPC for each;
//    beside them the raw Python UDS ping-pong (bench/lib/python-pingpong.ts: Node ↔ a standard-library
//    Python echo of the executor's frames), the ceiling of any Python executor.
// Each row is warmed up, then measured `--runs` times; the table shows the median and the range.
//
// The executor command: `built` (`node bin/blockx.js executor`, needs `npm run build`) when dist/ is
// there, else `tsx` (from src/ under tsx). Goal (issue 4): ≥ 30,000 calls/s, and faster than Piscina.

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, connect } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FrameDecoder, FrameWriter } from '../src/executor/frame-codec.js';
import { createWorkerClient, unaryCall } from '../src/grpc/clients.js';
import { taskInputToWire, taskUpdateFromWire } from '../src/grpc/convert.js';
import type { WorkerServiceClient } from '../src/grpc/proto.js';
import type { SubmitTaskResponseWireOut, TaskUpdateWireOut } from '../src/grpc/wire-types.js';
import type { BlockxConfig } from '../src/kernel/config-types.js';
import { bootKernel, type Kernel } from '../src/kernel/kernel.js';
import type { CallSpec } from '../src/kernel/plugin-types.js';
import {
  createExecutorPorts,
  type ExecutorPorts,
} from '../src/services/call-host/adapters/executor-ports.js';
import {
  defaultExecutorCommand,
  tsxExecutorCommand,
} from '../src/services/call-host/adapters/executor-supervisor.js';
import { runWorker } from '../src/services/worker/app/run-worker.js';
import { BUILT } from './lib/built.js';
import { startPythonPingPong } from './lib/python-pingpong.js';
import { framePingPong } from './lib/frame-pingpong.js';

const REPO = path.resolve(import.meta.dirname, '..');
const WORK = path.join(REPO, 'bench', '.work');
const FUNCTIONS = path.join(REPO, 'test', 'fixtures', 'functions');
const PISCINA_VERSION = '5.3.2';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    tasks: { type: 'string', default: '100' },
    'task-calls': { type: 'string', default: '1000' },
    'task-slots': { type: 'string', default: '32' },
    threads: { type: 'string', default: '2' },
    executor: { type: 'string' },
    only: { type: 'string' },
    runs: { type: 'string', default: '3' },
  },
});
const CALLS = Number(values.calls);
const TASKS = Number(values.tasks);
const TASK_CALLS = Number(values['task-calls']);
const TASK_SLOTS = Number(values['task-slots']);
const THREADS = Number(values.threads);
const RUNS = Math.max(1, Number(values.runs));
const EXECUTOR = values.executor ?? (BUILT ? 'built' : 'tsx');

interface Row {
  readonly name: string;
  readonly calls: number;
  /** Wall time of each measured run. */
  readonly ms: readonly number[];
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** Warm up once, then measure `RUNS` times. */
async function measure(
  name: string,
  calls: number,
  warmup: () => Promise<unknown>,
  run: () => Promise<unknown>,
): Promise<Row> {
  await warmup();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await run();
    ms.push(performance.now() - start);
  }
  const row = { name, calls, ms };
  const rate = (calls / median(ms)) * 1000;
  console.error(`  ${name}: ${fmt(rate)} calls/s`);
  return row;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

// ---- Worker → Executor -----------------------------------------------------------------------------

async function withExecutor<T>(
  fn: (ports: ExecutorPorts, kernel: Kernel, config: BlockxConfig) => Promise<T>,
  isolation?: 'task' | 'none',
  functionsDir = FUNCTIONS,
  pythonPidns?: 'on' | 'off',
): Promise<T> {
  const kernel = await bootKernel({
    configPath: path.join(REPO, 'blockx.config.yaml'),
    cwd: REPO,
    env: { BLOCKX_FUNCTIONS_DIR: functionsDir, BLOCKX_LOG_LEVEL: 'error' },
    deployments: ['block'],
  });
  const dep = kernel.config.deployments.block!;
  const config: BlockxConfig = {
    ...kernel.config,
    deployments: {
      block: {
        ...dep,
        executor: {
          ...dep.executor,
          threads: THREADS,
          ...(isolation ? { isolation } : {}),
          ...(pythonPidns ? { passEnv: [...dep.executor.passEnv, PIDNS_ENV] } : {}),
        },
      },
    },
  };
  const ports = createExecutorPorts({
    config,
    deployment: 'block',
    functionsDir,
    ...(pythonPidns ? { env: { ...process.env, [PIDNS_ENV]: pythonPidns } } : {}),
    executorCommand: EXECUTOR === 'built' ? defaultExecutorCommand() : tsxExecutorCommand(),
  });
  await ports.start();
  try {
    await ports.whenReady();
    return await fn(ports, kernel, config);
  } finally {
    await ports.close();
  }
}

function noopCalls(n: number, fn = 'noop'): CallSpec[] {
  const call: CallSpec = { function: fn, args: [] };
  return Array.from({ length: n }, () => call);
}

let taskSeq = 0;

/** One Calls phase straight through the ExecutorCallRunner (what the orchestrator's Calls phase does). */
async function runTask(ports: ExecutorPorts, calls: readonly CallSpec[], client?: string): Promise<void> {
  const pin = await ports.codeEpochs.pin();
  try {
    const outcome = await ports.callRunner.run(
      {
        taskId: `bench-${++taskSeq}`,
        codeEpoch: pin.epoch,
        deadlineMs: Date.now() + 600_000,
        signal: new AbortController().signal,
        ...(client === undefined ? {} : { client }),
      },
      calls,
    );
    if (!outcome.success) throw new Error(`bench task failed: ${outcome.failureCode} ${outcome.message}`);
    if (outcome.outputs.length !== calls.length) throw new Error('bench task lost outputs');
  } finally {
    pin.release();
  }
}

/** `tasks` tasks through `run`, at most `TASK_SLOTS` at once. */
async function lanes(tasks: number, run: () => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks) {
      next++;
      await run();
    }
  };
  await Promise.all(Array.from({ length: Math.min(TASK_SLOTS, tasks) }, lane));
}

/** SubmitTask + WatchTasks to the terminal update; checks the outputs came back. */
async function grpcTask(
  client: WorkerServiceClient,
  callList: readonly unknown[][],
  fn = 'noop',
): Promise<void> {
  const taskId = `bench-grpc-${++taskSeq}`;
  const task = taskInputToWire({
    taskId,
    functionCallConfig: { type: 'CallListCallConfig', config: { function: fn, callList } },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    taskTimeoutMs: 600_000,
  });
  await unaryCall<SubmitTaskResponseWireOut>(
    (md, o, cb) => client.submitTask({ task, slotId: '' }, md, o, cb),
    {
      timeoutMs: 30_000,
    },
  );
  const last = await new Promise<ReturnType<typeof taskUpdateFromWire>>((resolve, reject) => {
    let update: ReturnType<typeof taskUpdateFromWire> | undefined;
    const stream = client.watchTasks({ taskIds: [taskId] });
    stream.on('data', (u: TaskUpdateWireOut) => (update = taskUpdateFromWire(u)));
    stream.on('end', () => (update ? resolve(update) : reject(new Error(`no update for ${taskId}`))));
    stream.on('error', reject);
  });
  const outputs = last.result?.executeResult.pluginResults[0]?.result;
  if (last.state !== 'SUCCEEDED' || !Array.isArray(outputs) || outputs.length !== callList.length) {
    throw new Error(`bench task ${taskId} did not succeed: ${JSON.stringify(last.result?.executeResult)}`);
  }
}

/** A whole Worker (runWorker in this process) over `ports`, and a gRPC client of it, for `fn`. */
async function withGrpcWorker<T>(
  ports: ExecutorPorts,
  kernel: Kernel,
  config: BlockxConfig,
  fn: (client: WorkerServiceClient) => Promise<T>,
): Promise<T> {
  const worker = await runWorker({
    config,
    deployment: 'block',
    plugins: kernel.plugins,
    callRunner: ports.callRunner,
    codeEpochs: ports.codeEpochs,
    executorReadiness: ports.executorReadiness,
    listen: '127.0.0.1:0',
  });
  const client = createWorkerClient(worker.address);
  try {
    return await fn(client);
  } finally {
    client.close();
    await worker.close();
  }
}

async function workerRows(): Promise<Row[]> {
  return withExecutor(async (ports, kernel, config) => {
    const rows: Row[] = [];
    const big = noopCalls(CALLS);
    rows.push(
      await measure(
        `dispatcher→executor, 1 task × ${fmt(CALLS)} calls`,
        CALLS,
        () => runTask(ports, noopCalls(Math.min(CALLS, 20_000))),
        () => runTask(ports, big),
      ),
    );
    const small = noopCalls(TASK_CALLS);
    rows.push(
      await measure(
        `dispatcher→executor, ${TASKS} tasks × ${fmt(TASK_CALLS)} calls, ${TASK_SLOTS} at once`,
        TASKS * TASK_CALLS,
        () => lanes(Math.min(TASKS, 20), () => runTask(ports, small)),
        () => lanes(TASKS, () => runTask(ports, small)),
      ),
    );
    const callList = Array.from({ length: TASK_CALLS }, () => []);
    rows.push(
      await withGrpcWorker(ports, kernel, config, (client) =>
        measure(
          `worker over gRPC, ${TASKS} tasks × ${fmt(TASK_CALLS)} calls, ${TASK_SLOTS} clients`,
          TASKS * TASK_CALLS,
          () => lanes(Math.min(TASKS, 20), () => grpcTask(client, callList)),
          () => lanes(TASKS, () => grpcTask(client, callList)),
        ),
      ),
    );
    return rows;
  });
}

/**
 * The cost of task isolation: both dispatcher→executor rows under `none` and `task`, one executor each,
 * alternating run by run so drift on a shared machine hits both alike.
 */
async function isolationRows(): Promise<Row[]> {
  const modes = ['none', 'task'] as const;
  const big = noopCalls(CALLS);
  const small = noopCalls(TASK_CALLS);
  const shapes = [
    { label: `1 task × ${fmt(CALLS)} calls`, calls: CALLS, run: (p: ExecutorPorts) => runTask(p, big) },
    {
      label: `${TASKS} tasks × ${fmt(TASK_CALLS)} calls, ${TASK_SLOTS} at once`,
      calls: TASKS * TASK_CALLS,
      run: (p: ExecutorPorts) => lanes(TASKS, () => runTask(p, small)),
    },
  ];
  const ms = new Map<string, number[]>();
  const key = (mode: string, i: number) => `${mode}#${i}`;
  // Two executors at once would share the 2 cores: run each mode's executor for one round at a time.
  for (let round = 0; round < RUNS + 1; round++) {
    for (const mode of modes) {
      await withExecutor(async (ports) => {
        await runTask(ports, noopCalls(Math.min(CALLS, 20_000))); // warm-up
        for (const [i, shape] of shapes.entries()) {
          const start = performance.now();
          await shape.run(ports);
          const took = performance.now() - start;
          if (round === 0) continue; // the first round warms the machine up
          ms.set(key(mode, i), [...(ms.get(key(mode, i)) ?? []), took]);
        }
      }, mode);
    }
  }
  const rows: Row[] = [];
  for (const [i, shape] of shapes.entries()) {
    for (const mode of modes) {
      const row = {
        name: `dispatcher→executor, isolation ${mode}, ${shape.label}`,
        calls: shape.calls,
        ms: ms.get(key(mode, i))!,
      };
      console.error(`  ${row.name}: ${fmt((row.calls / median(row.ms)) * 1000)} calls/s`);
      rows.push(row);
    }
  }
  return rows;
}

/**
 * The cost of tenants on threads (docs/security.md § Task isolation): the dispatcher→executor row of many
 * tasks with every task from one submitter (no two tenants ever meet: the rule never binds) and with
 * tasks of two submitters alternating (a thread drains before it switches), in the same executor,
 * alternating shape by shape round by round.
 */
async function tenantRows(
  fn = 'noop',
  functionsDir = FUNCTIONS,
  label = 'executor',
  pythonPidns?: 'on' | 'off',
): Promise<Row[]> {
  const small = noopCalls(TASK_CALLS, fn);
  const shapes = [
    { label: 'one submitter', client: (_i: number) => 'alice' },
    { label: 'two submitters alternating', client: (i: number) => (i % 2 === 0 ? 'alice' : 'bob') },
  ];
  const ms = new Map<number, number[]>();
  await withExecutor(
    async (ports) => {
      await runTask(ports, noopCalls(Math.min(CALLS, 20_000), fn)); // warm-up
      for (let round = 0; round < RUNS + 1; round++) {
        for (const [i, shape] of shapes.entries()) {
          let n = 0;
          const start = performance.now();
          await lanes(TASKS, () => runTask(ports, small, shape.client(n++)));
          const took = performance.now() - start;
          if (round > 0) ms.set(i, [...(ms.get(i) ?? []), took]);
        }
      }
    },
    undefined,
    functionsDir,
    pythonPidns,
  );
  return shapes.map((shape, i) => {
    const row = {
      name: `dispatcher→${label}, tenants: ${shape.label}, ${TASKS} tasks × ${fmt(TASK_CALLS)} calls, ${TASK_SLOTS} at once`,
      calls: TASKS * TASK_CALLS,
      ms: ms.get(i)!,
    };
    console.error(`  ${row.name}: ${fmt((row.calls / median(row.ms)) * 1000)} calls/s`);
    return row;
  });
}

/** The Python executor's switch for a PID namespace per execution process (blockx_executor/own_pidns.py). */
const PIDNS_ENV = 'BLOCKX_PYTHON_PROCESS_PIDNS';

/**
 * tenants-python with each execution process in a PID namespace of its own and with it off
 * (docs/security.md § Execution processes in PID namespaces of their own): off, on, on, off, one executor
 * per turn, `--runs` rounds each, the rows of a mode merged over its turns.
 */
async function pythonPidnsRows(dir: string): Promise<Row[]> {
  const byName = new Map<string, Row>();
  for (let turn = 0; turn < 4; turn++) {
    const mode = turn === 0 || turn === 3 ? 'off' : 'on'; // off, on, on, off: neither has all the first turns
    const label = `Python executor, ${PIDNS_ENV}=${mode}`;
    for (const row of await tenantRows('noop_py', pythonFunctions(dir), label, mode)) {
      const seen = byName.get(row.name);
      byName.set(row.name, seen ? { ...seen, ms: [...seen.ms, ...row.ms] } : row);
    }
  }
  return [...byName.values()];
}

/** A functions folder in `dir` with noop.ts and noop_py.py (`def main(ctx): return None`), made once. */
function pythonFunctions(dir: string): string {
  const functionsDir = path.join(dir, 'functions');
  if (existsSync(functionsDir)) return functionsDir;
  mkdirSync(functionsDir);
  copyFileSync(path.join(FUNCTIONS, 'noop.ts'), path.join(functionsDir, 'noop.ts'));
  writeFileSync(path.join(functionsDir, 'noop_py.py'), 'def main(ctx):\n    return None\n');
  return functionsDir;
}

/**
 * JS and Python no-op calls through one Worker with both executors (same dispatcher, same router), in
 * the same run, and the raw Python UDS ping-pong they are measured against.
 */
async function pythonRows(dir: string): Promise<Row[]> {
  const functionsDir = pythonFunctions(dir);
  const rows = await withExecutor(
    async (ports, kernel, config) => {
      if (!ports.pythonStarted) throw new Error('the Python executor did not start');
      const out: Row[] = [];
      for (const [label, fn] of [
        ['JS executor', 'noop'],
        ['Python executor', 'noop_py'],
      ] as const) {
        const big = noopCalls(CALLS, fn);
        out.push(
          await measure(
            `dispatcher→${label} (both running), 1 task × ${fmt(CALLS)} calls`,
            CALLS,
            () => runTask(ports, noopCalls(Math.min(CALLS, 20_000), fn)),
            () => runTask(ports, big),
          ),
        );
      }
      const callList = Array.from({ length: TASK_CALLS }, () => []);
      await withGrpcWorker(ports, kernel, config, async (client) => {
        for (const [label, fn] of [
          ['JS', 'noop'],
          ['Python', 'noop_py'],
        ] as const) {
          out.push(
            await measure(
              `worker over gRPC → ${label} executor, ${TASKS} tasks × ${fmt(TASK_CALLS)} calls, ${TASK_SLOTS} clients`,
              TASKS * TASK_CALLS,
              () => lanes(Math.min(TASKS, 20), () => grpcTask(client, callList, fn)),
              () => lanes(TASKS, () => grpcTask(client, callList, fn)),
            ),
          );
        }
      });
      return out;
    },
    undefined,
    functionsDir,
  );
  const pp = await startPythonPingPong(dir, { inflight: 1024 });
  try {
    const ms: number[] = [];
    await pp.run(10_000);
    for (let i = 0; i < RUNS; i++) ms.push(await pp.run(CALLS));
    const row = { name: `raw Python UDS ping-pong, length-prefixed JSON, 1,024 in flight`, calls: CALLS, ms };
    console.error(`  ${row.name}: ${fmt((CALLS / median(ms)) * 1000)} calls/s`);
    rows.push(row);
  } finally {
    await pp.close();
  }
  return rows;
}

// ---- raw UDS ping-pong -----------------------------------------------------------------------------

async function udsPingPong(dir: string, n: number, inflight: number): Promise<Row> {
  const sockPath = path.join(dir, 'pp.sock');
  const server = createServer((sock) => {
    const decoder = new FrameDecoder();
    const writer = new FrameWriter(sock);
    sock.on('data', (chunk: Buffer) => {
      for (const raw of decoder.pushRaw(chunk)) {
        const m = JSON.parse(raw) as { callId: string; attempt: number };
        writer.send({ type: 'CallCompleted', callId: m.callId, attempt: m.attempt, value: null });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(sockPath, resolve));
  const sock = connect(sockPath);
  await new Promise((resolve) => sock.once('connect', resolve));
  const run = framePingPong(sock, inflight);
  try {
    return await measure(
      `raw UDS ping-pong, length-prefixed JSON, ${fmt(inflight)} in flight`,
      n,
      () => run(10_000),
      () => run(n),
    );
  } finally {
    sock.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

// ---- Piscina ---------------------------------------------------------------------------------------

interface PiscinaPool {
  run(task: unknown): Promise<unknown>;
  destroy(): Promise<void>;
  readonly threads: readonly unknown[];
}
type PiscinaCtor = new (options: {
  filename: string;
  minThreads?: number;
  maxThreads?: number;
}) => PiscinaPool;

function loadPiscina(): PiscinaCtor {
  if (!existsSync(path.join(WORK, 'node_modules', 'piscina', 'package.json'))) {
    mkdirSync(WORK, { recursive: true });
    console.error(`installing piscina@${PISCINA_VERSION} into ${path.relative(REPO, WORK)}/ (once) ...`);
    execFileSync(
      'npm',
      ['install', '--prefix', WORK, '--no-audit', '--no-fund', `piscina@${PISCINA_VERSION}`],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  }
  const require = createRequire(path.join(WORK, 'package.json'));
  const mod = require('piscina') as { Piscina?: PiscinaCtor; default?: PiscinaCtor };
  const ctor = mod.Piscina ?? mod.default;
  if (ctor === undefined) throw new Error('piscina did not export its Piscina class');
  return ctor;
}

async function piscina(n: number, threads: number | undefined): Promise<Row> {
  const Piscina = loadPiscina();
  const filename = path.join(WORK, 'noop-task.mjs');
  writeFileSync(filename, 'export default async function noop() { return null; }\n');
  const pool = new Piscina({
    filename,
    ...(threads !== undefined ? { minThreads: threads, maxThreads: threads } : {}),
  });
  const runAll = (total: number) => Promise.all(Array.from({ length: total }, () => pool.run(null)));
  try {
    const label = threads === undefined ? 'default threads' : `${threads} threads`;
    return await measure(
      `Piscina ${PISCINA_VERSION}, ${fmt(n)} tasks, ${label}`,
      n,
      () => runAll(10_000),
      () => runAll(n),
    );
  } finally {
    await pool.destroy();
  }
}

// ---- main ------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bx-calls-'));
  const cases: [string, () => Promise<Row[]>][] = [
    ['worker', workerRows],
    ['isolation', isolationRows],
    ['tenants', () => tenantRows()],
    ['tenants-python', () => tenantRows('noop_py', pythonFunctions(dir), 'Python executor')],
    ['python-pidns', () => pythonPidnsRows(dir)],
    ['python', () => pythonRows(dir)],
    ['uds', async () => [await udsPingPong(dir, CALLS, 1024)]],
    ['piscina', async () => [await piscina(CALLS, undefined), await piscina(CALLS, 2)]],
  ];
  const rows: Row[] = [];
  console.error(`bench/calls: executor ${EXECUTOR}, ${THREADS} threads, ${RUNS} run(s) per row`);
  try {
    for (const [name, run] of cases) {
      if (values.only !== undefined && values.only !== name) continue;
      rows.push(...(await run()));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rateOf = (r: Row, ms = median(r.ms)) => (r.calls / ms) * 1000;
  const piscinaBest = Math.max(0, ...rows.filter((r) => r.name.startsWith('Piscina')).map((r) => rateOf(r)));
  console.log(
    `\nNo-op calls, ${availableParallelism()} CPUs, node ${process.version}, executor ${EXECUTOR} with ${THREADS} threads; ` +
      `median of ${RUNS} run(s) (range in brackets)\n`,
  );
  console.log('| path | calls | calls/s | range calls/s | µs per call | vs best Piscina |');
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const r of rows) {
    const rate = rateOf(r);
    const lo = rateOf(r, Math.max(...r.ms));
    const hi = rateOf(r, Math.min(...r.ms));
    const vs = piscinaBest > 0 ? `${fmt(rate / piscinaBest, 2)}×` : '–';
    console.log(
      `| ${r.name} | ${fmt(r.calls)} | ${fmt(rate)} | ${fmt(lo)}–${fmt(hi)} | ${fmt(1e6 / rate, 1)} | ${vs} |`,
    );
  }
  // Python against its ceiling (the raw Python ping-pong) and against the JS executor of the same run.
  const py = rows.find((r) => r.name.startsWith('dispatcher→Python executor'));
  const js = rows.find((r) => r.name.startsWith('dispatcher→JS executor'));
  const ppRow = rows.find((r) => r.name.startsWith('raw Python UDS'));
  if (py && js && ppRow) {
    const pyGrpc = rows.find((r) => r.name.startsWith('worker over gRPC → Python'));
    const jsGrpc = rows.find((r) => r.name.startsWith('worker over gRPC → JS'));
    console.log('\nPython executor (same run)\n');
    console.log('| ratio | value |');
    console.log('| --- | ---: |');
    console.log(`| dispatcher→Python / raw Python ping-pong | ${fmt(rateOf(py) / rateOf(ppRow), 2)}× |`);
    console.log(`| dispatcher→Python / dispatcher→JS | ${fmt(rateOf(py) / rateOf(js), 2)}× |`);
    if (pyGrpc && jsGrpc)
      console.log(`| gRPC Worker→Python / gRPC Worker→JS | ${fmt(rateOf(pyGrpc) / rateOf(jsGrpc), 2)}× |`);
  }
  const ten = rows.filter((r) => r.name.includes(', tenants: '));
  if (ten.length > 0) {
    console.log('\nTenants on threads (two submitters alternating vs one, same run and executor)\n');
    for (let i = 0; i + 1 < ten.length; i += 2)
      console.log(
        `| ${ten[i]!.name.replace(/, tenants: .*$/, '')} two / one | ${fmt(rateOf(ten[i + 1]!) / rateOf(ten[i]!), 2)}× |`,
      );
  }
  // The isolation rows come in pairs (none, task) of the same shape: the cost of isolation per call.
  const iso = rows.filter((r) => r.name.includes(', isolation '));
  if (iso.length > 0) {
    console.log('\nIsolation cost (executor.isolation task vs none, same run; goal ≥ 0.8× of none)\n');
    console.log('| shape | none calls/s | task calls/s | task / none |');
    console.log('| --- | ---: | ---: | ---: |');
    for (let i = 0; i + 1 < iso.length; i += 2) {
      const none = rateOf(iso[i]!);
      const task = rateOf(iso[i + 1]!);
      const shape = iso[i]!.name.replace(/^.*isolation none, /, '');
      console.log(`| ${shape} | ${fmt(none)} | ${fmt(task)} | ${fmt(task / none, 2)}× |`);
    }
  }
}

await main();
