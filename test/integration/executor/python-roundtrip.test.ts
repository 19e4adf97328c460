// The Python executor process: the examples (hello_world, erc20_transfers: the same rows as the TS
// function), ctx fields, sync and async functions, failures with the function's own traceback, load
// failures, IO requests and subcalls (Python → JS → Python) through a real ExecutorLink.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FunctionCodeView } from '../../../src/executor/code-epochs.js';
import { eventually } from '../../support/eventually.js';
import erc20Transfers, { TRANSFER_SELECTOR, type EventRow } from '../../../functions/erc20_transfers.js';
import type { CallContext } from '../../../src/executor/sdk.js';
import { ExecutorHarness, FIXTURE_FUNCTIONS, type Terminal } from './executor-harness.js';
import { PY_EXAMPLES, PY_FIXTURES, SnapshotEpochs, pythonHarness } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const epochs = new SnapshotEpochs();
const jsView = new FunctionCodeView({ dir: FIXTURE_FUNCTIONS });
const rows: Record<string, unknown> = { alice: { balance: 10 }, bob: { balance: 3 } };
let py: ExecutorHarness;
let js: ExecutorHarness;
let fx: string;
let examples: string;
let jsEpoch: string;
const requests: unknown[] = [];

/** The test's dispatcher: a subcall runs on the Python executor if its epoch has `<name>.py`, else on JS. */
function dispatch(parent: ExecutorHarness) {
  return (ev: Parameters<NonNullable<Parameters<typeof pythonHarness>[0]['onEvent']>>[0]) => {
    if (ev.type !== 'callWaiting' || ev.request.kind !== 'subcall') return;
    const { function: fn, args } = ev.request;
    const inPython = epochs.snapshot(fx)!.files.some((f) => f.fileName === `${fn}.py`);
    const child = inPython
      ? py.run({ function: fn, args, codeEpoch: fx, taskId: ev.taskId })
      : js.run({ function: fn, args, codeEpoch: jsEpoch, taskId: ev.taskId });
    void child.then((c: Terminal) =>
      parent.link.resumeCall(
        ev.callId,
        ev.attempt,
        c.type === 'callCompleted'
          ? { requestId: ev.requestId, ok: true, value: c.value }
          : {
              requestId: ev.requestId,
              ok: false,
              error: { message: c.message, kind: c.kind, retryable: c.retryable },
            },
      ),
    );
  };
}

beforeAll(async () => {
  fx = epochs.take(PY_FIXTURES);
  examples = epochs.take(PY_EXAMPLES);
  jsEpoch = await jsView.pinCurrent();
  py = pythonHarness({
    functionsDir: PY_FIXTURES,
    epochs,
    onWaiting: (req) => {
      const r = req.request;
      if (r.kind !== 'io') return undefined;
      requests.push(r);
      if (r.op === 'get') {
        if (r.key === 'fail')
          return Promise.reject(Object.assign(new Error('storage unavailable'), { retryable: true }));
        return Promise.resolve({ ok: true, value: rows[r.key as string] ?? null });
      }
      if (r.op === 'getMany')
        return Promise.resolve({ ok: true, value: r.keys.map((k) => rows[k as string] ?? null) });
      return Promise.resolve({ ok: true, value: [{ table: r.table, ...r.options }, { n: 2 }] });
    },
    onEvent: (ev) => dispatch(py)(ev),
  });
  js = new ExecutorHarness({
    functionsDir: FIXTURE_FUNCTIONS,
    epochs: jsView,
    onEvent: (ev) => dispatch(js)(ev),
  });
  await Promise.all([py.start(), js.start()]);
});

afterAll(async () => {
  await Promise.all([py?.stop(), js?.stop()]);
});

const transfer = (over: Partial<EventRow> = {}): EventRow => ({
  chain_id: 1,
  block_number: 19_000_000,
  idx: 4,
  contract_id: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
  topics: [
    TRANSFER_SELECTOR,
    '0x000000000000000000000000' + 'AbCd'.repeat(10),
    '0x000000000000000000000000' + '1234'.repeat(10),
  ],
  data: '0x' + 'f'.repeat(64),
  ...over,
});

