// bench/bullmq: empty tasks through a BlockX Coordinator beside BullMQ and a raw grpc-js unary echo, in
// one run on this machine, same concurrency everywhere. Prints one markdown table.
//
//   npx tsx bench/bullmq.ts [--clients 64] [--seconds 3] [--warmup 1] [--runs 3] [--workers 2]
//                           [--only blockx|bullmq|echo]
//
// Rows (each a closed loop of `--clients` concurrent producers; `--runs` runs of `--seconds` s after a
// `--warmup` s warm-up; the table shows the median over the runs of ops/s, p50 and p99, and the range):
//  - BlockX: a `blockx up --no-demo --workers N` cluster (the built CLI, bin/blockx.js, as `npm start` runs it; in its own process, in-process
//    registry, SQLite in memory); each producer runs BlockxClient.run(): ReserveWorkerSlot → SubmitTask →
//    WatchTasks to the terminal update, for a task with an empty CallListCallConfig (no calls).
//  - BullMQ 6.7.0 (+ ioredis 6.0.0, installed on demand into bench/.work/): its own redis-server on a free
//    loopback port (`--save '' --appendonly no`, temp dir); each producer does queue.add() and
//    job.waitUntilFinished(queueEvents); one Worker with concurrency `--clients` runs `async () => null`.
//  - raw grpc-js unary echo (bench/lib/grpc-echo.ts), server in a child process: the transport's ceiling.
// redis-server comes from Debian: when it is missing and this runs as root it is installed with apt-get;
// otherwise the BullMQ row is skipped with a note.
import * as grpc from '@grpc/grpc-js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { BlockxClient } from '../src/client/index.js';
import { CLIENT_CHANNEL_OPTIONS } from '../src/grpc/channel-options.js';
import {
  closedLoop,
  fmtInt,
  fmtMs,
  summarize,
  type LoopMeasurement,
  type RunSummary,
} from './lib/closed-loop.js';
import { EchoClient, startEcho } from './lib/grpc-echo.js';
import { installOnDemand, REPO } from './lib/on-demand.js';

const BULLMQ_VERSION = '6.7.0';
const IOREDIS_VERSION = '6.0.0';

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    runs: { type: 'string', default: '3' },
    workers: { type: 'string', default: '2' },
    only: { type: 'string' },
    'serve-echo': { type: 'boolean', default: false },
  },
});
const CLIENTS = Number(values.clients);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const RUNS = Math.max(1, Number(values.runs));
const WORKERS = Number(values.workers);

interface Row {
  readonly name: string;
  readonly unit: string;
  readonly summary?: RunSummary;
  readonly note?: string;
}

async function runs(op: (client: number) => Promise<void>): Promise<RunSummary> {
  const ms: LoopMeasurement[] = [];
  for (let i = 0; i < RUNS; i++) ms.push(await closedLoop(CLIENTS, WARMUP, SECONDS, op));
  return summarize(ms);
}

/** Resolves with the first match of `re` on the child's stdout; rejects if it exits first. */
function waitForLine(child: ChildProcess, re: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(
      () => reject(new Error(`no line matching ${re} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = buf.match(re);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`child exited (${code ?? signal}) before printing ${re}`));
    });
  });
}

async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

// ---- BlockX through the Coordinator -------------------------------------------------------------------

async function blockxRow(): Promise<Row> {
  // The cluster as `npm start` runs it: the built CLI (dist/, which `npm run bench` builds first).
  const argv = ['up', '--no-demo', '--listen', '127.0.0.1:0', '--workers', String(WORKERS)];
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
    },
  });
  try {
    const m = await waitForLine(child, /coordinator listening on (\S+)/, 60_000);
    const client = new BlockxClient({ coordinator: m[1] as string });
    let attempts = 0;
    let tasks = 0;
    try {
      const op = async (): Promise<void> => {
        const r = await client.run({
          functionCallConfig: {
            type: 'CallListCallConfig',
            config: { function: 'hello_world', callList: [] },
          },
        });
        if (!r.success) throw new Error(`blockx task failed: ${r.failureCode} ${r.failureMessage}`);
        attempts += r.attempts;
        tasks++;
      };
      const summary = await runs(op);
      console.error(`  reserve/submit calls per task: ${(attempts / tasks).toFixed(2)}`);
      return {
        name: `BlockX via Coordinator (${WORKERS} workers), reserve → submit → watch, empty task`,
        unit: 'tasks',
        summary,
      };
    } finally {
      client.close();
    }
  } finally {
    await stopChild(child);
  }
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
  ) => BullClosable & { add(name: string, data: unknown, opts?: object): Promise<BullJob> };
  QueueEvents: new (name: string, opts: object) => BullClosable & { waitUntilReady(): Promise<unknown> };
  Worker: new (
    name: string,
    processor: () => Promise<unknown>,
    opts: object,
  ) => BullClosable & { waitUntilReady(): Promise<unknown> };
}

async function bullmqRow(): Promise<Row> {
  const name = `BullMQ ${BULLMQ_VERSION} + redis, add → completed, worker concurrency ${CLIENTS}`;
  const note = ensureRedis();
  if (note !== undefined) return { name, unit: 'jobs', note };
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
    const queueName = 'bench-noop';
    const queue = new bull.Queue(queueName, { connection });
    closables.push(queue);
    const events = new bull.QueueEvents(queueName, { connection });
    closables.push(events);
    const worker = new bull.Worker(queueName, async () => null, { connection, concurrency: CLIENTS });
    closables.push(worker);
    // Every job awaiting its completion listens on the queue and its events: 64 at once is the point.
    for (const c of closables) c.setMaxListeners(0);
    await Promise.all([events.waitUntilReady(), worker.waitUntilReady()]);
    const op = async (): Promise<void> => {
      const job = await queue.add('noop', {}, { removeOnComplete: 1000, removeOnFail: 1000 });
      await job.waitUntilFinished(events, 30_000);
    };
    return { name, unit: 'jobs', summary: await runs(op) };
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
      return { name: `raw grpc-js unary echo, ${CLIENTS} in flight`, unit: 'calls', summary };
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
  const cases: [string, () => Promise<Row>][] = [
    ['blockx', blockxRow],
    ['bullmq', bullmqRow],
    ['echo', echoRow],
  ];
  const rows: Row[] = [];
  for (const [key, run] of cases) {
    if (values.only !== undefined && !values.only.split(',').includes(key)) continue;
    console.error(`bench/bullmq: ${key} ...`);
    const row = await run();
    if (row.summary) console.error(`  ${fmtInt(row.summary.rate)} ${row.unit}/s`);
    rows.push(row);
  }
  console.log(
    `\nbullmq: ${CLIENTS} concurrent producers, closed loop; ${RUNS} runs × ${SECONDS} s after ${WARMUP} s warm-up, ` +
      `medians over the runs; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ` +
      `load average ${loadBefore} before the run\n`,
  );
  console.log('| what | throughput (median) | p50 | p99 | range over runs |');
  console.log('|---|---:|---:|---:|---:|');
  for (const r of rows) {
    const s = r.summary;
    if (s === undefined) {
      console.log(`| ${r.name} | skipped | | | ${r.note ?? ''} |`);
      continue;
    }
    console.log(
      `| ${r.name} | ${fmtInt(s.rate)} ${r.unit}/s | ${fmtMs(s.p50)} ms | ${fmtMs(s.p99)} ms | ${fmtInt(s.minRate)}–${fmtInt(s.maxRate)} |`,
    );
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
