// Which execution unit should the executor use? And how fast is the whole call path?
//
//   node --import tsx bench/executor-units.ts [--calls 100000] [--inflight 1024] [--units 2] [--only NAME]
//
// Cases, each pushing no-op calls with a fixed number in flight and printing calls/s:
//  - inline:        the call runs on the router itself (no isolation; the ceiling, not an option).
//  - threads:       worker_threads, batched postMessage of raw call JSON (what the executor does).
//  - processes:     child processes, batched length-prefixed JSON over stdio pipes.
//  - uds-pingpong:  a raw length-prefixed JSON echo over a Unix socket (the transport alone).
//  - link:          ExecutorLink → executor process (from src/ under tsx) → ExecutorLink, end to end.
// Units do the same work per call: parse the call JSON, await an async no-op, serialise the result.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { FunctionCodeView } from '../src/executor/code-epochs.js';
import { FrameDecoder, FrameWriter } from '../src/executor/frame-codec.js';
import {
  ExecutorSupervisor,
  tsxExecutorCommand,
} from '../src/services/call-host/adapters/executor-supervisor.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '100000' },
    inflight: { type: 'string', default: '1024' },
    units: { type: 'string', default: '2' },
    only: { type: 'string' },
  },
});
const CALLS = Number(values.calls);
const INFLIGHT = Number(values.inflight);
const UNITS = Number(values.units);

// The per-call work of a unit, shared by the thread and process variants.
const UNIT_CORE = `
const noop = async () => null;
function runBatch(raws, reply) {
  const out = [];
  let pending = raws.length;
  for (const raw of raws) {
    const call = JSON.parse(raw);
    noop(...call.args).then((value) => {
      out.push(JSON.stringify({ type: 'CallCompleted', callId: call.callId, attempt: call.attempt, value }));
      if (--pending === 0) reply(out);
    });
  }
}`;

const THREAD_UNIT = `${UNIT_CORE}
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (raws) => runBatch(raws, (out) => parentPort.postMessage(out)));`;

const PROCESS_UNIT = `${UNIT_CORE}
let buf = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
  while (buf.length >= 4) {
    const len = buf.readUInt32BE(0);
    if (buf.length < 4 + len) break;
    const raws = JSON.parse(buf.toString('utf8', 4, 4 + len));
    buf = buf.subarray(4 + len);
    runBatch(raws, (out) => {
      const json = JSON.stringify(out);
      const frame = Buffer.allocUnsafe(4 + Buffer.byteLength(json));
      frame.writeUInt32BE(frame.length - 4, 0);
      frame.write(json, 4);
      process.stdout.write(frame);
    });
  }
});`;

interface Unit {
  send(raws: string[]): void;
  close(): void;
}

/** Drive `CALLS` calls through `units` with `INFLIGHT` in flight; the router batches per tick. */
async function routerBench(
  makeUnit: (onResults: (jsons: string[]) => void) => Unit,
  n: number,
): Promise<number> {
  return new Promise((resolve) => {
    let next = 0;
    let done = 0;
    const start = performance.now();
    const outboxes: string[][] = [];
    let scheduled = false;
    let rr = 0;
    const units: Unit[] = [];
    const flush = () => {
      scheduled = false;
      outboxes.forEach((box, i) => {
        if (box.length) units[i]!.send(box.splice(0));
      });
    };
    const submit = () => {
      const i = next++;
      const raw = JSON.stringify({
        type: 'ExecuteCall',
        taskId: 't',
        callId: `c${i}`,
        attempt: 1,
        function: 'noop',
        args: [],
        codeEpoch: 'e',
        budgetMs: 5000,
      });
      outboxes[rr++ % units.length]!.push(raw);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    };
    const onResults = (jsons: string[]) => {
      for (const j of jsons) {
        JSON.parse(j);
        done++;
        if (next < CALLS) submit();
      }
      if (done === CALLS) {
        const ms = performance.now() - start;
        units.forEach((u) => u.close());
        resolve((CALLS / ms) * 1000);
      }
    };
    for (let i = 0; i < n; i++) {
      units.push(makeUnit(onResults));
      outboxes.push([]);
    }
    for (let i = 0; i < Math.min(INFLIGHT, CALLS); i++) submit();
  });
}

async function inlineBench(): Promise<number> {
  let received: ((jsons: string[]) => void) | undefined;
  const run = new Function('raws', 'reply', `${UNIT_CORE}; return runBatch(raws, reply);`) as (
    raws: string[],
    reply: (out: string[]) => void,
  ) => void;
  return routerBench((onResults) => {
    received = onResults;
    return { send: (raws) => run(raws, (out) => setImmediate(() => received!(out))), close: () => {} };
  }, 1);
}

async function threadsBench(): Promise<number> {
  const workers: Worker[] = [];
  for (let i = 0; i < UNITS; i++) workers.push(new Worker(THREAD_UNIT, { eval: true }));
  await Promise.all(workers.map((w) => new Promise((r) => w.once('online', r))));
  let i = 0;
  return routerBench((onResults) => {
    const w = workers[i++]!;
    w.on('message', onResults);
    return { send: (raws) => w.postMessage(raws), close: () => void w.terminate() };
  }, UNITS);
}

