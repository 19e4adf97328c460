// The in-process Calls phase (createInProcessCallRunner): the real ExecutorCallRunner and dispatcher over
// an InProcessLink, with real function files in a temp folder (JS, MJS and TS). The dispatcher's one timer
// runs on virtual time: a timer armed while no call runs in the link (a retry's backoff) fires at once;
// budgets are cut off by advancing the clock by hand.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallSpec } from '../../../../../src/kernel/plugin-types.js';
import {
  resolveDispatcherConfig,
  type DispatcherConfig,
} from '../../../../../src/services/call-host/core/dispatcher/index.js';
import type {
  CallIoHandler,
  RunnerTimers,
} from '../../../../../src/services/call-host/adapters/executor-call-io.js';
import {
  createInProcessCallRunner,
  type InProcessCallRunner,
} from '../../../../../src/services/call-host/adapters/in-process-link.js';
import type { CallPhaseTask } from '../../../../../src/services/call-host/index.js';

let dir = '';

// `started` lets a test know a function is running (its budget started) without polling.
const STARTED = `globalThis.__inProcessStarted?.(ctx.callId);`;
const FUNCTIONS: Record<string, string> = {
  'hello_world.ts': `export default async function (ctx: { taskId: string }, name: string): Promise<string> { return 'hello, ' + name; }`,
  'echo.mjs': `export default async (ctx, ...args) => ({ args, taskId: ctx.taskId, callId: ctx.callId, attempt: ctx.attempt, block: ctx.block ?? null });`,
  'fails.js': `export default async (ctx, mode) => { const e = new Error('boom ' + mode); if (mode === 'retryable') e.retryable = true; throw e; };`,
  'flaky.mjs': `let n = 0; export default async (ctx) => { if (++n < 3) throw Object.assign(new Error('try again'), { retryable: true }); return { n, attempt: ctx.attempt }; };`,
  'hang.mjs': `export default (ctx) => { ${STARTED} return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))); };`,
  'deaf.mjs': `export default (ctx) => { ${STARTED} return new Promise(() => {}); };`,
  'track.mjs': `export let live = 0; export let peak = 0; export default async (ctx) => { live++; peak = Math.max(peak, live); await new Promise((r) => setImmediate(r)); live--; return peak; };`,
  'big.mjs': `export default async (ctx, n) => 'x'.repeat(n);`,
  'bigint.mjs': `export default async () => 10n;`,
  'nothing.mjs': `export default async () => undefined;`,
  'parent.mjs': `export default async (ctx, x) => (await ctx.call('double', x)) + 1;`,
  'double.mjs': `export default async (ctx, x) => x * 2;`,
  'reader.mjs': `export default async (ctx) => ctx.io.get('blocks', { number: 1 });`,
  'mutator.mjs': `export default async (ctx) => { const row = await ctx.io.get('blocks', { number: 1 }); try { row.hash = 'x'; } catch { return 'frozen'; } return 'mutable'; };`,
  'not_a_function.mjs': `export default 42;`,
};

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'blockx-in-process-'));
  for (const [name, source] of Object.entries(FUNCTIONS)) writeFileSync(path.join(dir, name), source);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The runner's timers on a clock the test moves. */
class VirtualTime {
  now = 1_000_000;
  /** Whether a newly armed timer fires at once (set by the harness: nothing runs in the link). */
  fireAtOnce: () => boolean = () => false;
  private readonly pending = new Set<{ at: number; fn: () => void }>();
  readonly clock = (): number => this.now;
  readonly timers: RunnerTimers = {
    set: (fn, delayMs) => {
      const handle = { at: this.now + delayMs, fn };
      this.pending.add(handle);
      if (this.fireAtOnce()) queueMicrotask(() => this.fire(handle));
      return handle;
    },
    clear: (handle) => void this.pending.delete(handle as { at: number; fn: () => void }),
  };

  /** Move the clock by `ms`, firing every timer that falls due on the way, in order. */
  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      const due = [...this.pending].filter((h) => h.at <= target).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.fire(due);
    }
    this.now = target;
  }

  private fire(handle: { at: number; fn: () => void }): void {
    if (!this.pending.delete(handle)) return;
    this.now = Math.max(this.now, handle.at);
    handle.fn();
  }
}

interface Harness extends InProcessCallRunner {
  readonly time: VirtualTime;
  run(
    calls: readonly CallSpec[],
    over?: Partial<CallPhaseTask>,
  ): ReturnType<InProcessCallRunner['runner']['run']>;
}

