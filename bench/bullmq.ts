// bench/bullmq: empty tasks through BlockX beside BullMQ and a raw grpc-js unary echo, in one run on this
// machine. Prints one markdown table (docs/batched-protocol.md § What it measured).
//
//   npx tsx bench/bullmq.ts [--clients 64] [--seconds 3] [--warmup 1] [--runs 3] [--workers 2]
//                           [--bulk 20000] [--rate 1000] [--only blockx|bullmq|echo]
//
// BlockX rows run on one `blockx up --no-demo --workers N` cluster (the built CLI, bin/blockx.js, as
// `npm start` runs it; in its own process, in-process registry, SQLite in memory; WORKER_TASK_SLOTS
// max(64, 2 × clients)). A task is an empty CallListCallConfig (no calls). Rows:
//  - 64 producers of BlockxClient.run() in one client, closed loop: coalesced onto the batched path
//    (bulk ReserveWorkerSlots + one RunTasks stream per worker); and the same with `batching: 'off'`
//    (ReserveWorkerSlot → SubmitTask → WatchTasks per task, the unary path of docs/task-lifecycle.md);
//  - runMany of `--bulk` tasks through the Coordinator, and straight to the workers (one client per
//    worker, the tasks split evenly), timed until every result is in; and straight to the workers with
//    one hello_world call per task (what the Executor link adds);
//  - run() through the Coordinator at a fixed offered load of `--rate` tasks/s (open loop): submit →
//    terminal latency;
//  - for each, the CPU time per task of the cluster process (coordinator and workers) and of its
//    Executor children, from /proc.
// `blockx submit` (`--only submit`; a cluster of its own, the same settings, `executor.isolation: task`,
// the default): `--bulk` one-call hello_world tasks as one JSONL file through the built CLI
// (`blockx submit FILE.jsonl --coordinator ADDR --json`, its default concurrency 64, output to a pipe),
// `--runs` runs, timed from the spawn of the CLI to its exit; CPU per task of the cluster process, of its
// Executors and of the CLI process itself (bash's `times`). `--profile DIR` sets COORDINATOR_CPU_PROFILE
// and EXECUTOR_CPU_PROFILE for the clusters (docs/performance.md § Profiling) and makes the CLI write
// its own profile into DIR (Node's --cpu-prof).
// BullMQ 6.7.0 (+ ioredis 6.0.0, installed on demand into bench/.work/), its own redis-server on a free
// loopback port (`--save '' --appendonly no`, temp dir); one Worker at concurrency `--clients` runs
// `async () => null`:
//  - addBulk of `--bulk` jobs (in calls of 1,000), timed until the worker completed all;
//  - `--clients` producers each doing queue.add() and job.waitUntilFinished(queueEvents), closed loop;
//  - the same add-and-wait at the offered `--rate` (open loop).
// Closed loops: `--runs` runs of `--seconds` s after a `--warmup` s warm-up; bulk rows: `--runs` runs;
// the table shows medians over the runs (ops/s, p50, p99) and the range.
// raw grpc-js unary echo (bench/lib/grpc-echo.ts), server in a child process: the transport's ceiling.
// redis-server comes from Debian: when it is missing and this runs as root it is installed with apt-get;
// otherwise the BullMQ rows are skipped with a note.
import * as grpc from '@grpc/grpc-js';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  BlockxClient,
  type BlockxClientOptions,
  type ClientTaskInput,
  type TaskRunResult,
} from '../src/client/index.js';
import { CLIENT_CHANNEL_OPTIONS } from '../src/grpc/channel-options.js';
import {
  bulkRun,
  closedLoop,
  openLoop,
  fmtInt,
  fmtMs,
  summarize,
  type LoopMeasurement,
  type RunSummary,
} from './lib/closed-loop.js';
import { EchoClient, startEcho } from './lib/grpc-echo.js';
import { installOnDemand, REPO } from './lib/on-demand.js';
import { stopChild, waitForLine } from './lib/child.js';
import { cpuSnapshot, cpuSpent } from './lib/proc-cpu.js';

