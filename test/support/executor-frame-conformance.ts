// Frame-level conformance of an executor (docs/executor.md, "Frames"): one table of rows, each a
// sequence of frames the test sends as the Worker and the frames it expects back, run against the JS
// executor and the Python executor alike (test/integration/executor/frame-conformance.test.ts). The
// functions the rows call exist in both languages (FUNCTIONS below) with the same behaviour.
//
// The runner plays the Worker at the socket: it listens, spawns the executor with the supervisor's flags
// and the spawn secret on fd 3, checks the Hello and the first Heartbeat, then sends DefineEpoch for the
// language's functions and runs the rows in turn. Heartbeats are ignored while rows run.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { expect } from 'vitest';
import { computeEpochId } from '../../src/executor/code-epochs.js';
import { FrameDecoder, encodeFrame } from '../../src/executor/frame-codec.js';
import { executorSettingArgs } from '../../src/executor/executor-settings.js';
import { defaultExecutorConfig } from '../../src/kernel/config-defaults.js';

export type Language = 'js' | 'python';

/** One function per name, in each language, doing the same thing. */
export const FUNCTIONS: Record<string, Record<Language, string>> = {
  conf_echo: {
    js: 'export default async (ctx, ...args) => ({ args, taskId: ctx.taskId, callId: ctx.callId, attempt: ctx.attempt, block: ctx.block ?? null });\n',
    python:
      'def main(ctx, *args):\n    return {"args": list(args), "taskId": ctx.task_id, "callId": ctx.call_id, "attempt": ctx.attempt, "block": ctx.block}\n',
  },
  conf_none: {
    js: 'export default async () => undefined;\n',
    python: 'async def main(ctx):\n    return None\n',
  },
  conf_throw: {
    js: 'export default async () => { throw new Error("boom"); };\n',
    python: 'async def main(ctx):\n    raise ValueError("boom")\n',
  },
  conf_retry: {
    js: 'export default async () => { throw Object.assign(new Error("later"), { retryable: true }); };\n',
    python:
      'from blockx import RetryableError\n\n\nasync def main(ctx):\n    raise RetryableError("later")\n',
  },
  conf_get: {
    js: 'export default async (ctx, table, key) => ({ got: await ctx.io.get(table, key) });\n',
    python: 'async def main(ctx, table, key):\n    return {"got": await ctx.io.get(table, key)}\n',
  },
  conf_sub: {
    js: 'export default async (ctx, name, x) => ({ child: await ctx.call(name, x) });\n',
    python: 'async def main(ctx, name, x):\n    return {"child": await ctx.call(name, x)}\n',
  },
  conf_sleep: {
    js: 'export default (ctx, ms) => new Promise((resolve, reject) => { const t = setTimeout(resolve, ms, "slept"); ctx.signal.addEventListener("abort", () => { clearTimeout(t); reject(ctx.signal.reason); }); });\n',
    python:
      'import asyncio\n\n\nasync def main(ctx, ms):\n    await asyncio.sleep(ms / 1000)\n    return "slept"\n',
  },
};

const EXT: Record<Language, string> = { js: '.mjs', python: '.py' };

export type Frame = Record<string, unknown>;
/** `send`: frames to write (EPOCH in a string is replaced by the epoch id); `expect`: frames to read,
 * in order (`byCallId`: in any order, matched by callId), each matched as a subset (vitest
 * toMatchObject); `absent`: fields none of them may have; `quietMs`: after the expected frames, no
 * other non-heartbeat frame may arrive for this long. */
export type Step =
  | { readonly send: readonly Frame[] }
  | {
      readonly expect: readonly Frame[];
      readonly byCallId?: boolean;
      readonly absent?: readonly string[];
      readonly quietMs?: number;
    };

export interface ConformanceRow {
  readonly name: string;
  readonly steps: readonly Step[];
}

const call = (callId: string, fn: string, args: unknown[] = [], extra: Frame = {}): Frame => ({
  type: 'ExecuteCall',
  taskId: 'task-c',
  callId,
  attempt: 1,
  function: fn,
  args,
  codeEpoch: 'EPOCH',
  budgetMs: 10_000,
  ...extra,
});

/** An ExecuteCalls frame of task-c (docs/executor.md § Calls in bulk). */
const calls = (fn: string, entries: readonly Frame[], extra: Frame = {}): Frame => ({
  type: 'ExecuteCalls',
  taskId: 'task-c',
  function: fn,
  codeEpoch: 'EPOCH',
  budgetMs: 10_000,
  calls: entries,
  ...extra,
});

