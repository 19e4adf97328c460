// The language router (src/services/call-host/adapters/executor-router.ts) between the real
// ExecutorCallRunner (one dispatcher) and two fake links, on virtual time.
import { describe, expect, it } from 'vitest';
import { ExecutorCallRunner } from '../../../../../src/services/call-host/adapters/executor-call-runner.js';
import type { ExecutorLinkEvent } from '../../../../../src/services/call-host/adapters/executor-link.js';
import {
  EpochInventories,
  ExecutorRouter,
  ExecutorSetReadiness,
  epochSourceFor,
} from '../../../../../src/services/call-host/adapters/executor-router.js';
import type { ExecutorReadinessEvent } from '../../../../../src/services/call-host/index.js';
import { resolveDispatcherConfig } from '../../../../../src/services/call-host/core/dispatcher/index.js';
import {
  parseAnyFunctionFileName,
  type FunctionsInventory,
} from '../../../../../src/executor/core/functions-inventory.js';
import { FakeLink, VirtualTime, completed, failed, flush, task, track } from './runner-harness.js';

const EPOCH = 'epoch-a';

function setup(opts: { python?: boolean; files?: string[] } = {}) {
  const files = (opts.files ?? ['js_fn.ts', 'py_fn.py', 'dup.ts', 'dup.py']).map((fileName) => ({
    fileName,
  }));
  const js = new FakeLink();
  const py = new FakeLink();
  const time = new VirtualTime();
  const newEpochs: [string, FunctionsInventory][] = [];
  const inventories = new EpochInventories(
    { snapshot: (e) => (e === EPOCH ? { files } : undefined) },
    (e, inv) => newEpochs.push([e, inv]),
  );
  let needed = 0;
  const router: ExecutorRouter = new ExecutorRouter({
    js,
    ...(opts.python === false ? {} : { python: py }),
    inventories,
    functionsDir: '/fns',
    deliver: (ev) => runner.handleEvent(ev),
    onPythonNeeded: () => {
      needed++;
      router.activatePython();
    },
  });
  const runner = new ExecutorCallRunner({
    link: router,
    timers: time,
    clock: () => time.now,
    dispatcher: resolveDispatcherConfig({
      callDeadlineMs: 5_000,
      callRetry: {
        maxAttempts: 3,
        initialBackoffMs: 50,
        maxBackoffMs: 1_000,
        retryOn: ['executor_crash', 'deadline', 'io', 'user'],
      },
    }),
  });
  const fromJs = router.eventsOf('js');
  const fromPy = router.eventsOf('python');
  return { js, py, time, runner, router, fromJs, fromPy, newEpochs, needed: () => needed };
}

const waiting = (
  cmd: { taskId: string; callId: string; attempt: number },
  fn: string,
  args: unknown[],
): ExecutorLinkEvent => ({
  type: 'callWaiting',
  taskId: cmd.taskId,
  callId: cmd.callId,
  attempt: cmd.attempt,
  requestId: 1,
  request: { kind: 'subcall', function: fn, args },
});