const BULLMQ_VERSION = '6.7.0';
const IOREDIS_VERSION = '6.0.0';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    workers: { type: 'string', default: '2' },
    bulk: { type: 'string', default: '20000' },
    rate: { type: 'string', default: '1000' },
    only: { type: 'string' },
    profile: { type: 'string' },
    'serve-echo': { type: 'boolean', default: false },
  },
});
const CLIENTS = Number(values.clients);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const RUNS = Math.max(1, Number(values.runs));
const WORKERS = Number(values.workers);
const BULK = Number(values.bulk);
const RATE = Number(values.rate);

type RowKey =
  | 'bx-coalesced'
  | 'bx-unary'
  | 'bx-bulk-coordinator'
  | 'bx-bulk-direct'
  | 'bx-bulk-direct-call'
  | 'bx-open'
  | 'bx-submit'
  | 'bull-bulk'
  | 'bull-single'
  | 'bull-open'
  | 'echo';

interface Row {
  readonly key?: RowKey;
  readonly name: string;
  readonly unit: string;
  readonly summary?: RunSummary;
  readonly note?: string;
  /** CPU time of the `blockx up` process (coordinator and workers) per task, µs. */
  readonly cpuUsPerOp?: number;
  /** CPU time of its Executor processes per task, µs. */
  readonly executorUsPerOp?: number;
  /** CPU time of the submitting process per task, µs (the `blockx submit` row). */
  readonly clientUsPerOp?: number;
}

async function runs(op: (client: number) => Promise<void>): Promise<RunSummary> {
  const ms: LoopMeasurement[] = [];
  for (let i = 0; i < RUNS; i++) ms.push(await closedLoop(CLIENTS, WARMUP, SECONDS, op));
  return summarize(ms);
}

// ---- BlockX ------------------------------------------------------------------------------------------

const EMPTY_TASK: ClientTaskInput = {
  functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [] } },
};
const ONE_CALL_TASK: ClientTaskInput = {
  functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [['x']] } },
};

interface Cluster {
  readonly coordinator: string;
  readonly workers: readonly string[];
  readonly pid: number;
}

