// Module instances of `executor.isolation` (docs/security.md, "Task isolation"; docs/executor.md, "Module
// instances") against a real executor with one execution thread:
//  - `task`: each task gets a fresh instance of a function's module, calls of one task share it, and a
//    thread serves any number of tasks without being replaced; it keeps the instances of at least the
//    TASK_INSTANCES_KEPT most recent tasks, at most twice as many; `none`: one instance for every task (so
//    the first can fail);
//  - the instance module keeps what an ES module gives a function: imports (relative TypeScript helpers,
//    node_modules, link errors), re-exports, `import.meta`, `import()`, top-level `await`, and stack
//    frames at the lines of the TypeScript source.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FunctionCodeView } from '../../../src/executor/code-epochs.js';
import { TASK_INSTANCES_KEPT } from '../../../src/executor/thread-modules.js';
import { ExecutorHarness, type Terminal } from './executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const ISOLATION_FUNCTIONS = fileURLToPath(new URL('../../fixtures/isolation-functions/', import.meta.url));

const valueOf = (ev: Terminal): unknown => (ev.type === 'callCompleted' ? ev.value : ev);

async function harness(functionsDir: string, isolation: 'task' | 'none') {
  const view = new FunctionCodeView({ dir: functionsDir });
  const h = await new ExecutorHarness({ functionsDir, epochs: view, threads: 1, isolation }).start();
  return { h, codeEpoch: await view.currentEpoch() };
}

describe('isolation task: a module instance per task', () => {
  let h: ExecutorHarness;
  let codeEpoch: string;
  beforeAll(async () => ({ h, codeEpoch } = await harness(ISOLATION_FUNCTIONS, 'task')));
  afterAll(() => h.stop());

  const state = (taskId: string) => h.run({ function: 'task_state', codeEpoch, taskId }).then(valueOf);

  it(`fresh per task, shared by a task's calls, the ${TASK_INSTANCES_KEPT} most recent kept; one thread throughout`, async () => {
    const first = (await state('keep')) as { calls: number; thread: number };
    expect(first.calls).toBe(1);
    expect(await state('keep')).toEqual({ calls: 2, thread: first.thread });
    // Twice as many other tasks as the thread surely keeps (it holds at most that many): each starts
    // from a fresh instance, on the same thread (a task instance is not a module: the thread is never
    // replaced for them).
    const others: unknown[] = [];
    const n = 2 * TASK_INSTANCES_KEPT;
    for (let i = 0; i < n; i += 64) {
      const batch = Array.from({ length: Math.min(64, n - i) }, (_, j) => state(`t${i + j}`));
      others.push(...(await Promise.all(batch)));
    }
    expect(new Set(others.map((o) => JSON.stringify(o)))).toEqual(
      new Set([JSON.stringify({ calls: 1, thread: first.thread })]),
    );
    // The most recently used instances are still there, the oldest of the TASK_INSTANCES_KEPT most recent
    // as well; `keep`'s, older than all of them: dropped.
    expect(await state(`t${n - 1}`)).toEqual({ calls: 2, thread: first.thread });
    expect(await state(`t${n - TASK_INSTANCES_KEPT}`)).toEqual({ calls: 2, thread: first.thread });
    expect(await state('keep')).toEqual({ calls: 1, thread: first.thread });
  });
});

describe('isolation none: one instance for every task', () => {
  it('module state carries from task to task (so the test above can fail)', async () => {
    const { h, codeEpoch } = await harness(ISOLATION_FUNCTIONS, 'none');
    try {
      const calls = [];
      for (const taskId of ['a', 'b', 'c'])
        calls.push(await h.run({ function: 'task_state', codeEpoch, taskId }));
      expect(calls.map((ev) => (valueOf(ev) as { calls: number }).calls)).toEqual([1, 2, 3]);
    } finally {
      await h.stop();
    }
  });
});

describe('what a function module can do, as an instance module', () => {
  let dir: string;
  let h: ExecutorHarness;
  let codeEpoch: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bx-instances-'));
    mkdirSync(join(dir, 'lib'));
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n'); // TypeScript helpers are ES modules
    writeFileSync(
      join(dir, 'lib', 'helper.ts'),
      'export const base: number = 40;\nexport default "helper";\n',
    );
    writeFileSync(join(dir, 'lib', 'dyn.mjs'), 'export const loaded = "dynamically";\n');
    writeFileSync(
      join(dir, 'shapes.ts'),
      [
        "import name, { base } from './lib/helper.ts';",
        'const offset: number = await Promise.resolve(2);',
        'let calls = 0;',
        'async function shapes(_ctx: unknown) {',
        '  calls += 1;',
        "  const { loaded } = await import('./lib/dyn.mjs');",
        '  return { sum: base + offset, name, calls, loaded, meta: import.meta.url.includes("shapes.ts") };',
        '}',
        'export { shapes as default };',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'reexported.ts'), "export { default } from './lib/impl.mjs';\n");
    writeFileSync(join(dir, 'lib', 'impl.mjs'), 'export default () => "from impl";\n');
    writeFileSync(
      join(dir, 'thrower.ts'),
      [
        'type Input = { n: number };',
        '',
        'export default function thrower(_ctx: unknown, input: Input) {',
        '  if (input.n > 0) throw new Error("line 4");',
        '  return 0;',
        '}',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'bad_import.ts'),
      "import { nope } from './lib/helper.ts';\nexport default () => nope;\n",
    );
    writeFileSync(
      join(dir, 'throws_on_load.mjs'),
      'throw new Error("top-level failure");\nexport default () => 1;\n',
    );
    ({ h, codeEpoch } = await harness(dir, 'task'));
  });
  afterAll(async () => {
    await h.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports, `export { x as default }`, top-level await, import() and import.meta work per task', async () => {
    const expected = { sum: 42, name: 'helper', loaded: 'dynamically', meta: true };
    expect(valueOf(await h.run({ function: 'shapes', codeEpoch, taskId: 'a' }))).toEqual({
      ...expected,
      calls: 1,
    });
    expect(valueOf(await h.run({ function: 'shapes', codeEpoch, taskId: 'a' }))).toEqual({
      ...expected,
      calls: 2,
    });
    expect(valueOf(await h.run({ function: 'shapes', codeEpoch, taskId: 'b' }))).toEqual({
      ...expected,
      calls: 1,
    });
  });

  it('a re-exported default is the function', async () => {
    expect(valueOf(await h.run({ function: 'reexported', codeEpoch }))).toBe('from impl');
  });

  it('stack frames point at the TypeScript source lines', async () => {
    const ev = await h.run({ function: 'thrower', args: [{ n: 1 }], codeEpoch });
    expect(ev).toMatchObject({ type: 'callFailed', kind: 'user', message: 'line 4' });
    expect(ev.type === 'callFailed' && ev.stack).toMatch(/thrower\.ts:4:\d+/);
  });

  it.each([
    ['bad_import', /cannot load .*bad_import\.ts: .*nope/],
    ['throws_on_load', /cannot load .*throws_on_load\.mjs: top-level failure/],
  ])('%s fails to load, in every task that calls it', async (fn, message) => {
    for (const taskId of ['x', 'y']) {
      const ev = await h.run({ function: fn, codeEpoch, taskId });
      expect(ev).toMatchObject({
        type: 'callFailed',
        kind: 'load',
        retryable: false,
        code: 'FUNCTION_LOAD_FAILED',
      });
      expect(ev.type === 'callFailed' && ev.message).toMatch(message);
    }
  });
});
