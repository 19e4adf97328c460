import { describe, expect, it } from 'vitest';
import { DispatcherError } from '../../../../../../src/services/call-host/core/dispatcher/errors.js';
import { FAR, FakeExecutor, brief, callList, converges, coreWith } from './harness.js';

describe('fastFail', () => {
  it('the first terminal root failure cancels the rest, discards outputs, converges CALL_FAILED', () => {
    const core = coreWith({ initialWindow: 4 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(100), { deadlineMs: FAR, fastFail: true }, 0));
    ex.complete('t/0', 1); // window 5: t/4, t/5 out
    const cmds = ex.take(
      core.callFailed('t/2', 1, { kind: 'user', retryable: false, message: 'bad row' }, 2),
    );
    expect(brief(cmds)).toEqual([
      'C t/1#1 fast_fail',
      'C t/3#1 fast_fail',
      'C t/4#1 fast_fail',
      'C t/5#1 fast_fail',
      'DONE t CALL_FAILED',
    ]);
    expect(converges(cmds)[0]).toMatchObject({
      retryable: false,
      outputs: [],
      failedCall: { callId: 't/2', index: 2, attempts: 1 },
    });
    // Nothing more about the task: late events are stale, no more dispatches, no timers.
    expect(core.callCompleted('t/1', 1, 'late', 1, 3)).toEqual([]);
    expect(core.tick(FAR)).toEqual([]);
    expect(core.stats()).toMatchObject({ tasks: 0, inflight: 0, parked: 0, liveCalls: 0 });
  });

  it('a failing task does not disturb another task', () => {
    const core = coreWith({ initialWindow: 2 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('a', callList(2), { deadlineMs: FAR }, 0));
    ex.take(core.startCallPhase('b', callList(2), { deadlineMs: FAR }, 0));
    expect(
      brief(ex.take(core.callFailed('a/0', 1, { kind: 'user', retryable: false, message: '' }, 1))),
    ).toEqual(['C a/1#1 fast_fail', 'DONE a CALL_FAILED']);
    ex.drain(2);
    expect(ex.converged.get('b')).toMatchObject({ success: true, outputs: ['v:b/0', 'v:b/1'] });
  });
});

describe('maxCollectedOutputBytes', () => {
  it.each([
    { cap: 100, sizes: [40, 40, 20], exceeded: false }, // exactly at the cap is fine
    { cap: 100, sizes: [40, 40, 21], exceeded: true },
    { cap: 0, sizes: [0, 0, 0], exceeded: false },
    { cap: 0, sizes: [0, 1, 0], exceeded: true },
  ])('cap $cap with outputs $sizes → exceeded: $exceeded', ({ cap, sizes, exceeded }) => {
    const core = coreWith({ maxCollectedOutputBytes: cap, initialWindow: 1 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(sizes.length), { deadlineMs: FAR }, 0));
    sizes.forEach((bytes, i) => {
      if (!ex.converged.has('t')) ex.complete(`t/${i}`, i + 1, i, bytes);
    });
    const done = ex.converged.get('t')!;
    expect(done.success).toBe(!exceeded);
    if (exceeded)
      expect(done).toMatchObject({ failureCode: 'OUTPUT_BYTES_EXCEEDED', retryable: false, outputs: [] });
  });

  it('cancels the calls still in flight when the cap is crossed', () => {
    const core = coreWith({ maxCollectedOutputBytes: 10, initialWindow: 3 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(3), { deadlineMs: FAR }, 0));
    expect(brief(ex.complete('t/1', 1, 'big', 11))).toEqual([
      'C t/0#1 output_bytes_exceeded',
      'C t/2#1 output_bytes_exceeded',
      'DONE t OUTPUT_BYTES_EXCEEDED',
    ]);
  });

  it('subcall outputs are not collected and do not count', () => {
    const core = coreWith({ maxCollectedOutputBytes: 10 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, { kind: 'subcall', function: 'g', args: [] }, 1));
    ex.complete('t/0.1', 2, 'huge', 1_000_000);
    ex.complete('t/0', 3, 'small', 5);
    expect(ex.converged.get('t')).toMatchObject({
      success: true,
      outputs: ['small'],
      counters: { outputBytes: 5 },
    });
  });
});

describe('outputs', () => {
  it('are in call-list order despite out-of-order completion', () => {
    const core = coreWith({ initialWindow: 8 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(8), { deadlineMs: FAR }, 0));
    for (const i of [7, 2, 5, 0, 6, 1, 4, 3]) ex.complete(`t/${i}`, i, { row: i });
    expect(ex.converged.get('t')?.outputs).toEqual(Array.from({ length: 8 }, (_, i) => ({ row: i })));
  });

  it('an empty call list converges at once with success and no outputs, taking nothing', () => {
    const core = coreWith();
    const cmds = core.startCallPhase('t', [], { deadlineMs: FAR, fastFail: true }, 0);
    expect(cmds).toEqual([
      expect.objectContaining({
        type: 'ConvergeTaskCalls',
        taskId: 't',
        success: true,
        outputs: [],
        retryable: false,
      }),
    ]);
    expect(core.nextDeadline()).toBeUndefined();
    expect(core.stats().tasks).toBe(0);
  });

  it('passes function, args and block through in one ExecuteCalls command', () => {
    const core = coreWith();
    const block = { number: 7, hash: '0xab' };
    const calls = [
      { function: 'hello_world', args: ['ct2'], block },
      { function: 'other', args: [] },
    ];
    expect(core.startCallPhase('t', calls, { deadlineMs: FAR }, 0)).toEqual([
      {
        type: 'ExecuteCalls',
        taskId: 't',
        budgetMs: 5_000,
        attempts: [
          {
            callId: 't/0',
            attempt: 1,
            function: 'hello_world',
            args: ['ct2'],
            block,
            parentCallId: undefined,
            depth: 0,
          },
          {
            callId: 't/1',
            attempt: 1,
            function: 'other',
            args: [],
            block: undefined,
            parentCallId: undefined,
            depth: 0,
          },
        ],
      },
    ]);
  });
});

describe('streaming call lists', () => {
  it('dispatches while calls are appended and converges only after finishAppending', () => {
    const core = coreWith({ initialWindow: 4 });
    const ex = new FakeExecutor(core);
    expect(ex.take(core.startCallPhase('t', [], { deadlineMs: FAR, streaming: true }, 0))).toEqual([]);
    expect(core.isAppending('t')).toBe(true);
    expect(brief(ex.take(core.appendCalls('t', callList(2), 1)))).toEqual(['X t/0#1', 'X t/1#1']);
    ex.drain(2);
    expect(ex.converged.has('t')).toBe(false); // all known calls done, but more may come
    expect(brief(ex.take(core.appendCalls('t', callList(1, 'g'), 3)))).toEqual(['X t/2#1']);
    expect(ex.take(core.finishAppending('t', 4))).toEqual([]);
    ex.drain(5);
    expect(ex.converged.get('t')?.outputs).toEqual(['v:t/0', 'v:t/1', 'v:t/2']);
  });

  it('an empty stream converges on finishAppending', () => {
    const core = coreWith();
    core.startCallPhase('t', [], { deadlineMs: FAR, streaming: true }, 0);
    expect(brief(core.finishAppending('t', 1))).toEqual(['DONE t ok']);
  });

  it('appends to a converged task are ignored (the builder should stop scanning)', () => {
    const core = coreWith();
    core.startCallPhase('t', callList(1), { deadlineMs: FAR, streaming: true }, 0);
    core.callFailed('t/0', 1, { kind: 'user', retryable: false, message: '' }, 1);
    expect(core.isAppending('t')).toBe(false);
    expect(core.appendCalls('t', callList(5), 2)).toEqual([]);
    expect(core.finishAppending('t', 3)).toEqual([]);
  });
});

describe('illegal input throws a DispatcherError and changes nothing', () => {
  it.each([
    {
      name: 'starting a task twice',
      code: 'TASK_ALREADY_DISPATCHING',
      run: (c: ReturnType<typeof coreWith>) => c.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0),
    },
    {
      name: 'appending to a non-streaming task',
      code: 'NOT_APPENDING',
      run: (c: ReturnType<typeof coreWith>) => c.appendCalls('t', callList(1), 0),
    },
    {
      name: 'a call without a function name',
      code: 'INVALID_CALL',
      run: (c: ReturnType<typeof coreWith>) =>
        c.startCallPhase('u', [{ function: '', args: [] }], { deadlineMs: FAR }, 0),
    },
    {
      name: 'a call whose args are not an array',
      code: 'INVALID_CALL',
      run: (c: ReturnType<typeof coreWith>) =>
        c.startCallPhase('u', [{ function: 'f', args: 'x' as unknown as unknown[] }], { deadlineMs: FAR }, 0),
    },
  ])('$name → $code', ({ code, run }) => {
    const core = coreWith();
    core.startCallPhase('t', callList(3), { deadlineMs: FAR }, 0);
    const before = core.stats();
    let thrown: unknown;
    try {
      run(core);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(DispatcherError);
    expect((thrown as DispatcherError).code).toBe(code);
    expect(core.stats()).toEqual(before);
  });

  it('finishAppending twice is illegal', () => {
    const core = coreWith();
    core.startCallPhase('t', callList(1), { deadlineMs: FAR, streaming: true }, 0);
    core.finishAppending('t', 1);
    expect(() => core.finishAppending('t', 2)).toThrow(/NOT_APPENDING/);
  });
});