function harness(
  dispatcher: Parameters<typeof resolveDispatcherConfig>[0] = {},
  io?: CallIoHandler,
): Harness {
  const time = new VirtualTime();
  const config: DispatcherConfig = resolveDispatcherConfig({
    callRetry: { maxAttempts: 3, initialBackoffMs: 50, maxBackoffMs: 1_000 },
    ...dispatcher,
  });
  const made = createInProcessCallRunner({
    functionsDir: dir,
    dispatcher: config,
    clock: time.clock,
    timers: time.timers,
    ...(io ? { io } : {}),
  });
  time.fireAtOnce = () => made.link.inflight === 0;
  return {
    ...made,
    time,
    run: (calls, over = {}) =>
      made.runner.run(
        {
          taskId: 't1',
          codeEpoch: 'e1',
          deadlineMs: time.now + 60_000,
          signal: new AbortController().signal,
          ...over,
        },
        calls,
      ),
  };
}

/** Resolves with the call id once `count` functions reporting `started` are running. */
function started(count = 1): Promise<string[]> {
  const ids: string[] = [];
  return new Promise((resolve) => {
    (globalThis as { __inProcessStarted?: (id: string) => void }).__inProcessStarted = (id) => {
      ids.push(id);
      if (ids.length === count) resolve(ids);
    };
  });
}

const call = (fn: string, ...args: unknown[]): CallSpec => ({ function: fn, args });