describe('python executor: examples', () => {
  it('hello_world greets as the TS one does', async () => {
    const ev = await py.run({ function: 'hello_world', args: ['ct2'], codeEpoch: examples });
    expect(ev).toMatchObject({ type: 'callCompleted', value: 'hello, ct2' });
  });

  it('erc20_transfers produces the rows of functions/erc20_transfers.ts', async () => {
    const events: EventRow[] = [
      transfer(),
      transfer({ idx: 9, data: '0x' + '0'.repeat(63) + '7' }),
      transfer({ topics: [...(transfer().topics as string[]), '0x' + '0'.repeat(64)], data: '0x' }), // ERC-721
      transfer({ topics: ['0x' + '1'.repeat(64), ...(transfer().topics as string[]).slice(1)] }),
      transfer({ contract_id: 'not an address' }),
      transfer({ data: '0x1234' }),
      transfer({ selector: TRANSFER_SELECTOR.toUpperCase().replace('0X', '0x') }),
    ];
    const ctx = {} as CallContext;
    for (const event of events) {
      const ev = await py.run({ function: 'erc20_transfers', args: [event], codeEpoch: examples });
      expect(ev.type).toBe('callCompleted');
      expect((ev as Extract<Terminal, { type: 'callCompleted' }>).value).toEqual(
        await erc20Transfers(ctx, event),
      );
    }
  });
});

describe('python executor: calls', () => {
  it('hands the function its args and ctx fields', async () => {
    const block = { chain_id: 1, number: 7, hash: '0xab' };
    const ev = await py.run({
      function: 'echo',
      args: [1, 'two', { three: [3] }, null],
      codeEpoch: fx,
      block,
      taskId: 't-echo',
      attempt: 2,
    });
    expect(ev).toMatchObject({
      type: 'callCompleted',
      value: { args: [1, 'two', { three: [3] }, null], taskId: 't-echo', attempt: 2, block },
    });
    expect((ev as { value: { callId: string } }).value.callId).toBe(ev.callId);
  });

  it('runs plain def and async def; None reads as null', async () => {
    for (const fn of ['noop', 'noop_sync']) {
      expect(await py.run({ function: fn, codeEpoch: fx })).toMatchObject({
        type: 'callCompleted',
        value: null,
      });
    }
    expect(await py.run({ function: 'sleepy', args: [20, 'late'], codeEpoch: fx })).toMatchObject({
      type: 'callCompleted',
      value: 'late',
    });
  });

  it('writes ctx.log lines with the call identity', async () => {
    const ev = await py.run({ function: 'logs', args: ['ada'], codeEpoch: fx, taskId: 't-log' });
    expect(ev.type).toBe('callCompleted');
    // Log lines travel on stderr, not with the call's frames: they may arrive after its terminal event.
    await eventually(() => {
      const lines = py.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: 'info',
          msg: 'hello from python',
          name: 'ada',
          taskId: 't-log',
          callId: ev.callId,
          function: 'logs',
        }),
      );
      expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'careful', extra: 1 }));
    });
  });
});