async function processesBench(): Promise<number> {
  return routerBench((onResults) => {
    const child = spawn(process.execPath, ['-e', PROCESS_UNIT], { stdio: ['pipe', 'pipe', 'inherit'] });
    let buf: Buffer = Buffer.alloc(0);
    child.stdout.on('data', (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 4) {
        const len = buf.readUInt32BE(0);
        if (buf.length < 4 + len) break;
        const out = JSON.parse(buf.toString('utf8', 4, 4 + len)) as string[];
        buf = buf.subarray(4 + len);
        onResults(out);
      }
    });
    return {
      send: (raws) => {
        const json = JSON.stringify(raws);
        const frame = Buffer.allocUnsafe(4 + Buffer.byteLength(json));
        frame.writeUInt32BE(frame.length - 4, 0);
        frame.write(json, 4);
        child.stdin.write(frame);
      },
      close: () => child.kill(),
    };
  }, UNITS);
}

async function udsPingPong(dir: string): Promise<number> {
  const path = join(dir, 'pp.sock');
  const server = createServer((sock) => {
    const d = new FrameDecoder();
    const w = new FrameWriter(sock);
    sock.on('data', (c) => {
      for (const raw of d.pushRaw(c)) {
        const m = JSON.parse(raw) as { callId: string; attempt: number };
        w.send({ type: 'CallCompleted', callId: m.callId, attempt: m.attempt, value: null });
      }
    });
  });
  await new Promise<void>((r) => server.listen(path, r));
  const sock = connect(path);
  await new Promise((r) => sock.once('connect', r));
  const d = new FrameDecoder();
  const w = new FrameWriter(sock);
  const rate = await new Promise<number>((resolve) => {
    let next = 0;
    let done = 0;
    const start = performance.now();
    const submit = () => {
      const i = next++;
      w.send({
        type: 'ExecuteCall',
        taskId: 't',
        callId: `c${i}`,
        attempt: 1,
        function: 'noop',
        args: [],
        codeEpoch: 'e',
        budgetMs: 5000,
      });
    };
    sock.on('data', (c) => {
      for (const raw of d.pushRaw(c)) {
        JSON.parse(raw);
        done++;
        if (next < CALLS) submit();
        if (done === CALLS) resolve((CALLS / (performance.now() - start)) * 1000);
      }
    });
    for (let i = 0; i < Math.min(INFLIGHT, CALLS); i++) submit();
  });
  sock.destroy();
  server.close();
  return rate;
}

/** Through the real ExecutorLink and executor process; returns calls/s. Exported for the process test. */
export async function linkBench(options: {
  dir: string;
  functionsDir: string;
  calls: number;
  inflight: number;
  threads?: number;
}): Promise<number> {
  const view = new FunctionCodeView({ dir: options.functionsDir });
  const epoch = await view.pinCurrent();
  let onTerminal: () => void = () => {};
  const sup = new ExecutorSupervisor({
    socketPath: join(options.dir, 'link.sock'),
    functionsDir: options.functionsDir,
    command: tsxExecutorCommand(),
    epochs: view,
    ...(options.threads !== undefined ? { threads: options.threads } : {}),
    onLog: () => {},
    onEvent: (ev) => {
      if (ev.type === 'callFailed') throw new Error(`call failed: ${ev.message}`);
      if (ev.type === 'callCompleted') onTerminal();
    },
  });
  await sup.start();
  await sup.whenReady();
  const run = (calls: number, prefix: string) =>
    new Promise<number>((resolve) => {
      let next = 0;
      let done = 0;
      const start = performance.now();
      const submit = () => {
        const i = next++;
        sup.link.executeCall({
          taskId: 't',
          callId: `${prefix}${i}`,
          attempt: 1,
          function: 'noop',
          args: [],
          codeEpoch: epoch,
          budgetMs: 5000,
        });
      };
      onTerminal = () => {
        done++;
        if (next < calls) submit();
        if (done === calls) resolve((calls / (performance.now() - start)) * 1000);
      };
      for (let i = 0; i < Math.min(options.inflight, calls); i++) submit();
    });
  await run(2_000, 'warm-'); // load the module on every thread before timing
  const finished = run(options.calls, 'm');
  const rate = await finished;
  await sup.stop();
  return rate;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bx-bench-'));
  const functionsDir = fileURLToPath(new URL('../test/fixtures/functions/', import.meta.url));
  const cases: [string, () => Promise<number>][] = [
    ['inline', inlineBench],
    ['threads', threadsBench],
    ['processes', processesBench],
    ['uds-pingpong', () => udsPingPong(dir)],
    ['link', () => linkBench({ dir, functionsDir, calls: CALLS, inflight: INFLIGHT, threads: UNITS })],
  ];
  console.log(`${CALLS} no-op calls, ${INFLIGHT} in flight, ${UNITS} units`);
  try {
    for (const [name, run] of cases) {
      if (values.only && values.only !== name) continue;
      const rate = await run();
      console.log(
        `${name.padEnd(14)} ${Math.round(rate).toLocaleString('en-US').padStart(9)} calls/s  ${(1e6 / rate).toFixed(1).padStart(6)} µs/call`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) await main();