export const CONFORMANCE_ROWS: readonly ConformanceRow[] = [
  {
    name: 'a call completes with its JSON value and the ctx fields',
    steps: [
      {
        send: [
          call('echo-1', 'conf_echo', [1, 'a', { b: null }], {
            attempt: 2,
            callId: 'echo-1',
            block: { number: 7 },
          }),
        ],
      },
      {
        expect: [
          {
            type: 'CallCompleted',
            callId: 'echo-1',
            attempt: 2,
            value: {
              args: [1, 'a', { b: null }],
              taskId: 'task-c',
              callId: 'echo-1',
              attempt: 2,
              block: { number: 7 },
            },
          },
        ],
      },
    ],
  },
  {
    name: 'no value travels as an absent field',
    steps: [
      { send: [call('none-1', 'conf_none')] },
      { expect: [{ type: 'CallCompleted', callId: 'none-1' }], absent: ['value'] },
    ],
  },
  {
    name: 'a thrown error is a user failure, not retryable, with a stack',
    steps: [
      { send: [call('throw-1', 'conf_throw')] },
      {
        expect: [
          {
            type: 'CallFailed',
            callId: 'throw-1',
            attempt: 1,
            kind: 'user',
            retryable: false,
            stack: expect.stringContaining('conf_throw'),
          },
        ],
      },
    ],
  },
  {
    name: 'a retryable error is a retryable user failure',
    steps: [
      { send: [call('retry-1', 'conf_retry')] },
      { expect: [{ type: 'CallFailed', callId: 'retry-1', kind: 'user', retryable: true }] },
    ],
  },
  {
    name: 'an unknown function is a load failure FUNCTION_NOT_FOUND',
    steps: [
      { send: [call('nf-1', 'conf_missing')] },
      {
        expect: [
          { type: 'CallFailed', callId: 'nf-1', kind: 'load', retryable: false, code: 'FUNCTION_NOT_FOUND' },
        ],
      },
    ],
  },
  {
    name: 'an epoch never defined and not the directory is a load failure EPOCH_UNKNOWN',
    steps: [
      { send: [call('ep-1', 'conf_echo', [], { codeEpoch: 'ffffffffffffffff' })] },
      {
        expect: [
          { type: 'CallFailed', callId: 'ep-1', kind: 'load', retryable: false, code: 'EPOCH_UNKNOWN' },
        ],
      },
    ],
  },
  {
    name: 'an IO read is a CallWaiting answered by ResumeCall',
    steps: [
      { send: [call('io-1', 'conf_get', ['balances', 'alice'])] },
      {
        expect: [
          {
            type: 'CallWaiting',
            taskId: 'task-c',
            callId: 'io-1',
            attempt: 1,
            requestId: 1,
            request: { kind: 'io', op: 'get', table: 'balances', key: 'alice' },
          },
        ],
      },
      {
        send: [
          { type: 'ResumeCall', callId: 'io-1', attempt: 1, requestId: 1, ok: true, value: { balance: 10 } },
        ],
      },
      { expect: [{ type: 'CallCompleted', callId: 'io-1', value: { got: { balance: 10 } } }] },
    ],
  },
  {
    name: 'a failed IO answer that escapes fails the call with its kind and retryability',
    steps: [
      { send: [call('io-2', 'conf_get', ['balances', 'x'])] },
      { expect: [{ type: 'CallWaiting', callId: 'io-2', requestId: 1 }] },
      {
        send: [
          {
            type: 'ResumeCall',
            callId: 'io-2',
            attempt: 1,
            requestId: 1,
            ok: false,
            error: { message: 'storage down', kind: 'io', retryable: true },
          },
        ],
      },
      {
        expect: [
          {
            type: 'CallFailed',
            callId: 'io-2',
            kind: 'io',
            retryable: true,
            message: expect.stringContaining('storage down'),
          },
        ],
      },
    ],
  },
  {
    name: 'a subcall is a CallWaiting answered by ResumeCall',
    steps: [
      { send: [call('sub-1', 'conf_sub', ['conf_echo', 3])] },
      {
        expect: [
          {
            type: 'CallWaiting',
            callId: 'sub-1',
            requestId: 1,
            request: { kind: 'subcall', function: 'conf_echo', args: [3] },
          },
        ],
      },
      { send: [{ type: 'ResumeCall', callId: 'sub-1', attempt: 1, requestId: 1, ok: true, value: 42 }] },
      { expect: [{ type: 'CallCompleted', callId: 'sub-1', value: { child: 42 } }] },
    ],
  },
  {
    name: 'a slow call is reported started; CancelCall fails it with deadline, retryable',
    steps: [
      { send: [call('slow-1', 'conf_sleep', [20_000])] },
      { expect: [{ type: 'CallStarted', callId: 'slow-1', attempt: 1, elapsedMs: expect.any(Number) }] },
      { send: [{ type: 'CancelCall', callId: 'slow-1', attempt: 1, reason: 'deadline' }] },
      { expect: [{ type: 'CallFailed', callId: 'slow-1', kind: 'deadline', retryable: true }] },
    ],
  },
  {
    name: 'a malformed ExecuteCall is ignored and the executor keeps serving',
    steps: [
      { send: [{ ...call('bad-1', 'conf_echo'), attempt: 0 }, call('after-bad', 'conf_none')] },
      { expect: [{ type: 'CallCompleted', callId: 'after-bad' }], quietMs: 100 },
    ],
  },
  {
    name: 'ExecuteCalls runs each entry as its ExecuteCall, the task-level fields shared',
    steps: [
      {
        send: [
          calls(
            'conf_echo',
            [
              { callId: 'many-1', attempt: 1, args: [1] },
              { callId: 'many-2', attempt: 3, args: ['b', { c: null }] },
            ],
            { block: { number: 9 }, ioCache: 'task-c#many' },
          ),
        ],
      },
      {
        byCallId: true,
        expect: [
          {
            type: 'CallCompleted',
            callId: 'many-1',
            attempt: 1,
            value: { args: [1], taskId: 'task-c', callId: 'many-1', attempt: 1, block: { number: 9 } },
          },
          {
            type: 'CallCompleted',
            callId: 'many-2',
            attempt: 3,
            value: { args: ['b', { c: null }], callId: 'many-2', attempt: 3, block: { number: 9 } },
          },
        ],
      },
    ],
  },
  {
    name: 'each attempt of an ExecuteCalls is started, cancelled and failed on its own',
    steps: [
      {
        send: [
          calls('conf_sleep', [
            { callId: 'many-slow-1', attempt: 1, args: [20_000] },
            { callId: 'many-slow-2', attempt: 1, args: [20_000] },
          ]),
        ],
      },
      {
        byCallId: true,
        expect: [
          { type: 'CallStarted', callId: 'many-slow-1', attempt: 1 },
          { type: 'CallStarted', callId: 'many-slow-2', attempt: 1 },
        ],
      },
      { send: [{ type: 'CancelCall', callId: 'many-slow-2', attempt: 1, reason: 'deadline' }] },
      {
        expect: [{ type: 'CallFailed', callId: 'many-slow-2', kind: 'deadline', retryable: true }],
        quietMs: 100,
      },
      { send: [{ type: 'CancelCall', callId: 'many-slow-1', attempt: 1, reason: 'deadline' }] },
      { expect: [{ type: 'CallFailed', callId: 'many-slow-1', kind: 'deadline', retryable: true }] },
    ],
  },
  {
    name: 'a malformed ExecuteCalls entry is ignored, the others run; a malformed frame runs none',
    steps: [
      {
        send: [
          calls('conf_none', [
            { callId: 'many-bad', attempt: 0, args: [] },
            { callId: 'many-ok', attempt: 1, args: [] },
            { callId: 'many-noargs', attempt: 1 },
          ]),
          calls('conf_none', [{ callId: 'many-nobudget', attempt: 1, args: [] }], { budgetMs: -1 }),
          calls('conf_none', [], { calls: 'nope' }),
          call('after-many', 'conf_none'),
        ],
      },
      {
        byCallId: true,
        expect: [
          { type: 'CallCompleted', callId: 'after-many' },
          { type: 'CallCompleted', callId: 'many-ok' },
        ],
        quietMs: 100,
      },
    ],
  },
  {
    name: 'frames for unknown attempts (cancel, resume) are ignored',
    steps: [
      {
        send: [
          { type: 'CancelCall', callId: 'ghost', attempt: 1 },
          { type: 'ResumeCall', callId: 'ghost', attempt: 1, requestId: 1, ok: true, value: 1 },
          { type: 'DropIoCache', ioCache: 'task-c#1' },
          call('after-ghost', 'conf_none'),
        ],
      },
      { expect: [{ type: 'CallCompleted', callId: 'after-ghost' }], quietMs: 100 },
    ],
  },
];