describe('ExecutorRouter', () => {
  it('routes each call to the executor of its language, and starts Python on its first call', async () => {
    const h = setup();
    const run = track(
      h.runner.run(task(), [
        { function: 'js_fn', args: [1] },
        { function: 'py_fn', args: [2] },
        { function: 'js_fn', args: [3] },
      ]),
    );
    await flush();
    expect(h.js.executed.map((c) => c.function)).toEqual(['js_fn', 'js_fn']);
    expect(h.py.executed.map((c) => c.function)).toEqual(['py_fn']);
    expect(h.needed()).toBe(1);
    expect(h.newEpochs.map(([e]) => e)).toEqual([EPOCH]); // the inventory is built once per epoch
    h.fromJs(completed(h.js.executed[0]!, 'a'));
    h.fromPy(completed(h.py.executed[0]!, 'b'));
    h.fromJs(completed(h.js.executed[1]!, 'c'));
    await run.done;
    expect(run.outcome).toMatchObject({ success: true, outputs: ['a', 'b', 'c'] });
    expect(h.router.pythonInflight).toBe(0);
  });

  it('a JS call calls Python, which calls JS back: each resume goes to its parent’s link', async () => {
    const h = setup();
    h.router.activatePython();
    const run = track(h.runner.run(task(), [{ function: 'js_fn', args: [] }]));
    await flush();
    const root = h.js.executed[0]!;
    h.fromJs(waiting(root, 'py_fn', [1]));
    await flush();
    const child = h.py.executed[0]!;
    expect(child.function).toBe('py_fn');
    h.fromPy(waiting(child, 'js_fn', [2]));
    await flush();
    const grandchild = h.js.executed[1]!;
    expect(grandchild.function).toBe('js_fn');
    h.fromJs(completed(grandchild, 2));
    await flush();
    expect(h.py.resumed).toMatchObject([{ callId: child.callId, outcome: { ok: true, value: 2 } }]);
    expect(h.js.resumed).toEqual([]);
    h.fromPy(completed(child, 3));
    await flush();
    expect(h.js.resumed).toMatchObject([{ callId: root.callId, outcome: { ok: true, value: 3 } }]);
    h.fromJs(completed(root, 4));
    await run.done;
    expect(run.outcome).toMatchObject({ success: true, outputs: [4] });
  });

  it('a name in two languages fails its call with a load error naming both files', async () => {
    const h = setup();
    const run = track(h.runner.run(task(), [{ function: 'dup', args: [] }]));
    await run.done;
    expect(h.js.executed).toEqual([]);
    expect(h.py.executed).toEqual([]);
    expect(run.outcome).toMatchObject({ success: false, retryable: false, failureCode: 'CALL_FAILED' });
    expect(run.outcome!.message).toContain(
      'function "dup" is defined in two languages in /fns: dup.py, dup.ts',
    );
  });

  it('a name no file defines fails with FUNCTION_NOT_FOUND listing the functions of both languages', async () => {
    const h = setup();
    const run = track(h.runner.run(task(), [{ function: 'nope', args: [] }]));
    await run.done;
    expect(h.js.executed).toEqual([]);
    expect(h.py.executed).toEqual([]);
    expect(run.outcome).toMatchObject({ success: false, retryable: false });
    expect(run.outcome!.message).toContain(
      `function "nope" not found in /fns (code epoch ${EPOCH}); expected nope.ts, nope.mjs, nope.js or ` +
        'nope.py; available: dup (JS and Python: keep one), js_fn (JS), py_fn (Python)',
    );
  });

  it('in a JS-only epoch, a name no file defines goes to the JS executor, whose answer lists them all', async () => {
    const h = setup({ files: ['js_fn.ts'] });
    track(h.runner.run(task(), [{ function: 'nope', args: [] }]));
    await flush();
    expect(h.js.executed).toMatchObject([{ function: 'nope' }]);
  });

  it('with Python off, a Python function fails with a load error naming the setting', async () => {
    const h = setup({ python: false });
    const run = track(h.runner.run(task(), [{ function: 'py_fn', args: [] }]));
    await run.done;
    expect(run.outcome!.message).toContain('executor.python.enabled: off');
    expect(h.needed()).toBe(0);
  });

  it('losing the Python executor fails only its attempts; the JS calls go on', async () => {
    const h = setup();
    h.router.activatePython();
    const run = track(
      h.runner.run(task(), [
        { function: 'js_fn', args: [] },
        { function: 'py_fn', args: [] },
      ]),
    );
    await flush();
    const [jsCall] = h.js.executed;
    const [pyCall] = h.py.executed;
    // The link's order: executorLost, then one retryable failure per attempt it had sent.
    h.fromPy({ type: 'executorLost', reason: 'killed', pid: 1, failedAttempts: 1 });
    h.fromPy(failed(pyCall!, 'executor_crash', true, 'executor lost'));
    await h.time.advanceTo(h.time.now + 100); // the retry backoff
    expect(h.js.cancelled).toEqual([]); // the JS attempt was not touched
    expect(h.py.executed.map((c) => c.attempt)).toEqual([1, 2]);
    h.fromJs(completed(jsCall!, 'j'));
    h.fromPy(completed(h.py.executed[1]!, 'p'));
    await run.done;
    expect(run.outcome).toMatchObject({ success: true, outputs: ['j', 'p'] });
  });

  it('with only the JS executor active, executorLost passes through (today’s behaviour)', async () => {
    const h = setup({ files: ['js_fn.ts'] });
    const run = track(h.runner.run(task(), [{ function: 'js_fn', args: [] }]));
    await flush();
    h.fromJs({ type: 'executorLost', reason: 'killed', pid: 1, failedAttempts: 1 });
    expect(h.runner.stats().executorReady).toBe(false); // the dispatcher holds until executorReady
    h.fromJs({ type: 'executorReady', pid: 2, executorVersion: 'x', threads: 2 });
    await h.time.advanceTo(h.time.now + 100);
    h.fromJs(completed(h.js.executed.at(-1)!, 'ok'));
    await run.done;
    expect(run.outcome).toMatchObject({ success: true, outputs: ['ok'] });
    expect(h.py.executed).toEqual([]);
  });

  it('a late terminal of an earlier Python attempt does not reroute the retry’s resumes', async () => {
    const h = setup();
    h.router.activatePython();
    const run = track(h.runner.run(task(), [{ function: 'py_fn', args: [] }]));
    await flush();
    const first = h.py.executed[0]!;
    h.fromPy({ type: 'callStarted', taskId: first.taskId, callId: first.callId, attempt: 1, elapsedMs: 0 });
    await h.time.advanceTo(h.time.now + 5_001); // budget spent: cancel, retry after backoff
    await h.time.advanceTo(h.time.now + 100);
    const second = h.py.executed[1]!;
    expect(second.attempt).toBe(2);
    h.fromPy(failed(first, 'deadline', true)); // attempt 1's terminal arrives late
    h.fromPy(waiting(second, 'js_fn', []));
    await flush();
    h.fromJs(completed(h.js.executed[0]!, 1));
    await flush();
    expect(h.py.resumed.map((r) => r.attempt)).toEqual([2]);
    h.fromPy(completed(second, 'done'));
    await run.done;
    expect(run.outcome).toMatchObject({ success: true, outputs: ['done'] });
  });

  it('drops read copies on every active executor', () => {
    const h = setup();
    h.router.dropIoCache('t#1');
    h.router.activatePython();
    h.router.dropIoCache('t#2');
    expect(h.js.droppedIoCaches).toEqual(['t#1', 't#2']);
    expect(h.py.droppedIoCaches).toEqual(['t#2']);
  });
});

