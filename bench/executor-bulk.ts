// bench/executor-bulk: the executor alone, driven at its socket the way a Worker drives it, with the demo
// function (functions/erc20_transfers.ts, one event row per call) sent in ExecuteCalls frames; the row
// is the Executor CPU per call (the process's utime + stime from /proc, every thread; and of it its main
// thread's) and calls/s.
//
//   npx tsx bench/executor-bulk.ts [--root DIR]... [--calls 100000] [--batch 256] [--inflight 2048]
//                                  [--threads 2] [--runs 3] [--isolation task|none] [--profile DIR]
//                                  [--task-calls 4096] [--function erc20_transfers|hello_world] [--io-cache]
//                                  [--page N]
//
// `--task-calls N`: attempts per task (a new taskId every N calls). `--io-cache`: every task's frames carry
// an `ioCache` and the driver sends the task's `DropIoCache` once its results are in, as a Worker with read
// copies does at convergence. One-call tasks the way the Worker sends them to its Executor under
// `blockx submit` (the row is then CPU per task): `--task-calls 1 --batch 1 --inflight 16 --function
// hello_world --io-cache`.
//
// Each `--root` is a checkout with a build (`npm run build`): its executor runs as
// `node ROOT/bin/blockx.js executor` (default: this checkout only). Rows: each root without
// `bulkResults`, with it where the executor's Hello announces `CallsCompleted`, and with it and each
// call's arguments as JSON text (`argsJson`) where it announces `ArgsJson` too (docs/executor.md §
// Calls in bulk); runs alternate between the rows, and the table gives the median
// and each row's ratio to the first. A driver, not a Worker: it parses the answers and counts them.
// `--page N`: the calls go as pages of N (docs/executor.md § Pages), as a per-bundle backfill sends them:
// rows "pages, argsJson" (the page's text in the frame's JSON) and, where the executor announces
// ArgsBytes, "pages, argsAt" (the page's bytes in the frame's attachment); `--batch` calls per frame.
// `--profile DIR`: each executor runs with Node's `--cpu-prof --cpu-prof-dir DIR`, which profiles its
// main thread and every execution thread (EXECUTOR_CPU_PROFILE samples the main thread only), and is
// stopped by closing its socket so that it writes them. `--node-flag F` (repeatable) passes F to the
// executors' node, e.g. `--node-flag=--perf-basic-prof` for JS frames named in `perf record`.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { computeEpochId } from '../src/executor/code-epochs.js';
import { executorSettingArgs } from '../src/executor/executor-settings.js';
import { FrameDecoder, FrameWriter } from '../src/executor/frame-codec.js';
import { defaultExecutorConfig } from '../src/kernel/config-defaults.js';
import { cpuSnapshot } from './lib/proc-cpu.js';
import { transferBlock } from './lib/transfer-block.js';

const REPO = path.resolve(import.meta.dirname, '..');
let eventsJson: string[] = [];
const { values } = parseArgs({
  options: {
    root: { type: 'string', multiple: true },
    calls: { type: 'string', default: '100000' },
    batch: { type: 'string', default: '256' },
    inflight: { type: 'string', default: '2048' },
    threads: { type: 'string', default: '2' },
    runs: { type: 'string', default: '3' },
    isolation: { type: 'string', default: 'task' },
    profile: { type: 'string' },
    'node-flag': { type: 'string', multiple: true },
    'task-calls': { type: 'string', default: '4096' },
    function: { type: 'string', default: 'erc20_transfers' },
    'io-cache': { type: 'boolean', default: false },
    page: { type: 'string', default: '0' },
  },
});
const TASK_CALLS = Number(values['task-calls']);
const FUNCTION = values.function;
if (FUNCTION !== 'erc20_transfers' && FUNCTION !== 'hello_world')
  throw new Error(`--function: erc20_transfers or hello_world, not ${FUNCTION}`);
