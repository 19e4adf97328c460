// bench/worker-submit: 64 concurrent clients SubmitTask (no slot_id) one-call hello tasks directly to
// one in-process Worker over real gRPC (127.0.0.1), each watching its task to the terminal update.
// Reports tasks/s and p50/p99 submit-to-terminal latency, side by side with a raw grpc-js unary echo
// server measured in the same run with the same concurrency. Prints a markdown table.
//
//   npx tsx bench/worker-submit.ts [--clients 64] [--seconds 5] [--warmup 1] [--rate 1000]
//                                  [--same-process] [--client-thread]
//
// Setup: the servers (echo and Worker, the Worker from dist/ when built: bench/lib/built.ts) run in a
// child process, as a Worker is deployed, and the clients in this one; `--same-process` puts the servers on this process's main thread instead, and
// `--client-thread` moves the clients to a worker_thread. Echo and worker are always measured the same
// way, so their ratio is comparable. `BENCH_SERVER_CPU_PROF=DIR` writes a CPU profile of the server process.
// The worker runs functions in-process (the dispatcher over the in-process link: runWorker's default),
// so this measures the Worker protocol path; bench/calls measures the Executor path. It uses
// the repository's plugins; the task is `CallListCallConfig` hello_world with one call, no result handler.
//
// Rows: a closed loop with `--clients` in flight (throughput; by Little's law its latency is
// clients / throughput, so p50 < 5 ms at 64 in flight would need > 12,800 ops/s), one client in
// sequence (unloaded latency), and an open loop offering `--rate` tasks/s (latency at that load).
// Goal (issue 3): at least 1,000 tasks/s and p50 under 5 ms.
import * as grpc from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { CLIENT_CHANNEL_OPTIONS } from '../src/grpc/channel-options.js';
import { createWorkerClient } from '../src/grpc/clients.js';
import { taskInputToWire } from '../src/grpc/convert.js';
import type { WorkerServiceClient } from '../src/grpc/proto.js';
import type { TaskUpdateWireOut } from '../src/grpc/wire-types.js';
import type * as KernelModule from '../src/kernel/kernel.js';
import type * as RunWorkerModule from '../src/services/worker/app/run-worker.js';
import { builtLabel, loadBuilt } from './lib/built.js';
import { EchoClient, startEcho } from './lib/grpc-echo.js';

const REPO = path.resolve(import.meta.dirname, '..');

interface Settings {
  readonly clients: number;
  readonly seconds: number;
  readonly warmup: number;
  readonly rate: number;
}

interface Measurement {
  readonly ops: number;
  readonly seconds: number;
  readonly latenciesMs: number[];
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Closed loop: `clients` loops of `op`, WARMUP s discarded, then SECONDS s measured. */
async function measure(
  set: Settings,
  clients: number,
  op: (client: number) => Promise<void>,
): Promise<Measurement> {
  const latencies: number[] = [];
  let recording = false;
  let stop = false;
  let ops = 0;
  const loop = async (client: number): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      await op(client);
      if (recording) {
        latencies.push(performance.now() - t0);
        ops++;
      }
    }
  };
  const loops = Array.from({ length: clients }, (_, i) => loop(i));
  await new Promise((r) => setTimeout(r, set.warmup * 1000));
  recording = true;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, set.seconds * 1000));
  recording = false;
  const seconds = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all(loops);
  return { ops, seconds, latenciesMs: latencies.sort((a, b) => a - b) };
}

/** Open loop: offers `rate` ops/s for SECONDS s (after WARMUP s), whatever the latency; at most 4,096 in flight. */
async function measureOpenLoop(set: Settings, op: () => Promise<void>): Promise<Measurement> {
  const latencies: number[] = [];
  let inFlight = 0;
  let dropped = 0;
  const fire = (record: boolean): void => {
    if (inFlight >= 4096) {
      dropped++;
      return;
    }
    inFlight++;
    const t0 = performance.now();
    void op().then(() => {
      inFlight--;
      if (record) latencies.push(performance.now() - t0);
    });
  };
  const run = async (seconds: number, record: boolean): Promise<number> => {
    const start = performance.now();
    let issued = 0;
    for (;;) {
      const elapsed = (performance.now() - start) / 1000;
      if (elapsed >= seconds) break;
      const due = Math.floor(elapsed * set.rate);
      for (; issued < due; issued++) fire(record);
      await new Promise((r) => setTimeout(r, 1));
    }
    return (performance.now() - start) / 1000;
  };
  await run(set.warmup, false);
  const seconds = await run(set.seconds, true);
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
  if (dropped > 0) console.error(`open loop: ${dropped} submissions dropped (more than 4,096 in flight)`);
  return { ops: latencies.length, seconds, latenciesMs: latencies.sort((a, b) => a - b) };
}