describe('epochSourceFor', () => {
  it('gives each executor the files of its language under the same epoch id', () => {
    const snap = {
      id: 'e1',
      functionsDir: '/fns',
      files: ['a.ts', 'b.py', 'c.mjs'].map((fileName) => ({ name: fileName, fileName, source: '' })),
    };
    const view = { snapshot: (e: string) => (e === 'e1' ? snap : undefined), onRetire: () => () => true };
    const lang = (f: string) => parseAnyFunctionFileName(f)?.language ?? null;
    const js = epochSourceFor(view, 'js', lang);
    const py = epochSourceFor(view, 'python', lang);
    expect(js.snapshot('e1')!.files.map((f) => f.fileName)).toEqual(['a.ts', 'c.mjs']);
    expect(py.snapshot('e1')).toMatchObject({ id: 'e1', files: [{ fileName: 'b.py' }] });
    expect(js.snapshot('e1')).toBe(js.snapshot('e1')); // filtered once per snapshot
    expect(js.snapshot('e2')).toBeUndefined();
  });
});

describe('ExecutorSetReadiness', () => {
  it('is ready when every needed executor is; a loss of either is reported with its language', () => {
    const r = new ExecutorSetReadiness();
    const events: ExecutorReadinessEvent[] = [];
    r.subscribe((e) => events.push(e));
    r.need('python');
    r.executorReady('js');
    expect(events).toEqual([]);
    r.executorReady('python');
    expect(events).toEqual([{ type: 'ready' }]);
    r.executorLost('python', 'exited');
    expect(events.at(-1)).toEqual({ type: 'lost', reason: 'python executor lost: exited' });
    r.executorLost('js', 'silent');
    expect(events.at(-1)).toEqual({ type: 'lost', reason: 'executor lost: silent' });
  });

  it('an executor needed later does not close admissions while it starts', () => {
    const r = new ExecutorSetReadiness();
    const events: ExecutorReadinessEvent[] = [];
    r.subscribe((e) => events.push(e));
    r.executorReady('js');
    r.need('python');
    expect(events).toEqual([{ type: 'ready' }]);
    expect(r.ready).toBe(false);
    r.executorReady('python');
    expect(events).toEqual([{ type: 'ready' }, { type: 'ready' }]);
  });
});