const CALLS = Number(values.calls);
const BATCH = Number(values.batch);
const INFLIGHT = Number(values.inflight);
const RUNS = Number(values.runs);
const PAGE = Number(values.page);
const ROOTS = (values.root ?? [REPO]).map((r) => path.resolve(r));

type Frame = Record<string, unknown>;

/** One executor process of one checkout, and the socket it dialled. */
class Driven {
  hello: Frame | undefined;
  private sock!: Socket;
  private writer!: FrameWriter;
  private readonly decoder = new FrameDecoder();
  private onFrame: (f: Frame) => void = () => undefined;
  private child!: ChildProcess;
  epoch = '';
  private readyWake: (() => void) | undefined;
  private heartbeats = 0;

  constructor(
    readonly root: string,
    private readonly dir: string,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  get bulkResults(): boolean {
    return ((this.hello?.features as string[] | undefined) ?? []).includes('CallsCompleted');
  }

  get argsBytes(): boolean {
    return ((this.hello?.features as string[] | undefined) ?? []).includes('ArgsBytes');
  }

  get argsJson(): boolean {
    return ((this.hello?.features as string[] | undefined) ?? []).includes('ArgsJson');
  }

  async start(functionsDir: string, files: { name: string; fileName: string; source: string }[]) {
    const socketPath = path.join(this.dir, `${randomBytes(4).toString('hex')}.sock`);
    const secret = randomBytes(32).toString('hex');
    const connected = new Promise<void>((resolve) => {
      const server = createServer((s) => {
        server.close();
        this.sock = s;
        this.writer = new FrameWriter(s);
        s.on('data', (chunk: Buffer) => {
          for (const f of this.decoder.push(chunk) as Frame[]) {
            if (f.type === 'Hello') this.hello = f;
            else if (f.type === 'Heartbeat') {
              if (this.heartbeats++ === 0) this.readyWake?.();
            } else this.onFrame(f);
          }
        });
        resolve();
      });
      server.listen(socketPath);
    });
    const ready = new Promise<void>((resolve) => (this.readyWake = resolve));
    const config = { ...defaultExecutorConfig(), threads: Number(values.threads) };
    this.child = spawn(
      process.execPath,
      [
        ...(values.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values.profile)}`] : []),
        ...(values['node-flag'] ?? []),
        path.join(this.root, 'bin', 'blockx.js'),
        'executor',
        '--socket',
        socketPath,
        '--secret-fd',
        '3',
        '--functions-dir',
        functionsDir,
        ...executorSettingArgs({ ...config, isolation: values.isolation as 'task' | 'none' }),
      ],
      { stdio: ['ignore', 'ignore', 'inherit', 'pipe'] },
    );
    (this.child.stdio[3] as Writable).end(`${secret}\n`);
    await connected;
    await ready;
    this.epoch = computeEpochId(files);
    this.writer.send({ type: 'DefineEpoch', epoch: this.epoch, functionsDir, files });
  }

  /** Sends `total` calls in frames of `batch`, `inflight` at a time; resolves with ms and CPU ms. */
  run(label: string, total: number, bulk: boolean, argsJson: boolean | 'bytes', events: readonly unknown[]) {
    return new Promise<{ ms: number; cpuMs: number; mainMs: number; failed: number }>((resolve) => {
      const cpu0 = cpuSnapshot(this.pid).cpuMs;
      const main0 = mainThreadCpuMs(this.pid);
      const t0 = performance.now();
      let sent = 0;
      let done = 0;
      let failed = 0;
      /** --io-cache: the results each task still waits for; at 0 its DropIoCache goes. */
      const open = new Map<string, number>();
      const taskOf = (i: number): string => `${label}/${Math.floor(i / TASK_CALLS)}`;
      const ended = (taskId: string, n: number): void => {
        if (!values['io-cache']) return;
        const left = open.get(taskId)! - n;
        if (left > 0) open.set(taskId, left);
        else {
          open.delete(taskId);
          this.writer.send({ type: 'DropIoCache', ioCache: `${taskId}#1` });
        }
      };
      const topUp = (): void => {
        while (sent < total && sent - done + BATCH <= INFLIGHT) {
          // A frame never spans two tasks (a Worker's ExecuteCalls is one task's).
          const n = Math.min(BATCH, total - sent, TASK_CALLS - (sent % TASK_CALLS));
          const taskId = taskOf(sent);
          if (values['io-cache']) open.set(taskId, (open.get(taskId) ?? 0) + n);
          const calls = [];
          const pieces: Buffer[] = [];
          let attached = 0;
          if (PAGE > 0) {
            // Pages of PAGE calls (the last may be shorter): one entry each, counted as its calls.
            for (let i = 0; i < n;) {
              const rows = Math.min(PAGE, n - i);
              const texts: string[] = [];
              for (let k = 0; k < rows; k++) texts.push(eventsJson[(sent + k) % events.length]!);
              const text = `[${texts.join(',')}]`;
              const page = { first: sent, blocks: [[rows, { number: 100 }]] };
              if (argsJson === 'bytes') {
                const b = Buffer.from(text);
                calls.push({ callId: `${label}/${sent}`, attempt: 1, argsAt: [attached, b.length], page });
                pieces.push(b);
                attached += b.length;
              } else calls.push({ callId: `${label}/${sent}`, attempt: 1, argsJson: text, page });
              pageRows.set(`${label}/${sent}`, rows);
              i += rows;
              sent += rows;
            }
          } else
            for (let i = 0; i < n; i++, sent++)
              calls.push(
                argsJson
                  ? { callId: `${label}/${sent}`, attempt: 1, argsJson: eventsJson[sent % events.length] }
                  : { callId: `${label}/${sent}`, attempt: 1, args: [events[sent % events.length]] },
              );
          const frame = {
            type: 'ExecuteCalls',
            taskId,
            function: FUNCTION,
            ...(values['io-cache'] ? { ioCache: `${taskId}#1` } : {}),
            codeEpoch: this.epoch,
            budgetMs: 10_000,
            ...(bulk ? { bulkResults: true } : {}),
            calls,
          };
          if (pieces.length > 0) this.writer.sendAttached(JSON.stringify(frame), pieces, attached);
          else this.writer.send(frame);
        }
      };
      /** Calls a page entry stands for, by its call id (1 for a call). */
      const pageRows = new Map<string, number>();
      const callsOf = (callId: unknown): number => {
        const rows = pageRows.get(String(callId));
        if (rows === undefined) return 1;
        pageRows.delete(String(callId));
        return rows;
      };
      this.onFrame = (f) => {
        const one = (callId: unknown) => taskOf(Number(String(callId).slice(label.length + 1)));
        if (f.type === 'CallsCompleted') {
          let n = 0;
          for (const r of f.results as { callId: string }[]) n += callsOf(r.callId);
          done += n;
          ended(f.taskId as string, n);
        } else if (f.type === 'CallCompleted') {
          const n = callsOf(f.callId);
          done += n;
          ended(one(f.callId), n);
        } else if (f.type === 'CallFailed') {
          const n = callsOf(f.callId);
          done += n;
          ended(one(f.callId), n);
          if (failed++ === 0) console.error(`${label}: a call failed: ${JSON.stringify(f)}`);
        } else return;
        if (done === total) {
          const cpuMs = cpuSnapshot(this.pid).cpuMs - cpu0;
          resolve({ ms: performance.now() - t0, cpuMs, mainMs: mainThreadCpuMs(this.pid) - main0, failed });
        } else topUp();
      };
      topUp();
    });
  }

  /** Closes the socket (the executor exits on it, writing its profiles); SIGKILL after 10 s. */
  async stop(): Promise<void> {
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.sock?.destroy();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    if (this.child.exitCode === null && this.child.signalCode === null) await exited;
    clearTimeout(timer);
  }
}