// ---- Client side (a worker_thread) ----------------------------------------------------------------------

interface ClientJob {
  readonly settings: Settings;
  readonly echoAddr: string;
  readonly workerAddr: string;
}

export interface Results {
  readonly echoLoaded: Measurement;
  readonly workerLoaded: Measurement;
  readonly echoSequential: Measurement;
  readonly workerSequential: Measurement;
  readonly workerOpenLoop: Measurement;
  readonly workerOpenLoopHalf: Measurement;
}

async function runClients(job: ClientJob): Promise<Results> {
  const set = job.settings;
  const payload = Buffer.from('hello, bench');
  const echoClients = Array.from(
    { length: set.clients },
    () => new EchoClient(job.echoAddr, grpc.credentials.createInsecure(), CLIENT_CHANNEL_OPTIONS),
  );
  const echo = (client: EchoClient): Promise<void> =>
    new Promise((resolve, reject) => client.Echo(payload, (e) => (e ? reject(e) : resolve())));

  const workerClients = Array.from({ length: set.clients }, () => createWorkerClient(job.workerAddr));
  let seq = 0;
  const submitAndWatch = (client: WorkerServiceClient): Promise<void> => {
    const taskId = `bench-${process.pid}-${++seq}`;
    const task = taskInputToWire({
      taskId,
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'hello_world', callList: [['bench']] },
      },
      taskTimeoutMs: 0,
    });
    return new Promise<void>((resolve, reject) => {
      client.submitTask({ task }, (err) => {
        if (err) return reject(err);
        const stream = client.watchTasks({ taskIds: [taskId] });
        stream.on('data', (u: TaskUpdateWireOut) => {
          if (u.isTerminal && u.state !== 'TASK_STATE_SUCCEEDED') {
            reject(new Error(`task ${taskId}: ${u.state} ${u.error}`));
          }
        });
        stream.on('end', () => resolve());
        stream.on('error', reject);
      });
    });
  };
  const anyWorkerClient = workerClients[0] as WorkerServiceClient;
  try {
    const echoLoaded = await measure(set, set.clients, (i) => echo(echoClients[i] as EchoClient));
    const workerLoaded = await measure(set, set.clients, (i) =>
      submitAndWatch(workerClients[i] as WorkerServiceClient),
    );
    const echoSequential = await measure(set, 1, () => echo(echoClients[0] as EchoClient));
    const workerSequential = await measure(set, 1, () => submitAndWatch(anyWorkerClient));
    const workerOpenLoop = await measureOpenLoop(set, () => submitAndWatch(anyWorkerClient));
    const half = { ...set, rate: set.rate / 2 };
    const workerOpenLoopHalf = await measureOpenLoop(half, () => submitAndWatch(anyWorkerClient));
    return { echoLoaded, workerLoaded, echoSequential, workerSequential, workerOpenLoop, workerOpenLoopHalf };
  } finally {
    for (const c of [...echoClients, ...workerClients]) c.close();
  }
}

// ---- Server side (main thread) -----------------------------------------------------------------------

/** A worker_thread does not inherit tsx's loader: register it there, then load this file. */
const CLIENT_THREAD_BOOTSTRAP = `(async () => {
  (await import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})).register();
  await import(${JSON.stringify(import.meta.url)});
})();`;