/** An executor process behind a socket the test listens on, read frame by frame. */
export class FrameSession {
  readonly frames: Frame[] = [];
  hello: Frame | undefined;
  firstHeartbeat: Frame | undefined;
  epoch = '';
  closed = false;
  private readonly dir: string;
  private server: Server | undefined;
  private sock: Socket | undefined;
  private child: ChildProcess | undefined;
  private wake: (() => void) | undefined;
  readonly stderr: string[] = [];
  readonly secret = randomBytes(32).toString('hex');

  constructor(
    readonly language: Language,
    private readonly command: readonly string[],
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'bx-conf-'));
  }

  get functionsDir(): string {
    return join(this.dir, 'functions');
  }

  async start(): Promise<void> {
    const fdir = this.functionsDir;
    mkdirSync(fdir);
    const files = Object.entries(FUNCTIONS).map(([name, src]) => {
      const fileName = `${name}${EXT[this.language]}`;
      writeFileSync(join(fdir, fileName), src[this.language]);
      return { name, fileName, source: src[this.language] };
    });
    this.epoch = computeEpochId(files);
    const socketPath = join(this.dir, 'e.sock');
    const connected = new Promise<void>((resolve) => {
      this.server = createServer((s) => {
        this.sock = s;
        const decoder = new FrameDecoder();
        s.on('data', (chunk: Buffer) => {
          for (const f of decoder.push(chunk) as Frame[]) this.onFrame(f);
        });
        s.on('close', () => {
          this.closed = true;
          this.wake?.();
        });
        resolve();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(socketPath, resolve));
    const [cmd, ...prefix] = this.command;
    this.child = spawn(
      cmd!,
      [
        ...prefix,
        '--socket',
        socketPath,
        '--secret-fd',
        '3',
        '--functions-dir',
        fdir,
        // Every setting, as a Worker passes them: the executors have no defaults of their own.
        ...executorSettingArgs({ ...defaultExecutorConfig(), threads: 2, heartbeatIntervalMs: 100 }),
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    this.child.stderr!.on('data', (b: Buffer) => this.stderr.push(b.toString()));
    (this.child.stdio[3] as Writable).end(`${this.secret}\n`);
    await connected;
    await this.waitFor(() => this.firstHeartbeat !== undefined, 30_000, 'the first Heartbeat');
    this.send([{ type: 'DefineEpoch', epoch: this.epoch, functionsDir: fdir, files }]);
  }

  private onFrame(f: Frame): void {
    if (this.hello === undefined) this.hello = f;
    else if (f.type === 'Heartbeat') this.firstHeartbeat ??= f;
    // A CallStarted says a call is still running 25 ms after its pickup: on a loaded machine (load 20+)
    // any call can, which is progress, not a wrong answer. Only calls whose id names them slow are
    // meant to be reported started; the others' CallStarted frames are left out of `frames`.
    else if (f.type === 'CallStarted' && !String(f.callId).includes('slow')) return;
    else this.frames.push(f);
    this.wake?.();
  }

  send(frames: readonly Frame[]): void {
    const fill = (f: Frame): Frame =>
      JSON.parse(JSON.stringify(f).replaceAll('"EPOCH"', JSON.stringify(this.epoch))) as Frame;
    for (const f of frames) this.sock!.write(encodeFrame(fill(f)));
  }

  /** Write raw bytes (for framing errors). */
  writeRaw(bytes: Buffer): void {
    this.sock!.write(bytes);
  }

  /** Take `n` frames (in arrival order) once they are there. */
  async take(n: number, timeoutMs = 10_000): Promise<Frame[]> {
    await this.waitFor(() => this.frames.length >= n, timeoutMs, `${n} frame(s)`);
    return this.frames.splice(0, n);
  }

  waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        reject(
          new Error(
            `${this.language} executor: no ${what} within ${timeoutMs} ms; got ${JSON.stringify(this.frames)}; stderr ${this.stderr.join('')}`,
          ),
        );
      }, timeoutMs);
      const test = () => {
        if (check() || (this.closed && what !== 'close')) {
          clearTimeout(timer);
          this.wake = undefined;
          if (check()) resolve();
          else reject(new Error(`${this.language} executor closed the connection while waiting for ${what}`));
        }
      };
      this.wake = test;
      test();
    });
  }

  /** Resolves when the executor process has exited; its exit code. */
  exited(): Promise<number | null> {
    const child = this.child!;
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
    return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = this.exited();
      child.kill('SIGKILL');
      await gone;
    }
    this.sock?.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