describe('python executor: failures', () => {
  it('a RetryableError (or retryable = True) fails retryably', async () => {
    expect(await py.run({ function: 'fails', args: ['retryable'], codeEpoch: fx })).toMatchObject({
      type: 'callFailed',
      kind: 'user',
      retryable: true,
      message: 'RetryableError: try again later',
    });
    expect(await py.run({ function: 'fails', args: ['flagged'], codeEpoch: fx })).toMatchObject({
      type: 'callFailed',
      kind: 'user',
      retryable: true,
    });
  });

  it('an exception fails for good, with the function frames only, innermost first (as JS sends them)', async () => {
    const ev = await py.run({ function: 'fails', args: ['x'], codeEpoch: fx });
    expect(ev).toMatchObject({
      type: 'callFailed',
      kind: 'user',
      retryable: false,
      message: 'ValueError: boom: x',
    });
    const lines = ((ev as { stack?: string }).stack ?? '').split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^ {4}at check \(\/.*\/fails\.py:\d+\)$/),
      expect.stringMatching(/^ {4}at main \(\/.*\/fails\.py:\d+\)$/),
    ]);
  });

  it('a value that is not JSON fails the call', async () => {
    expect(await py.run({ function: 'bad_value', codeEpoch: fx })).toMatchObject({
      type: 'callFailed',
      kind: 'user',
      retryable: false,
      message: expect.stringContaining('not JSON-serialisable'),
    });
  });

  it('load failures name the file: no main, a syntax error, an unknown name, a JS function, an unknown epoch', async () => {
    expect(await py.run({ function: 'no_main', codeEpoch: fx })).toMatchObject({
      kind: 'load',
      code: 'FUNCTION_LOAD_FAILED',
      message: expect.stringMatching(/no_main\.py defines no main/),
    });
    expect(await py.run({ function: 'syntax_error', codeEpoch: fx })).toMatchObject({
      kind: 'load',
      code: 'FUNCTION_LOAD_FAILED',
      message: expect.stringMatching(/syntax_error\.py: SyntaxError/),
    });
    expect(await py.run({ function: 'nope', codeEpoch: fx })).toMatchObject({
      kind: 'load',
      retryable: false,
      code: 'FUNCTION_NOT_FOUND',
    });
    // The JS fixtures as an epoch the Python executor was sent: `echo` there is echo.ts.
    expect(await py.run({ function: 'echo', codeEpoch: epochs.take(FIXTURE_FUNCTIONS) })).toMatchObject({
      kind: 'load',
      code: 'FUNCTION_NOT_FOUND',
      message: expect.stringContaining('echo.ts'),
    });
    expect(await py.run({ function: 'noop', codeEpoch: '0123456789abcdef' })).toMatchObject({
      kind: 'load',
      code: 'EPOCH_UNKNOWN',
    });
  });
});

describe('python executor: waiting on the Worker', () => {
  it('sends get, getMany and scan as the JS executor does and gets the answers', async () => {
    requests.length = 0;
    const ev = await py.run({
      function: 'io_reader',
      args: ['balances', 'alice', ['bob', 'zed']],
      codeEpoch: fx,
    });
    expect(ev).toMatchObject({
      type: 'callCompleted',
      value: {
        one: { balance: 10 },
        many: [{ balance: 3 }, null],
        scanned: [{ table: 'balances', block: 7, limit: 2 }, { n: 2 }],
        iterated: [{ table: 'balances', limit: 1 }, { n: 2 }],
      },
    });
    expect(requests).toEqual([
      { kind: 'io', op: 'get', table: 'balances', key: 'alice' },
      { kind: 'io', op: 'getMany', table: 'balances', keys: ['bob', 'zed'] },
      { kind: 'io', op: 'scan', table: 'balances', options: { block: 7, limit: 2 } },
      { kind: 'io', op: 'scan', table: 'balances', options: { limit: 1 } },
    ]);
  });

  it('a failed read that escapes fails the call with kind io and its retryability', async () => {
    expect(await py.run({ function: 'io_fails', args: ['fail'], codeEpoch: fx })).toMatchObject({
      type: 'callFailed',
      kind: 'io',
      retryable: true,
      message: expect.stringContaining('storage unavailable'),
    });
  });

  it('subcalls go through the dispatcher: Python → JS parent → Python child', async () => {
    const ev = await py.run({ function: 'py_parent', args: [4], codeEpoch: fx });
    expect(ev).toMatchObject({ type: 'callCompleted', value: { js: 41 } });
    expect(py.events).toContainEqual(
      expect.objectContaining({
        type: 'callWaiting',
        callId: ev.callId,
        request: { kind: 'subcall', function: 'parent', args: [4] },
      }),
    );
  });
});