/** CPU ms of a process's main thread (its task whose id is the pid), from /proc; 10 ms resolution. */
function mainThreadCpuMs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bx-execbulk-'));
  const functionsDir = path.join(dir, 'functions');
  mkdirSync(functionsDir);
  const files = ['erc20_transfers', 'hello_world'].map((name) => {
    copyFileSync(path.join(REPO, 'functions', `${name}.ts`), path.join(functionsDir, `${name}.ts`));
    const source = readFileSync(path.join(functionsDir, `${name}.ts`), 'utf8');
    return { name, fileName: `${name}.ts`, source };
  });
  const events = transferBlock(1, 100, 1000).events;
  // The Worker has each call's arguments as JSON text when it builds a frame; so does this driver.
  eventsJson = events.map((e) => JSON.stringify([e]));
  const executors: Driven[] = [];
  try {
    for (const root of ROOTS) {
      const d = new Driven(root, dir);
      await d.start(functionsDir, files);
      executors.push(d);
    }
    const rows: { name: string; d: Driven; bulk: boolean; argsJson: boolean | 'bytes' }[] = [];
    for (const d of executors) {
      const name = d.root === REPO ? 'this checkout' : path.relative(REPO, d.root) || d.root;
      if (PAGE > 0) {
        rows.push({ name: `${name}, pages of ${PAGE}, argsJson`, d, bulk: true, argsJson: true });
        if (d.argsBytes)
          rows.push({ name: `${name}, pages of ${PAGE}, argsAt`, d, bulk: true, argsJson: 'bytes' });
        continue;
      }
      rows.push({ name: `${name}, per-attempt results`, d, bulk: false, argsJson: false });
      if (d.bulkResults) rows.push({ name: `${name}, bulkResults`, d, bulk: true, argsJson: false });
      if (d.bulkResults && d.argsJson)
        rows.push({ name: `${name}, bulkResults + argsJson`, d, bulk: true, argsJson: true });
    }
    // Warm-up: compile, module instances, JIT.
    for (const r of rows) await r.d.run('warm', Math.min(CALLS, 20_000), r.bulk, r.argsJson, events);
    const results = new Map<string, { cpuUs: number; mainUs: number; rate: number }[]>();
    for (let run = 0; run < RUNS; run++) {
      for (const r of rows) {
        const m = await r.d.run(`r${run}`, CALLS, r.bulk, r.argsJson, events);
        const got = {
          cpuUs: (m.cpuMs * 1000) / CALLS,
          mainUs: (m.mainMs * 1000) / CALLS,
          rate: (CALLS * 1000) / m.ms,
        };
        (results.get(r.name) ?? results.set(r.name, []).get(r.name)!).push(got);
        if (m.failed > 0) console.error(`${r.name}: ${m.failed} failed`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const first = median(results.get(rows[0]!.name)!.map((x) => x.cpuUs));
    console.log(
      `executor-bulk: ${CALLS} calls of ${FUNCTION} per run, ${TASK_CALLS} per task${values['io-cache'] ? ' (ioCache, DropIoCache per task)' : ''}, ` +
        `frames of ${BATCH}, ${INFLIGHT} in flight, ` +
        `${values.threads} threads, isolation ${values.isolation}, ${RUNS} runs, load ${loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')}`,
    );
    console.log(
      '| row | Executor CPU µs/call (median, range) | of it main thread | calls/s (median) | CPU vs first row |',
    );
    console.log('|---|---:|---:|---:|---:|');
    for (const r of rows) {
      const xs = results.get(r.name)!;
      const cpu = xs.map((x) => x.cpuUs);
      console.log(
        `| ${r.name} | ${median(cpu).toFixed(1)} (${Math.min(...cpu).toFixed(1)}–${Math.max(...cpu).toFixed(1)}) | ${median(xs.map((x) => x.mainUs)).toFixed(1)} | ${Math.round(median(xs.map((x) => x.rate)))} | ${(median(cpu) / first).toFixed(2)}× |`,
      );
    }
  } finally {
    await Promise.all(executors.map((d) => d.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