/** A `blockx up` cluster as `npm start` runs it (the built CLI, bin/blockx.js), for every BlockX row. */
async function withCluster<T>(fn: (cluster: Cluster) => Promise<T>, name = 'blockx'): Promise<T> {
  const argv = ['up', '--no-demo', '--listen', '127.0.0.1:0', '--workers', String(WORKERS)];
  const profile =
    values.profile === undefined
      ? {}
      : {
          COORDINATOR_CPU_PROFILE: path.resolve(values.profile, `${name}-up.cpuprofile`),
          EXECUTOR_CPU_PROFILE: path.resolve(values.profile, `${name}-exec.cpuprofile`),
        };
  const child = spawn(process.execPath, [path.join(REPO, 'bin', 'blockx.js'), ...argv], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      // A busy bench box must not make the Coordinator filter its own workers.
      COORDINATOR_CPU_RED_LINE: '1',
      COORDINATOR_MEMORY_RED_LINE: '1',
      WORKER_TASK_SLOTS: String(Math.max(64, CLIENTS * 2)),
      BLOCKX_STORAGE_URL: 'sqlite::memory:',
      ...profile,
    },
  });
  try {
    // `blockx up` prints the coordinator's address, then one line per worker.
    const last = new RegExp(`worker #${WORKERS - 1} listening on \\S+`);
    const out = (await waitForLine(child, new RegExp(`[\\s\\S]*${last.source}`), 60_000))[0];
    const coordinator = /coordinator listening on (\S+)/.exec(out)?.[1];
    const workers = [...out.matchAll(/worker #\d+ listening on (\S+)/g)].map((w) => w[1] as string);
    if (coordinator === undefined) throw new Error('no coordinator address printed');
    return await fn({ coordinator, workers, pid: child.pid as number });
  } finally {
    await stopChild(child);
  }
}

/** BlockX results checked so far (warm-ups included): the denominator of CPU per task. */
let completedTasks = 0;

function checkResult(r: TaskRunResult): void {
  if (!r.success) throw new Error(`blockx task failed: ${r.failureCode} ${r.failureMessage}`);
  completedTasks++;
}

async function blockxRows(): Promise<Row[]> {
  return withCluster(async (cluster) => {
    const rows: Row[] = [];
    const measured = async (
      key: RowKey,
      name: string,
      unit: string,
      run: () => Promise<RunSummary>,
    ): Promise<void> => {
      const cpu0 = cpuSnapshot(cluster.pid);
      const done0 = completedTasks;
      const summary = await run();
      const tasks = Math.max(1, completedTasks - done0);
      // The cluster: its process and any Worker processes of its own; the Executors (under a PID namespace
      // of their own, grandchildren through unshare) apart (bench/lib/proc-cpu.ts).
      const cpu = cpuSpent(cpu0, cpuSnapshot(cluster.pid));
      const cpuUsPerOp = ((cpu.mainMs + cpu.othersMs) * 1000) / tasks;
      const executorUsPerOp = (cpu.executorMs * 1000) / tasks;
      rows.push({ key, name, unit, summary, cpuUsPerOp, executorUsPerOp });
      console.error(`  ${name}: ${fmtInt(summary.rate)} ${unit}/s`);
    };
    const withClient = async <T>(
      opts: BlockxClientOptions,
      fn: (c: BlockxClient) => Promise<T>,
    ): Promise<T> => {
      const c = new BlockxClient(opts);
      try {
        return await fn(c);
      } finally {
        c.close();
      }
    };
    const via = { coordinator: cluster.coordinator };

    await withClient(via, (client) =>
      measured(
        'bx-coalesced',
        `BlockX via Coordinator (${WORKERS} workers), ${CLIENTS} producers of run(), coalesced onto the batched path`,
        'tasks',
        () => runs(async () => checkResult(await client.run(EMPTY_TASK))),
      ),
    );
    await withClient({ ...via, batching: 'off' }, (client) =>
      measured(
        'bx-unary',
        `BlockX via Coordinator (${WORKERS} workers), ${CLIENTS} producers of run(), unary (reserve → submit → watch)`,
        'tasks',
        () => runs(async () => checkResult(await client.run(EMPTY_TASK))),
      ),
    );
    const bulkOf = async (clients: BlockxClient[], task: ClientTaskInput = EMPTY_TASK): Promise<number[]> => {
      const per = Math.ceil(BULK / clients.length);
      const parts = await Promise.all(
        clients.map((c, i) =>
          c.runMany(
            Array.from({ length: Math.min(per, BULK - i * per) }, () => task),
            { concurrency: BULK },
          ),
        ),
      );
      return parts.flat().map((o) => {
        if (!o.ok) throw o.error;
        checkResult(o.result);
        return o.result.durationMs;
      });
    };
    await withClient(via, (client) =>
      measured(
        'bx-bulk-coordinator',
        `BlockX batched via Coordinator (${WORKERS} workers), runMany of ${fmtInt(BULK)} tasks`,
        'tasks',
        async () => {
          const ms: LoopMeasurement[] = [];
          for (let i = 0; i < RUNS; i++) ms.push(await bulkRun(BULK, () => bulkOf([client])));
          return summarize(ms);
        },
      ),
    );
    const direct = cluster.workers.map((w) => new BlockxClient({ worker: w }));
    try {
      await measured(
        'bx-bulk-direct',
        `BlockX batched straight to the ${cluster.workers.length} workers, runMany of ${fmtInt(BULK)} tasks`,
        'tasks',
        async () => {
          const ms: LoopMeasurement[] = [];
          for (let i = 0; i < RUNS; i++) ms.push(await bulkRun(BULK, () => bulkOf(direct)));
          return summarize(ms);
        },
      );
      // The same with one call per task: does the Executor link limit many small tasks?
      await measured(
        'bx-bulk-direct-call',
        `BlockX batched straight to the ${cluster.workers.length} workers, runMany of ${fmtInt(BULK)} one-call tasks (hello_world)`,
        'tasks',
        async () => {
          const ms: LoopMeasurement[] = [];
          for (let i = 0; i < RUNS; i++) ms.push(await bulkRun(BULK, () => bulkOf(direct, ONE_CALL_TASK)));
          return summarize(ms);
        },
      );
    } finally {
      for (const c of direct) c.close();
    }
    await withClient(via, (client) =>
      measured(
        'bx-open',
        `BlockX via Coordinator, run() at an offered ${fmtInt(RATE)} tasks/s (open loop)`,
        'tasks',
        async () => {
          const ms: LoopMeasurement[] = [];
          for (let i = 0; i < RUNS; i++) {
            ms.push(await openLoop(RATE, SECONDS, async () => checkResult(await client.run(EMPTY_TASK))));
          }
          return summarize(ms);
        },
      ),
    );
    return rows;
  });
}

/** `blockx submit` of BULK one-call tasks from one JSONL file, against a cluster of its own. */
async function submitRows(): Promise<Row[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bx-submit-'));
  const file = path.join(dir, 'tasks.jsonl');
  const line = JSON.stringify(ONE_CALL_TASK);
  writeFileSync(file, `${Array.from({ length: BULK }, () => line).join('\n')}\n`);
  const name = `blockx submit of ${fmtInt(BULK)} one-call tasks (hello_world, JSONL) via Coordinator (${WORKERS} workers, isolation task)`;
  try {
    return await withCluster(async (cluster) => {
      const ms: LoopMeasurement[] = [];
      let clientUs = 0;
      const cpu0 = cpuSnapshot(cluster.pid);
      for (let r = 0; r < RUNS; r++) {
        const { latencies, seconds, childUs } = await submitOnce(cluster.coordinator, file);
        if (latencies.length !== BULK)
          throw new Error(`blockx submit: ${latencies.length} of ${BULK} SUCCEEDED`);
        ms.push({ ops: BULK, seconds, sorted: latencies.sort((a, b) => a - b) });
        clientUs += childUs;
      }
      const tasks = BULK * RUNS;
      const cpu = cpuSpent(cpu0, cpuSnapshot(cluster.pid));
      const summary = summarize(ms);
      console.error(`  ${name}: ${fmtInt(summary.rate)} tasks/s`);
      return [
        {
          key: 'bx-submit',
          name,
          unit: 'tasks',
          summary,
          cpuUsPerOp: ((cpu.mainMs + cpu.othersMs) * 1000) / tasks,
          executorUsPerOp: (cpu.executorMs * 1000) / tasks,
          clientUsPerOp: clientUs / tasks,
        },
      ];
    }, 'submit');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One `blockx submit --json` run under bash, whose `times` gives the CLI's own CPU (user + system of its
 * finished children) exactly, after it exited. Resolves with the time each SUCCEEDED line arrived (ms
 * from the spawn) and the seconds from the spawn to the exit.
 */
async function submitOnce(
  coordinator: string,
  file: string,
): Promise<{ latencies: number[]; seconds: number; childUs: number }> {
  const t0 = performance.now();
  // With --profile the CLI records itself too (Node's --cpu-prof: a CPU.*.cpuprofile file in DIR).
  const prof =
    values.profile === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values.profile)}`];
  const cli = [
    process.execPath,
    ...prof,
    path.join(REPO, 'bin', 'blockx.js'),
    'submit',
    file,
    '--coordinator',
    coordinator,
  ];
  const script = `${cli.map((a) => `'${a}'`).join(' ')} --json; rc=$?; times >&2; exit $rc`;
  const child = spawn('bash', ['-c', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  const latencies: number[] = [];
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) if (l.includes('"SUCCEEDED"')) latencies.push(performance.now() - t0);
  });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = (performance.now() - t0) / 1000;
  if (code !== 0) throw new Error(`blockx submit exited ${code}: ${err.slice(-2000)}`);
  // `times` prints the shell's own user/system time, then its children's: "0m1.234s 0m0.567s".
  const children = err.trim().split('\n').at(-1) ?? '';
  const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return { latencies, seconds, childUs: secs.reduce((a, b) => a + b, 0) * 1e6 };
}

// ---- BullMQ --------------------------------------------------------------------------------------------

function hasRedis(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function ensureRedis(): string | undefined {
  if (hasRedis()) return undefined;
  if (process.getuid?.() !== 0) {
    return 'redis-server is missing: install it with `sudo apt-get install -y redis-server` (BullMQ row skipped)';
  }
  console.error('installing redis-server with apt-get ...');
  try {
    execFileSync('apt-get', ['install', '-y', 'redis-server'], { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch {
    execFileSync('apt-get', ['update'], { stdio: ['ignore', 'ignore', 'inherit'] });
    execFileSync('apt-get', ['install', '-y', 'redis-server'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return hasRedis() ? undefined : 'redis-server could not be installed (BullMQ row skipped)';
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

interface BullJob {
  waitUntilFinished(events: unknown, ttl?: number): Promise<unknown>;
}
interface BullClosable {
  close(): Promise<void>;
  setMaxListeners(n: number): unknown;
}
interface BullModule {
  Queue: new (
    name: string,
    opts: object,
  ) => BullClosable & {
    add(name: string, data: unknown, opts?: object): Promise<BullJob>;
    addBulk(jobs: readonly { name: string; data: unknown; opts?: object }[]): Promise<unknown>;
  };
  QueueEvents: new (name: string, opts: object) => BullClosable & { waitUntilReady(): Promise<unknown> };
  Worker: new (
    name: string,
    processor: () => Promise<unknown>,
    opts: object,
  ) => BullClosable & {
    waitUntilReady(): Promise<unknown>;
    on(event: 'completed', fn: () => void): unknown;
    off(event: 'completed', fn: () => void): unknown;
  };
}

/** A redis-server on a free loopback port and BullMQ connected to it, for both BullMQ rows. */
async function bullmqRows(): Promise<Row[]> {
  const names = {
    bulk: `BullMQ ${BULLMQ_VERSION} + redis, addBulk of ${fmtInt(BULK)} jobs, worker concurrency ${CLIENTS}, all completed`,
    single: `BullMQ ${BULLMQ_VERSION} + redis, ${CLIENTS} producers of add → completed, worker concurrency ${CLIENTS}`,
  };
  const note = ensureRedis();
  if (note !== undefined) {
    return [
      { name: names.bulk, unit: 'jobs', note },
      { name: names.single, unit: 'jobs', note },
    ];
  }
  const require = installOnDemand([
    { name: 'bullmq', version: BULLMQ_VERSION },
    { name: 'ioredis', version: IOREDIS_VERSION },
  ]);
  const bull = require('bullmq') as BullModule;
  const dir = mkdtempSync(path.join(tmpdir(), 'bx-redis-'));
  const port = await freePort();
  const redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const closables: BullClosable[] = [];
  try {
    await waitForLine(redis, /[Rr]eady to accept connections/, 20_000);
    const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
    const rows: Row[] = [];

    // addBulk of BULK jobs, one worker at concurrency CLIENTS drains them; done when all completed.
    {
      const queue = new bull.Queue('bench-bulk', { connection });
      const worker = new bull.Worker('bench-bulk', async () => null, { connection, concurrency: CLIENTS });
      closables.push(queue, worker);
      for (const c of [queue, worker]) c.setMaxListeners(0);
      await worker.waitUntilReady();
      const ms: LoopMeasurement[] = [];
      for (let r = 0; r < RUNS; r++) {
        ms.push(
          await bulkRun(BULK, async () => {
            const t0 = performance.now();
            const latencies: number[] = [];
            const done = new Promise<void>((resolve) => {
              const onDone = (): void => {
                latencies.push(performance.now() - t0);
                if (latencies.length === BULK) {
                  worker.off('completed', onDone);
                  resolve();
                }
              };
              worker.on('completed', onDone);
            });
            const jobs = Array.from({ length: BULK }, () => ({
              name: 'noop',
              data: {},
              opts: { removeOnComplete: true, removeOnFail: 1000 },
            }));
            for (let i = 0; i < jobs.length; i += 1000) await queue.addBulk(jobs.slice(i, i + 1000));
            await done;
            return latencies;
          }),
        );
      }
      const summary = summarize(ms);
      rows.push({ key: 'bull-bulk', name: names.bulk, unit: 'jobs', summary });
      console.error(`  ${names.bulk}: ${fmtInt(summary.rate)} jobs/s`);
    }

    // CLIENTS producers, each add() then waitUntilFinished().
    {
      const queueName = 'bench-noop';
      const queue = new bull.Queue(queueName, { connection });
      const events = new bull.QueueEvents(queueName, { connection });
      const worker = new bull.Worker(queueName, async () => null, { connection, concurrency: CLIENTS });
      closables.push(queue, events, worker);
      // Every job awaiting its completion listens on the queue and its events: 64 at once is the point.
      for (const c of [queue, events, worker]) c.setMaxListeners(0);
      await Promise.all([events.waitUntilReady(), worker.waitUntilReady()]);
      const op = async (): Promise<void> => {
        const job = await queue.add('noop', {}, { removeOnComplete: 1000, removeOnFail: 1000 });
        await job.waitUntilFinished(events, 30_000);
      };
      const summary = await runs(op);
      rows.push({ key: 'bull-single', name: names.single, unit: 'jobs', summary });
      console.error(`  ${names.single}: ${fmtInt(summary.rate)} jobs/s`);
      const open: LoopMeasurement[] = [];
      for (let i = 0; i < RUNS; i++) open.push(await openLoop(RATE, SECONDS, op));
      const latency = `BullMQ ${BULLMQ_VERSION} + redis, add → completed at an offered ${fmtInt(RATE)} jobs/s (open loop)`;
      rows.push({ key: 'bull-open', name: latency, unit: 'jobs', summary: summarize(open) });
    }
    return rows;
  } finally {
    for (const c of closables.reverse()) await c.close().catch(() => undefined);
    await stopChild(redis);
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- raw grpc-js unary echo ------------------------------------------------------------------------------

async function echoRow(): Promise<Row> {
  const child = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--serve-echo'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const m = await waitForLine(child, /echo on (\S+)/, 30_000);
    const addr = m[1] as string;
    const clients = Array.from(
      { length: CLIENTS },
      () => new EchoClient(addr, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS),
    );
    const payload = Buffer.from('hello, bench');
    try {
      const summary = await runs(
        (i) =>
          new Promise((resolve, reject) =>
            (clients[i] as EchoClient).Echo(payload, (e) => (e ? reject(e) : resolve())),
          ),
      );
      return { key: 'echo', name: `raw grpc-js unary echo, ${CLIENTS} in flight`, unit: 'calls', summary };
    } finally {
      for (const c of clients) c.close();
    }
  } finally {
    child.stdin?.end();
    await stopChild(child);
  }
}

async function serveEcho(): Promise<void> {
  const echo = await startEcho();
  process.stdout.write(`echo on ${echo.addr}\n`);
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  echo.stop();
}

// ---- main ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const loadBefore = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const cases: [string, () => Promise<Row[]>][] = [
    ['blockx', blockxRows],
    ['submit', submitRows],
    ['bullmq', bullmqRows],
    ['echo', async () => [await echoRow()]],
  ];
  const rows: Row[] = [];
  for (const [key, run] of cases) {
    if (values.only !== undefined && !values.only.split(',').includes(key)) continue;
    console.error(`bench/bullmq: ${key} ...`);
    rows.push(...(await run()));
  }
  console.log(
    `\nbullmq: ${CLIENTS} concurrent producers, closed loop; ${RUNS} runs × ${SECONDS} s after ${WARMUP} s warm-up, ` +
      `medians over the runs; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ` +
      `load average ${loadBefore} before the run\n`,
  );
  console.log(
    '| what | throughput (median) | p50 | p99 | range over runs | cluster CPU µs per task | Executor CPU µs per task | client CPU µs per task |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const s = r.summary;
    if (s === undefined) {
      console.log(`| ${r.name} | skipped | | | ${r.note ?? ''} | | | |`);
      continue;
    }
    console.log(
      `| ${r.name} | ${fmtInt(s.rate)} ${r.unit}/s | ${fmtMs(s.p50)} ms | ${fmtMs(s.p99)} ms | ${fmtInt(s.minRate)}–${fmtInt(s.maxRate)} | ${r.cpuUsPerOp === undefined ? '' : fmtInt(r.cpuUsPerOp)} | ${r.executorUsPerOp === undefined ? '' : fmtInt(r.executorUsPerOp)} | ${r.clientUsPerOp === undefined ? '' : fmtInt(r.clientUsPerOp)} |`,
    );
  }
  // The issue-15 goals, as ratios of rows of this run.
  const rate = (k: RowKey): number | undefined => rows.find((r) => r.key === k)?.summary?.rate;
  const p50 = (k: RowKey): number | undefined => rows.find((r) => r.key === k)?.summary?.p50;
  const ratios: [string, number | undefined, number | undefined][] = [
    [
      'batched straight to the workers / BullMQ addBulk (throughput)',
      rate('bx-bulk-direct'),
      rate('bull-bulk'),
    ],
    [
      `blockx submit of ${fmtInt(BULK)} one-call tasks / BullMQ addBulk (throughput)`,
      rate('bx-submit'),
      rate('bull-bulk'),
    ],
    [
      'batched via the Coordinator / BullMQ addBulk (throughput)',
      rate('bx-bulk-coordinator'),
      rate('bull-bulk'),
    ],
    [
      `${CLIENTS} producers, coalesced / BullMQ ${CLIENTS} producers (throughput)`,
      rate('bx-coalesced'),
      rate('bull-single'),
    ],
    [
      `${CLIENTS} producers, unary / BullMQ ${CLIENTS} producers (throughput)`,
      rate('bx-unary'),
      rate('bull-single'),
    ],
    [
      `p50 at ${fmtInt(RATE)}/s offered, BlockX / BullMQ (latency, lower is better)`,
      p50('bx-open'),
      p50('bull-open'),
    ],
  ];
  const shown = ratios.filter(([, a, b]) => a !== undefined && b !== undefined);
  if (shown.length > 0) {
    console.log('\n| ratio (same run) | value |');
    console.log('|---|---:|');
    for (const [what, a, b] of shown)
      console.log(`| ${what} | ${((a as number) / (b as number)).toFixed(2)}× |`);
  }
  // One machine-readable line for scripts/bench.mjs (the chart).
  const chart = Object.fromEntries(rows.filter((r) => r.summary).map((r) => [r.name, r.summary?.rate]));
  console.log(`\n<!-- bench-chart bullmq ${JSON.stringify(chart)} -->`);
}

if (values['serve-echo']) {
  await serveEcho();
} else {
  await main();
  process.exit(0);
}
