// bench/worker-rss: the memory a Worker holds for retained results. A Worker (runWorker, block
// deployment, functions in-process: runWorker's default in-process link) runs in its own process with RESULT_RETENTION_MS of
// a day; this process submits `--tasks` empty tasks to it (SubmitTask without a slot: the Worker reserves
// inline; CallListCallConfig with an empty call list, no result handler) from `--inflight` concurrent
// clients, waits until none is running, then reads the Worker's RSS (/proc/<pid>/status VmRSS) and heap
// (after a full GC in the Worker) — before (after a 1,000-task warm-up) and after. Checks that the first
// task's result is still retained (GetTaskResult). Prints one markdown table.
//
//   npx tsx bench/worker-rss.ts [--tasks 100000] [--inflight 128]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createWorkerClient, unaryCall } from '../src/grpc/clients.js';
import { taskInputToWire } from '../src/grpc/convert.js';
import type { WorkerServiceClient } from '../src/grpc/proto.js';
import type { GetTaskResultResponseWireOut, SubmitTaskResponseWireOut } from '../src/grpc/wire-types.js';
import { bootKernel } from '../src/kernel/kernel.js';
import { runWorker } from '../src/services/worker/app/run-worker.js';
import { fmtInt } from './lib/closed-loop.js';

const REPO = path.resolve(import.meta.dirname, '..');
const RETENTION_MS = 86_400_000;

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '100000' },
    inflight: { type: 'string', default: '128' },
    serve: { type: 'boolean', default: false },
  },
});
const TASKS = Number(values.tasks);
const INFLIGHT = Number(values.inflight);

interface Stat {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly reserved: number;
  readonly running: number;
}

// ---- the Worker process ----------------------------------------------------------------------------------

async function serve(): Promise<void> {
  const kernel = await bootKernel({
    configPath: path.join(REPO, 'blockx.config.yaml'),
    cwd: REPO,
    env: {
      RESULT_RETENTION_MS: String(RETENTION_MS),
      WORKER_TASK_SLOTS: String(Math.max(256, INFLIGHT * 2)),
      BLOCKX_LOG_LEVEL: 'error',
    },
    deployments: ['block'],
  });
  const worker = await runWorker({
    config: kernel.config,
    deployment: 'block',
    plugins: kernel.plugins,
    listen: '127.0.0.1:0',
  });
  process.stdout.write(`worker on ${worker.address}\n`);
  const gc = (globalThis as { gc?: () => void }).gc;
  for await (const line of createInterface({ input: process.stdin })) {
    if (line !== 'stat') continue;
    gc?.();
    const m = process.memoryUsage();
    const hb = worker.core.deriveHeartbeat(Date.now());
    const stat: Stat = {
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      reserved: hb.reservedSlots,
      running: hb.runningTasks,
    };
    process.stdout.write(`stat ${JSON.stringify(stat)}\n`);
  }
  await worker.close();
}

// ---- the driver ------------------------------------------------------------------------------------------

function vmRss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', import.meta.filename, '--serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextLine = async (prefix: string): Promise<string> => {
    for (;;) {
      const r = await lines.next();
      if (r.done === true) throw new Error(`worker process ended before "${prefix}"`);
      if (r.value.startsWith(prefix)) return r.value.slice(prefix.length);
    }
  };
  const stat = async (): Promise<Stat & { vmRss: number }> => {
    child.stdin.write('stat\n');
    const s = JSON.parse(await nextLine('stat ')) as Stat;
    return { ...s, vmRss: vmRss(child.pid ?? 0) };
  };
  let client: WorkerServiceClient | undefined;
  try {
    const addr = await nextLine('worker on ');
    client = createWorkerClient(addr);
    const c = client;
    let seq = 0;
    const submit = async (): Promise<void> => {
      const task = taskInputToWire({
        taskId: `rss-${++seq}`,
        functionCallConfig: { type: 'CallListCallConfig', config: { function: 'hello_world', callList: [] } },
        taskTimeoutMs: 0,
      });
      await unaryCall<SubmitTaskResponseWireOut>(
        (md, o, cb) => c.submitTask({ task, slotId: '' }, md, o, cb),
        { timeoutMs: 30_000 },
      );
    };
    const drive = async (n: number): Promise<void> => {
      let left = n;
      const lane = async (): Promise<void> => {
        while (left > 0) {
          left--;
          await submit();
        }
      };
      await Promise.all(Array.from({ length: Math.min(INFLIGHT, n) }, lane));
      for (;;) {
        const s = await stat();
        if (s.running === 0 && s.reserved === 0) return;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await drive(1_000);
    const before = await stat();
    const t0 = performance.now();
    await drive(TASKS);
    const seconds = (performance.now() - t0) / 1000;
    const after = await stat();
    const first = await unaryCall<GetTaskResultResponseWireOut>(
      (md, o, cb) => c.getTaskResult({ taskId: 'rss-1' }, md, o, cb),
      { timeoutMs: 10_000 },
    );
    const retained = JSON.stringify(first).includes('SUCCEEDED');
    const total = TASKS + 1_000;

    console.log(
      `\nworker-rss: ${fmtInt(TASKS)} empty tasks (after 1,000 warm-up) into one Worker process (in-process link, ` +
        `RESULT_RETENTION_MS ${fmtInt(RETENTION_MS)}), ${INFLIGHT} SubmitTask in flight, ${fmtInt(TASKS / seconds)} tasks/s; ` +
        `heap after a full GC; first task's result still retained: ${retained ? 'yes' : 'NO'}; ` +
        `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}\n`,
    );
    console.log(
      `| worker memory | before (${fmtInt(1_000)} retained) | after (${fmtInt(total)} retained) | growth | per retained result |`,
    );
    console.log('|---|---:|---:|---:|---:|');
    const row = (name: string, a: number, b: number): void =>
      console.log(`| ${name} | ${mib(a)} | ${mib(b)} | ${mib(b - a)} | ${fmtInt((b - a) / TASKS)} B |`);
    row('RSS (VmRSS)', before.vmRss, after.vmRss);
    row('V8 heap used', before.heapUsed, after.heapUsed);
    row('V8 heap total', before.heapTotal, after.heapTotal);
    row('external', before.external, after.external);
    console.log(
      `\n<!-- bench-chart worker-rss ${JSON.stringify({ rssAfter: after.vmRss, rssBefore: before.vmRss })} -->`,
    );
  } finally {
    client?.close();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

if (values.serve) {
  await serve();
} else {
  await main();
  process.exit(0);
}
