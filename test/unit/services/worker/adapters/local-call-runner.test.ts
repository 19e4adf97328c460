// LocalCallRunner with real function files in a temp folder (JS, MJS and TS).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CallSpec } from '../../../../../src/kernel/plugin-types.js';
import { LocalCallRunner } from '../../../../../src/services/worker/adapters/local-call-runner.js';
import type { CallPhaseTask } from '../../../../../src/services/worker/adapters/ports.js';

let dir = '';

const FUNCTIONS: Record<string, string> = {
  'hello_world.ts': `export default async function (ctx: { taskId: string }, name: string): Promise<string> { return 'hello, ' + name; }`,
  'echo.mjs': `export default async (ctx, ...args) => ({ args, taskId: ctx.taskId, callId: ctx.callId, attempt: ctx.attempt, block: ctx.block ?? null });`,
  'fails.js': `export default async (ctx, mode) => { const e = new Error('boom ' + mode); if (mode === 'retryable') e.retryable = true; throw e; };`,
  'flaky.mjs': `let n = 0; export default async () => { if (++n < 3) throw Object.assign(new Error('try again'), { retryable: true }); return n; };`,
  'wait.mjs': `export default (ctx, ms) => new Promise((resolve, reject) => { const t = setTimeout(() => resolve(ms), ms); ctx.signal.addEventListener('abort', () => { clearTimeout(t); reject(ctx.signal.reason); }); });`,
  'track.mjs': `export let live = 0; export let peak = 0; export default async (ctx) => { live++; peak = Math.max(peak, live); await new Promise((r) => setImmediate(r)); live--; return peak; };`,
  'big.mjs': `export default async (ctx, n) => 'x'.repeat(n);`,
  'bigint.mjs': `export default async () => 10n;`,
  'nothing.mjs': `export default async () => undefined;`,
  'parent.mjs': `export default async (ctx, x) => (await ctx.call('double', x)) + 1;`,
  'double.mjs': `export default async (ctx, x) => x * 2;`,
  'reader.mjs': `export default async (ctx) => ctx.io.get('blocks', { number: 1 });`,
  'not_a_function.mjs': `export default 42;`,
};

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'blockx-local-runner-'));
  for (const [name, source] of Object.entries(FUNCTIONS)) writeFileSync(path.join(dir, name), source);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

function task(overrides: Partial<CallPhaseTask> = {}): CallPhaseTask {
  return {
    taskId: 't1',
    codeEpoch: 'e1',
    deadlineMs: Date.now() + 60_000,
    signal: new AbortController().signal,
    ...overrides,
  };
}

const call = (fn: string, ...args: unknown[]): CallSpec => ({ function: fn, args });