describe('in-process Calls phase (dispatcher + InProcessLink)', () => {
  it('runs TS and JS functions and returns outputs in call order', async () => {
    const h = harness();
    const outcome = await h.run([
      call('hello_world', 'ct2'),
      call('hello_world', 'blockx'),
      call('echo', 1, 'a'),
    ]);
    expect(outcome).toEqual({
      success: true,
      retryable: false,
      outputs: [
        'hello, ct2',
        'hello, blockx',
        { args: [1, 'a'], taskId: 't1', callId: 't1/2', attempt: 1, block: null },
      ],
    });
    expect(h.link.inflight).toBe(0);
  });

  it('passes the call block through to ctx.block', async () => {
    const outcome = await harness().run([{ function: 'echo', args: [], block: { number: 7 } }]);
    expect(outcome.outputs[0]).toMatchObject({ block: { number: 7 } });
  });

  it('caps the calls in flight at taskMaxInflightCalls', async () => {
    const outcome = await harness({ taskMaxInflightCalls: 3 }).run(
      Array.from({ length: 20 }, () => call('track')),
    );
    expect(outcome.success).toBe(true);
    expect(Math.max(...(outcome.outputs as number[]))).toBe(3);
  });

  it('fastFail: a thrown error fails the phase with CALL_FAILED and cancels the other calls', async () => {
    const h = harness();
    const outcome = await h.run([call('hang'), call('fails', 'plain'), call('hang')]);
    expect(outcome).toMatchObject({
      success: false,
      failureCode: 'CALL_FAILED',
      retryable: false,
      outputs: [],
    });
    expect(outcome.message).toContain('boom plain');
    expect(outcome.message).toContain('fails');
  });

  it('retries an error flagged retryable (RetryableError) after its backoff, then succeeds', async () => {
    const h = harness();
    const before = h.time.now;
    expect(await h.run([call('flaky')])).toMatchObject({ success: true, outputs: [{ n: 3, attempt: 3 }] });
    // Two backoffs: 50 ms, then 100 ms.
    expect(h.time.now - before).toBe(150);
  });

  it('gives up on a retryable error after maxAttempts', async () => {
    const outcome = await harness({ callRetry: { maxAttempts: 2 } }).run([call('fails', 'retryable')]);
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(outcome.message).toContain('boom retryable');
  });

  it('the task signal cancels every call (CANCELLED, retryable)', async () => {
    const h = harness();
    const controller = new AbortController();
    const running = h.run([call('hang'), call('hang')], { signal: controller.signal });
    await started(2);
    controller.abort(new Error('task cancelled'));
    expect(await running).toMatchObject({
      success: false,
      failureCode: 'CANCELLED',
      retryable: true,
      outputs: [],
    });
  });

  it.each([
    ['honours ctx.signal', 'hang'],
    // The documented limitation: nothing can stop it, but the dispatcher writes the attempt off.
    ['ignores ctx.signal', 'deaf'],
  ])('a call past callDeadlineMs that %s fails the phase after its attempts', async (_what, fn) => {
    const h = harness({ callDeadlineMs: 1_000, callRetry: { maxAttempts: 1 } });
    const running = h.run([call(fn)]);
    await started();
    h.time.advance(999);
    h.time.advance(1);
    const outcome = await running;
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(outcome.message).toContain('exceeded its execution budget of 1000 ms');
  });

  it('outputs over maxCollectedOutputBytes fail OUTPUT_BYTES_EXCEEDED', async () => {
    const h = harness({ maxCollectedOutputBytes: 1_000 });
    expect((await h.run([call('big', 100), call('big', 100)])).success).toBe(true);
    const outcome = await h.run([call('big', 400), call('big', 400), call('big', 400)], { taskId: 't2' });
    expect(outcome).toMatchObject({ success: false, failureCode: 'OUTPUT_BYTES_EXCEEDED', retryable: false });
  });

  it('a return value JSON cannot carry fails the call; undefined becomes null', async () => {
    const h = harness();
    const bad = await h.run([call('bigint')]);
    expect(bad).toMatchObject({ success: false, failureCode: 'CALL_FAILED' });
    expect(bad.message).toContain('not JSON-serialisable');
    expect(await h.run([call('nothing')], { taskId: 't2' })).toMatchObject({
      success: true,
      outputs: [null],
    });
  });

  it('ctx.call is a subcall the dispatcher schedules and answers', async () => {
    expect(await harness().run([call('parent', 20)])).toMatchObject({ success: true, outputs: [41] });
  });

  it('ctx.io rejects with NO_STORAGE when no storage is wired', async () => {
    const io = await harness().run([call('reader')]);
    expect(io).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(io.message).toContain('needs storage');
  });

  it('ctx.io is served by the IO handler; get answers are frozen, as on an execution thread', async () => {
    const asked: unknown[] = [];
    const io: CallIoHandler = (taskId, request) => {
      asked.push({ taskId, ...request });
      return Promise.resolve({ number: 1, hash: '0xab' });
    };
    const h = harness({}, io);
    expect(await h.run([call('reader'), call('mutator')])).toMatchObject({
      success: true,
      outputs: [{ number: 1, hash: '0xab' }, 'frozen'],
    });
    expect(asked).toEqual([
      { taskId: 't1', kind: 'io', op: 'get', table: 'blocks', key: { number: 1 } },
      { taskId: 't1', kind: 'io', op: 'get', table: 'blocks', key: { number: 1 } },
    ]);
  });

  it.each([
    // The executor's resolver and its words (src/executor/core/function-resolution.ts).
    [
      'missing',
      'FUNCTION_NOT_FOUND: function "missing" not found',
      'expected missing.ts, missing.mjs or missing.js',
    ],
    ['../escape', 'FUNCTION_NOT_FOUND', 'expected ../escape.ts'],
    [
      'not_a_function',
      'FUNCTION_LOAD_FAILED',
      'has no default export function (its default export is number)',
    ],
  ])('a function that cannot be loaded (%s) fails CALL_FAILED: %s', async (name, code, message) => {
    const outcome = await harness().run([call(name)]);
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(outcome.message).toContain(code);
    expect(outcome.message).toContain(message);
  });

  it('follows the executor rule: a name defined by two files (x.ts and x.js) is an error, not a preference', async () => {
    writeFileSync(path.join(dir, 'twice.ts'), 'export default async () => "ts";');
    writeFileSync(path.join(dir, 'twice.js'), 'export default async () => "js";');
    const outcome = await harness().run([call('twice')]);
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(outcome.message).toContain('is defined by more than one file');
    expect(outcome.message).toContain('twice.js, twice.ts; keep one');
  });

  it('an empty call list succeeds with no outputs', async () => {
    expect(await harness().run([])).toEqual({ success: true, retryable: false, outputs: [] });
  });

  it('close() ends running phases CANCELLED and refuses later runs', async () => {
    const h = harness();
    const running = h.run([call('hang')]);
    await started();
    h.close();
    expect(await running).toMatchObject({ success: false, failureCode: 'CANCELLED', retryable: true });
    expect(await h.run([call('echo')], { taskId: 't2' })).toMatchObject({ failureCode: 'CANCELLED' });
    h.close(); // idempotent
  });
});
