// The real executor process: hello_world, ctx fields, subcalls, IO requests, errors and load failures.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FunctionCodeView, type EpochSource } from '../../../src/executor/code-epochs.js';
import { ExecutorHarness, FIXTURE_FUNCTIONS, REPO_FUNCTIONS } from './executor-harness.js';

// Real executor processes started from src/ under tsx: the bounds these tests had in the process tier.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const repo = new FunctionCodeView({ dir: REPO_FUNCTIONS });
const fixtures = new FunctionCodeView({ dir: FIXTURE_FUNCTIONS });
const brokenDir = mkdtempSync(join(tmpdir(), 'bx-broken-'));
writeFileSync(join(brokenDir, 'syntax.ts'), 'export default async () => {\n  return (1 + ;\n};\n');
writeFileSync(join(brokenDir, 'nodefault.ts'), 'export const helper = 1;\nexport function other() {}\n');
writeFileSync(join(brokenDir, 'throws_on_load.mjs'), 'throw new Error("bad module init");\n');
writeFileSync(
  join(brokenDir, 'bad_import.mjs'),
  'import "../../process/does-not-exist.mjs";\nexport default () => 1;\n',
);
writeFileSync(join(brokenDir, 'not_a_function.mjs'), 'export default 42;\n');
const broken = new FunctionCodeView({ dir: brokenDir });

// One executor serves snapshots of several directories: DefineEpoch carries the directory.
const views = [repo, fixtures, broken];
const epochs: EpochSource = {
  snapshot: (e) => views.map((v) => v.snapshot(e)).find((s) => s !== undefined),
  onRetire: () => () => {},
};

const rows: Record<string, unknown> = { alice: { balance: 10 }, bob: { balance: 3 } };
let h: ExecutorHarness;
let repoEpoch: string;
let fxEpoch: string;
let brokenEpoch: string;

beforeAll(async () => {
  repoEpoch = await repo.pinCurrent();
  fxEpoch = await fixtures.pinCurrent();
  brokenEpoch = await broken.pinCurrent();
  h = await new ExecutorHarness({
    functionsDir: FIXTURE_FUNCTIONS,
    epochs,
    onWaiting: (req) => {
      const r = req.request;
      if (r.kind !== 'io') return undefined; // subcalls go to the "dispatcher" below
      if (r.op === 'get') {
        if (r.key === 'fail')
          return Promise.reject(Object.assign(new Error('storage unavailable'), { retryable: true }));
        return Promise.resolve({ ok: true, value: rows[r.key as string] ?? null });
      }
      if (r.op === 'getMany')
        return Promise.resolve({ ok: true, value: r.keys.map((k) => rows[k as string] ?? null) });
      return Promise.resolve({ ok: true, value: [{ table: r.table, ...r.options }] });
    },
    // A minimal dispatcher for subcalls: run the child, resume the parent with its value or error.
    onEvent: (ev, harness) => {
      if (ev.type !== 'callWaiting' || ev.request.kind !== 'subcall') return;
      const { function: fn, args } = ev.request;
      void harness.run({ function: fn, args, codeEpoch: fxEpoch, taskId: ev.taskId }).then((child) => {
        harness.link.resumeCall(
          ev.callId,
          ev.attempt,
          child.type === 'callCompleted'
            ? { requestId: ev.requestId, ok: true, value: child.value }
            : {
                requestId: ev.requestId,
                ok: false,
                error: { message: child.message, kind: child.kind, retryable: child.retryable },
              },
        );
      });
    },
  }).start();
});

afterAll(async () => {
  await h?.stop();
  rmSync(brokenDir, { recursive: true, force: true });
});

