// What would a fresh JS execution thread per tenant cost? (issue 32, item 4; docs/security.md § Task
// isolation, "A thread is not reset between tenants")
//
//   npx tsx bench/thread-reset.ts [--starts 20] [--calls 20000]
//
// Under `isolation: task` a thread that drains one submitter's calls goes on with another's, keeping
// whatever the first patched outside the frozen realm. Resetting it would mean a new thread at each such
// switch. Both figures come from the same run, from the built executor's own isolation step (dist/):
//  - start: a new worker thread that runs isolateThread() (SES lockdown, frozen global), imports a
//    function module and answers: wall time and this process's CPU from `new Worker` to its first answer;
//  - the same thread without isolateThread (where the start's cost is);
//  - call: one warm isolated thread, no-op calls as messages (64 in flight): wall and CPU per call.
// The ratio says how many calls one reset costs; docs/security.md turns it into the cost at a given
// switch rate. Medians; the box is shared, so read them as ratios within the run.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { BUILT } from './lib/built.js';

const { values } = parseArgs({
  options: { starts: { type: 'string', default: '20' }, calls: { type: 'string', default: '20000' } },
});
const STARTS = Number(values.starts);
const CALLS = Number(values.calls);
const IN_FLIGHT = 64;

const root = join(import.meta.dirname, '..');
const isolation = pathToFileURL(join(root, 'dist', 'executor', 'task-isolation.js')).href;
const dir = mkdtempSync(join(tmpdir(), 'bx-thread-reset-'));
const fn = join(dir, 'noop.mjs');
writeFileSync(fn, 'export default async function noop(_ctx, x) { return x; }\n');

// The thread: isolate (or not: where the cost is), import the function, then answer each call message.
// No execArgv: the executor's threads run the built code without the bench's tsx loader.
const threadCode = (isolated: boolean): string => `
const { parentPort } = await import('node:worker_threads');
${isolated ? `const { isolateThread } = await import(${JSON.stringify(isolation)});\nawait isolateThread();` : ''}
const { default: f } = await import(${JSON.stringify(pathToFileURL(fn).href)});
parentPort.on('message', async (m) => parentPort.postMessage(await f({}, m)));
parentPort.postMessage('ready');
`;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function startThread(isolated = true): Promise<Worker> {
  const w = new Worker(threadCode(isolated), {
    eval: true,
    type: 'module',
    execArgv: [],
  } as ConstructorParameters<typeof Worker>[1]);
  return new Promise((resolve, reject) => {
    w.once('error', reject);
    w.once('message', () => resolve(w));
  });
}

async function measureStart(isolated: boolean): Promise<{ wallMs: number; cpuMs: number }> {
  const t0 = performance.now();
  const c0 = cpuMs();
  const w = await startThread(isolated);
  const out = { wallMs: performance.now() - t0, cpuMs: cpuMs() - c0 };
  await w.terminate();
  return out;
}

async function measureCalls(w: Worker): Promise<{ wallUs: number; cpuUs: number }> {
  const t0 = performance.now();
  const c0 = cpuMs();
  let sent = 0;
  let done = 0;
  await new Promise<void>((resolve) => {
    w.on('message', () => {
      done++;
      if (sent < CALLS) w.postMessage(sent++);
      if (done === CALLS) resolve();
    });
    for (; sent < Math.min(IN_FLIGHT, CALLS);) w.postMessage(sent++);
  });
  w.removeAllListeners('message');
  return { wallUs: ((performance.now() - t0) * 1000) / CALLS, cpuUs: ((cpuMs() - c0) * 1000) / CALLS };
}

async function main(): Promise<void> {
  if (!BUILT) throw new Error('run npm run build first: the bench times the built executor (dist/)');
  const starts: { wallMs: number; cpuMs: number }[] = [];
  const plainStarts: { wallMs: number; cpuMs: number }[] = [];
  const calls: { wallUs: number; cpuUs: number }[] = [];
  const warm = await startThread();
  try {
    // Alternate, so both see the same load.
    for (let i = 0; i < STARTS; i++) {
      starts.push(await measureStart(true));
      plainStarts.push(await measureStart(false));
      if (i % Math.max(1, Math.floor(STARTS / 5)) === 0) calls.push(await measureCalls(warm));
    }
  } finally {
    await warm.terminate();
    rmSync(dir, { recursive: true, force: true });
  }
  const start = { wall: median(starts.map((s) => s.wallMs)), cpu: median(starts.map((s) => s.cpuMs)) };
  const plain = {
    wall: median(plainStarts.map((s) => s.wallMs)),
    cpu: median(plainStarts.map((s) => s.cpuMs)),
  };
  const call = { wall: median(calls.map((c) => c.wallUs)), cpu: median(calls.map((c) => c.cpuUs)) };
  console.log(`## A fresh isolated execution thread against a call on a warm one\n`);
  console.log(
    `load ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}, ${STARTS} starts, ${calls.length} × ${CALLS} calls\n`,
  );
  console.log('| measure | wall | CPU (this process, all threads) |');
  console.log('| --- | ---: | ---: |');
  console.log(
    `| new isolated thread, to its first answer | ${start.wall.toFixed(1)} ms | ${start.cpu.toFixed(1)} ms |`,
  );
  console.log(
    `| new thread without isolation (isolation: none), to its first answer | ${plain.wall.toFixed(1)} ms | ${plain.cpu.toFixed(1)} ms |`,
  );
  console.log(`| no-op call on a warm thread | ${call.wall.toFixed(1)} µs | ${call.cpu.toFixed(1)} µs |`);
  console.log(
    `| one reset = calls | ${Math.round((start.wall * 1000) / call.wall)} | ${Math.round((start.cpu * 1000) / call.cpu)} |`,
  );
}

await main();