function row(name: string, unit: string, m: Measurement): string {
  const rate = Math.round(m.ops / m.seconds).toLocaleString('en-US');
  const p50 = percentile(m.latenciesMs, 50).toFixed(2);
  const p99 = percentile(m.latenciesMs, 99).toFixed(2);
  return `| ${name} | ${rate} ${unit}/s | ${p50} ms | ${p99} ms | ${m.ops.toLocaleString('en-US')} |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      clients: { type: 'string', default: '64' },
      seconds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      rate: { type: 'string', default: '1000' },
      'client-thread': { type: 'boolean', default: false },
      'same-process': { type: 'boolean', default: false },
    },
  });
  const settings: Settings = {
    clients: Number(values.clients),
    seconds: Number(values.seconds),
    warmup: Number(values.warmup),
    rate: Number(values.rate),
  };
  const loadBefore = loadavg()[0] ?? 0;
  const servers = values['same-process'] === true ? await startServers() : await spawnServers();
  const job: ClientJob = { settings, echoAddr: servers.echoAddr, workerAddr: servers.workerAddr };
  const sameThread = values['client-thread'] !== true;
  const results = sameThread
    ? await runClients(job)
    : await new Promise<Results>((resolve, reject) => {
        const thread = new Worker(CLIENT_THREAD_BOOTSTRAP, { eval: true, workerData: job });
        thread.once('message', (r: Results) => resolve(r));
        thread.once('error', reject);
        thread.once('exit', (code) => reject(new Error(`client thread exited (${code}) without results`)));
      });
  await servers.stop();

  const { clients, seconds, warmup, rate } = settings;
  console.log(
    `\nworker-submit: ${seconds} s measured after ${warmup} s warm-up per row; 127.0.0.1; ` +
      `servers ${values['same-process'] === true ? 'in this process' : 'in their own process (as deployed)'}, ` +
      `clients on ${sameThread ? 'the main thread' : 'a worker_thread'}; ${builtLabel()}; ` +
      `Node ${process.version}; ${cpus().length} cores, load average ${loadBefore.toFixed(2)} before the run\n`,
  );
  console.log('| what | throughput | p50 | p99 | ops |');
  console.log('|---|---|---|---|---|');
  console.log(row(`raw grpc-js unary echo, ${clients} in flight`, 'calls', results.echoLoaded));
  console.log(row(`worker SubmitTask → terminal, ${clients} clients`, 'tasks', results.workerLoaded));
  console.log(row('raw grpc-js unary echo, 1 client', 'calls', results.echoSequential));
  console.log(row('worker SubmitTask → terminal, 1 client', 'tasks', results.workerSequential));
  console.log(row(`worker SubmitTask → terminal, open loop at ${rate}/s`, 'tasks', results.workerOpenLoop));
  console.log(
    row(`worker SubmitTask → terminal, open loop at ${rate / 2}/s`, 'tasks', results.workerOpenLoopHalf),
  );
  const loadedRate = results.workerLoaded.ops / results.workerLoaded.seconds;
  const openP50 = percentile(results.workerOpenLoop.latenciesMs, 50);
  console.log(
    `\ngoal: >= 1,000 tasks/s (${clients} clients: ${Math.round(loadedRate)}) ${loadedRate >= 1000 ? 'met' : 'NOT met'}; ` +
      `p50 < 5 ms at ${rate} tasks/s offered (${openP50.toFixed(2)} ms) ${openP50 < 5 ? 'met' : 'NOT met'}`,
  );
}

interface Servers {
  readonly echoAddr: string;
  readonly workerAddr: string;
  stop(): Promise<void>;
}

/** The echo server and a Worker (block deployment, repository plugins) in this process. */
async function startServers(): Promise<Servers> {
  const { bootKernel } = await loadBuilt<typeof KernelModule>('kernel/kernel');
  const { runWorker } = await loadBuilt<typeof RunWorkerModule>('services/worker/app/run-worker');
  const kernel = await bootKernel({ configPath: path.join(REPO, 'blockx.config.yaml'), env: {} });
  const worker = await runWorker({
    config: kernel.config,
    deployment: 'block',
    plugins: kernel.plugins,
    listen: '127.0.0.1:0',
  });
  const echo = await startEcho();
  return {
    echoAddr: echo.addr,
    workerAddr: worker.address,
    stop: async () => {
      echo.stop();
      await worker.close();
    },
  };
}

/**
 * The same servers in a child process, as a Worker is deployed: the clients' CPU is not the server's.
 * The child prints its addresses as one JSON line and stops when its stdin closes.
 */
async function spawnServers(): Promise<Servers> {
  const profile = process.env.BENCH_SERVER_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SERVER_CPU_PROF}`]
    : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', fileURLToPath(import.meta.url), '--serve'],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(buf.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`server process exited (${code})`)));
  });
  const { echoAddr, workerAddr } = JSON.parse(line) as { echoAddr: string; workerAddr: string };
  return {
    echoAddr,
    workerAddr,
    stop: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin.end();
      await exited;
    },
  };
}

async function serve(): Promise<void> {
  const servers = await startServers();
  process.stdout.write(`${JSON.stringify({ echoAddr: servers.echoAddr, workerAddr: servers.workerAddr })}\n`);
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  await servers.stop();
}

if (isMainThread && process.argv.includes('--serve')) {
  await serve();
} else if (isMainThread) {
  await main();
} else {
  const results = await runClients(workerData as ClientJob);
  parentPort?.postMessage(results);
}