describe('executor round trips', () => {
  it('runs functions/hello_world.ts for the README example call list', async () => {
    const results = await Promise.all(
      [['ct2'], ['blockx']].map((args) => h.run({ function: 'hello_world', args, codeEpoch: repoEpoch })),
    );
    expect(results.map((r) => r.type === 'callCompleted' && r.value)).toEqual([
      'hello, ct2',
      'hello, blockx',
    ]);
  });

  it('gives the function its args, ids, attempt and block', async () => {
    const r = await h.run({
      function: 'echo',
      args: [1, 'two', { three: [3] }],
      codeEpoch: fxEpoch,
      taskId: 'task-echo',
      callId: 'call-echo',
      attempt: 3,
      block: { number: 42, hash: '0xabc' },
    });
    expect(r).toMatchObject({
      type: 'callCompleted',
      taskId: 'task-echo',
      value: {
        args: [1, 'two', { three: [3] }],
        taskId: 'task-echo',
        callId: 'call-echo',
        attempt: 3,
        block: { number: 42, hash: '0xabc' },
      },
    });
  });

  it('round-trips a subcall through CallWaiting and ResumeCall', async () => {
    const r = await h.run({ function: 'parent', args: [4], codeEpoch: fxEpoch });
    expect(r).toMatchObject({ type: 'callCompleted', value: 41 });
    const waiting = h.events.find((e) => e.type === 'callWaiting' && e.callId === r.callId);
    expect(waiting).toMatchObject({ request: { kind: 'subcall', function: 'child', args: [4] } });
  });

  it('round-trips io.get, io.getMany and io.scan through the IO port', async () => {
    const r = await h.run({ function: 'io_reader', args: ['alice'], codeEpoch: fxEpoch });
    expect(r).toMatchObject({
      type: 'callCompleted',
      value: {
        one: { balance: 10 },
        many: [{ balance: 10 }, null],
        rows: [{ table: 'events', block: 7, limit: 2 }],
      },
    });
  });

  it("gives functions the plugins' scan shape: for await, toArray() and await, one request per scan", async () => {
    const before = h.events.filter((e) => e.type === 'callWaiting').length;
    const r = await h.run({ function: 'scan_shapes', args: [], codeEpoch: fxEpoch });
    const row = (block: number) => [{ table: 'events', block, limit: 1 }];
    expect(r).toMatchObject({
      type: 'callCompleted',
      value: { iterated: row(1), collected: row(2), awaited: row(3), first: row(4), again: row(4) },
    });
    expect(h.events.filter((e) => e.type === 'callWaiting').length - before).toBe(4);
  });

  it('fails a call whose IO read failed, keeping the IO error retryable', async () => {
    const r = await h.run({ function: 'io_reader', args: ['fail'], codeEpoch: fxEpoch });
    expect(r).toMatchObject({
      type: 'callFailed',
      kind: 'io',
      retryable: true,
      message: 'storage unavailable',
    });
  });

  it.each([
    ['plain', { kind: 'user', retryable: false, message: 'boom' }],
    ['retryable', { kind: 'user', retryable: true, message: 'try again later' }],
    ['flagged', { kind: 'user', retryable: true, code: 'E_FLAG' }],
  ])('classifies a thrown %s error', async (mode, expected) => {
    const r = await h.run({ function: 'fails', args: [mode], codeEpoch: fxEpoch });
    expect(r).toMatchObject({ type: 'callFailed', ...expected });
    expect(r.type === 'callFailed' && r.stack).toContain('fails.ts');
  });

  it('fails a result that is not JSON', async () => {
    const r = await h.run({ function: 'bigint_result', codeEpoch: fxEpoch });
    expect(r).toMatchObject({ type: 'callFailed', kind: 'user', retryable: false });
    expect(r.type === 'callFailed' && r.message).toMatch(/not JSON-serialisable/);
  });

  it.each([
    [
      'nope',
      'FUNCTION_NOT_FOUND',
      /^function "nope" not found in .*bx-broken-.*; available: bad_import, nodefault, not_a_function, syntax, throws_on_load$/,
    ],
    ['syntax', 'FUNCTION_LOAD_FAILED', /^cannot compile .*\/syntax\.ts: 2:\d+: /],
    [
      'nodefault',
      'FUNCTION_LOAD_FAILED',
      /\/nodefault\.ts has no default export function; its exports: helper, other$/,
    ],
    [
      'not_a_function',
      'FUNCTION_LOAD_FAILED',
      /\/not_a_function\.mjs has no default export function \(its default export is number\)$/,
    ],
    ['throws_on_load', 'FUNCTION_LOAD_FAILED', /^cannot load .*\/throws_on_load\.mjs: bad module init$/],
    ['bad_import', 'FUNCTION_LOAD_FAILED', /^cannot load .*\/bad_import\.mjs: .*does-not-exist\.mjs/],
  ])('fails loading %s with kind load and a message naming the file', async (fn, code, message) => {
    const r = await h.run({ function: fn, codeEpoch: brokenEpoch });
    expect(r).toMatchObject({ type: 'callFailed', kind: 'load', retryable: false, code });
    expect(r.type === 'callFailed' && r.message).toMatch(message);
  });

  it('fails an epoch the executor cannot know', async () => {
    const r = await h.run({ function: 'noop', codeEpoch: 'feedfacefeedface' });
    expect(r).toMatchObject({ type: 'callFailed', kind: 'load', retryable: false, code: 'EPOCH_UNKNOWN' });
  });
});