describe('LocalCallRunner', () => {
  it('runs TS and JS functions and returns outputs in call order', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir });
    const outcome = await runner.run(task(), [
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
        { args: [1, 'a'], taskId: 't1', callId: '2', attempt: 1, block: null },
      ],
    });
  });

  it('passes the call block through to ctx.block', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir });
    const outcome = await runner.run(task(), [{ function: 'echo', args: [], block: { number: 7 } }]);
    expect(outcome.outputs[0]).toMatchObject({ block: { number: 7 } });
  });

  it('caps the calls in flight at maxInflightCalls', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir, maxInflightCalls: 3 });
    const outcome = await runner.run(
      task(),
      Array.from({ length: 20 }, () => call('track')),
    );
    expect(outcome.success).toBe(true);
    expect(Math.max(...(outcome.outputs as number[]))).toBe(3);
  });

  it('fastFail: a thrown error fails the phase with CALL_FAILED and aborts the other calls', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir });
    const started = Date.now();
    const outcome = await runner.run(task(), [
      call('wait', 10_000),
      call('fails', 'plain'),
      call('wait', 10_000),
    ]);
    expect(outcome).toMatchObject({
      success: false,
      failureCode: 'CALL_FAILED',
      retryable: false,
      outputs: [],
    });
    expect(outcome.message).toContain('call 1 (fails): boom plain');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('retries an error flagged retryable, then succeeds', async () => {
    const runner = new LocalCallRunner({
      functionsDir: dir,
      callRetry: { maxAttempts: 3, initialBackoffMs: 1, maxBackoffMs: 2 },
    });
    expect(await runner.run(task(), [call('flaky')])).toMatchObject({ success: true, outputs: [3] });
  });

  it('gives up on a retryable error after maxAttempts', async () => {
    const runner = new LocalCallRunner({
      functionsDir: dir,
      callRetry: { maxAttempts: 2, initialBackoffMs: 1, maxBackoffMs: 1 },
    });
    const outcome = await runner.run(task(), [call('fails', 'retryable')]);
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED' });
  });

  it('the task signal aborts every call (CANCELLED)', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir });
    const controller = new AbortController();
    const running = runner.run(task({ signal: controller.signal }), [
      call('wait', 10_000),
      call('wait', 10_000),
    ]);
    await new Promise((r) => setImmediate(r));
    controller.abort(new Error('task timed out'));
    expect(await running).toMatchObject({ success: false, failureCode: 'CANCELLED', outputs: [] });
  });

  it('a call past callDeadlineMs is aborted and, after its attempts, fails the phase', async () => {
    const runner = new LocalCallRunner({
      functionsDir: dir,
      callDeadlineMs: 1_000,
      callRetry: { maxAttempts: 1, initialBackoffMs: 1, maxBackoffMs: 1 },
    });
    await runner.run(task(), [call('wait', 0)]); // load the module with real timers
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const running = runner.run(task(), [call('wait', 60_000)]);
    await vi.advanceTimersByTimeAsync(1_000);
    const outcome = await running;
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED' });
    expect(outcome.message).toContain('exceeded its 1000 ms budget');
  });

  it('outputs over maxCollectedOutputBytes fail OUTPUT_BYTES_EXCEEDED', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir, maxCollectedOutputBytes: 100 });
    expect((await runner.run(task(), [call('big', 40), call('big', 40)])).success).toBe(true);
    const outcome = await runner.run(task(), [call('big', 40), call('big', 40), call('big', 40)]);
    expect(outcome).toMatchObject({ success: false, failureCode: 'OUTPUT_BYTES_EXCEEDED', retryable: false });
  });

  it('a return value JSON cannot carry fails the call; undefined becomes null', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir });
    const bad = await runner.run(task(), [call('bigint')]);
    expect(bad).toMatchObject({ success: false, failureCode: 'CALL_FAILED' });
    expect(bad.message).toContain('not JSON-serialisable');
    expect(await runner.run(task(), [call('nothing')])).toMatchObject({ success: true, outputs: [null] });
  });

  it('ctx.call runs a subfunction in-process; ctx.io rejects with NO_STORAGE', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir });
    expect(await runner.run(task(), [call('parent', 20)])).toMatchObject({ success: true, outputs: [41] });
    const io = await runner.run(task(), [call('reader')]);
    expect(io).toMatchObject({ success: false, failureCode: 'CALL_FAILED' });
    expect(io.message).toContain('needs storage');
  });

  it.each([
    // The executor's resolver and its words (src/executor/core/function-resolution.ts).
    ['missing', 'expected missing.ts, missing.mjs or missing.js'],
    ['../escape', 'not a valid function name'],
    ['not_a_function', 'does not default-export a function'],
  ])('a function that cannot be loaded (%s) fails CALL_FAILED: %s', async (name, message) => {
    const runner = new LocalCallRunner({ functionsDir: dir });
    const outcome = await runner.run(task(), [call(name)]);
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(outcome.message).toContain(message);
  });

  it('follows the executor rule: a name defined by two files (x.ts and x.js) is an error, not a preference', async () => {
    writeFileSync(path.join(dir, 'twice.ts'), 'export default async () => "ts";');
    writeFileSync(path.join(dir, 'twice.js'), 'export default async () => "js";');
    const runner = new LocalCallRunner({ functionsDir: dir });
    const outcome = await runner.run(task(), [call('twice')]);
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(outcome.message).toContain('is defined by more than one file');
    expect(outcome.message).toContain('twice.js, twice.ts; keep one');
  });

  it('an empty call list succeeds with no outputs', async () => {
    const runner = new LocalCallRunner({ functionsDir: dir });
    expect(await runner.run(task(), [])).toEqual({ success: true, retryable: false, outputs: [] });
  });
});
