// ExecutorCallRunner against a fake executor link, on virtual time: the runner turns dispatcher commands
// into link commands and link events into dispatcher inputs; these scenarios check that wiring (outputs
// in list order, fastFail, executor loss and retry, cancellation through the task signal, deadlines,
// IO and subcall waits, readiness) end to end through the real DispatcherCore.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  dispatcherConfigFromWorker,
  jsonByteLength,
  taskCancelReasonOf,
  type ExecutorCallRunner,
} from '../../../../../src/services/call-host/adapters/executor-call-runner.js';
import { T0, calls, completed, failed, flush, setup, task, track } from './runner-harness.js';
import type {
  ExecuteCallCommand,
  WaitingRequest,
} from '../../../../../src/services/call-host/adapters/executor-link.js';
import type { WorkerConfig } from '../../../../../src/kernel/config-types.js';

describe('ExecutorCallRunner', () => {
  it('sends every call with the task epoch and budget, and returns outputs in call-list order', async () => {
    const { link, runner } = setup();
    const run = track(
      runner.run(task(), [{ function: 'f', args: ['a'], block: { number: 7 } }, ...calls(2)]),
    );
    expect(link.executed.map((c) => [c.callId, c.attempt, c.function, c.codeEpoch, c.budgetMs])).toEqual([
      ['t1/0', 1, 'f', 'epoch-a', 5_000],
      ['t1/1', 1, 'noop', 'epoch-a', 5_000],
      ['t1/2', 1, 'noop', 'epoch-a', 5_000],
    ]);
    expect(link.executed[0]).toMatchObject({ taskId: 't1', args: ['a'], block: { number: 7 } });
    const [a, b, c] = link.executed as [ExecuteCallCommand, ExecuteCallCommand, ExecuteCallCommand];
    runner.handleEvent(completed(c, 'third'));
    runner.handleEvent(completed(a, 'first'));
    await flush();
    expect(run.outcome).toBeUndefined();
    runner.handleEvent(completed(b, { second: true }));
    await run.done;
    expect(run.outcome).toEqual({
      success: true,
      retryable: false,
      outputs: ['first', { second: true }, 'third'],
    });
    expect(runner.activeTasks).toBe(0);
  });

  it('keeps list order whatever order completions arrive in (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 40 })
          .chain((n) => fc.shuffledSubarray([...Array(n).keys()], { minLength: n })),
        async (order) => {
          const { link, runner } = setup();
          const run = runner.run(task(), calls(order.length));
          // Complete in the shuffled order; the window releases more calls as earlier ones succeed.
          const byIndex = new Map<number, ExecuteCallCommand>();
          const remaining = [...order];
          while (remaining.length > 0) {
            for (const c of link.executed) byIndex.set(Number(c.callId.split('/')[1]), c);
            const i = remaining.findIndex((idx) => byIndex.has(idx));
            const [idx] = remaining.splice(i, 1) as [number];
            runner.handleEvent(completed(byIndex.get(idx)!, `out-${idx}`));
          }
          const outcome = await run;
          expect(outcome.outputs).toEqual(order.map((_, i) => `out-${i}`));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('resolves an empty call list at once, without touching the link', async () => {
    const { link, runner } = setup();
    await expect(runner.run(task(), [])).resolves.toEqual({ success: true, retryable: false, outputs: [] });
    expect(link.executed).toHaveLength(0);
  });

  it('fastFail: a terminal user failure cancels the other attempts and fails CALL_FAILED, not retryable', async () => {
    const { link, runner } = setup();
    const run = runner.run(task(), calls(3));
    const [a, b] = link.executed as [ExecuteCallCommand, ExecuteCallCommand];
    runner.handleEvent(completed(a, 1));
    runner.handleEvent(failed(b, 'user', false, 'bad input'));
    const outcome = await run;
    expect(outcome).toMatchObject({
      success: false,
      failureCode: 'CALL_FAILED',
      retryable: false,
      outputs: [],
    });
    expect(outcome.message).toContain('t1/1');
    expect(outcome.message).toContain('bad input');
    expect(link.cancelled).toEqual([{ callId: 't1/2', attempt: 1, reason: 'fast_fail' }]);
  });

  it('a load failure (unknown function, syntax error) is never retried and keeps its code', async () => {
    const { link, runner } = setup();
    const run = runner.run(task(), calls(1, 'missing'));
    runner.handleEvent(
      failed(link.executed[0]!, 'load', false, 'no functions/missing.{ts,mjs,js}', 'FUNCTION_NOT_FOUND'),
    );
    const outcome = await run;
    expect(outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED', retryable: false });
    expect(outcome.message).toContain('FUNCTION_NOT_FOUND: no functions/missing');
    expect(link.executed).toHaveLength(1);
  });

  it('a retryable user failure is retried after its backoff and can then succeed', async () => {
    const { link, time, runner } = setup();
    const run = track(runner.run(task(), calls(1)));
    runner.handleEvent(failed(link.executed[0]!, 'user', true, 'try again'));
    await time.advanceTo(T0 + 49);
    expect(link.executed).toHaveLength(1);
    await time.advanceTo(T0 + 50);
    expect(link.executed.map((c) => [c.callId, c.attempt])).toEqual([
      ['t1/0', 1],
      ['t1/0', 2],
    ]);
    runner.handleEvent(completed(link.executed[1]!, 'ok'));
    await run.done;
    expect(run.outcome).toEqual({ success: true, retryable: false, outputs: ['ok'] });
  });

  it('executor lost: in-flight attempts fail, nothing is sent until ready, then they are retried', async () => {
    const { link, time, runner, warnings } = setup();
    const run = track(runner.run(task(), calls(2)));
    const [a, b] = link.executed as [ExecuteCallCommand, ExecuteCallCommand];
    link.ready = false;
    runner.handleEvent({ type: 'executorLost', reason: 'killed', pid: 42, failedAttempts: 2 });
    // The link then reports each attempt as a crash; the dispatcher already wrote them off (stale).
    runner.handleEvent(failed(a, 'executor_crash', true, 'executor lost'));
    runner.handleEvent(failed(b, 'executor_crash', true, 'executor lost'));
    await time.advanceTo(T0 + 500);
    expect(link.executed).toHaveLength(2); // backoff over, but no executor: held
    link.ready = true;
    runner.handleEvent({ type: 'executorReady', pid: 43, executorVersion: 'x', threads: 2 });
    expect(link.executed.slice(2).map((c) => [c.callId, c.attempt])).toEqual([
      ['t1/0', 2],
      ['t1/1', 2],
    ]);
    runner.handleEvent(completed(link.executed[2]!, 'a'));
    runner.handleEvent(completed(link.executed[3]!, 'b'));
    await run.done;
    expect(run.outcome).toEqual({ success: true, retryable: false, outputs: ['a', 'b'] });
    // One line for the task says why its calls ran again (not one per call).
    const again = warnings.filter((w) => /ran again/.test(w.msg));
    expect(again).toHaveLength(1);
    expect(again[0]!.fields).toMatchObject({
      task_id: 't1',
      retried_attempts: 2,
      by_kind: { executor_crash: 2 },
    });
    expect(again[0]!.msg).toMatch(
      /^2 call attempt\(s\) of this task failed retryably and ran again \(executor_crash ×2\); the first: call t1\/0 \(noop\) attempt 1: executor_crash: executor lost/,
    );
  });

  it('executor crashes on every attempt: the task fails CALL_FAILED once attempts run out, never hangs', async () => {
    const { link, time, runner } = setup({ maxAttempts: 2 });
    const run = track(runner.run(task(), calls(1)));
    runner.handleEvent(failed(link.executed[0]!, 'executor_crash', true, 'executor lost: gone'));
    await time.advanceTo(T0 + 100);
    runner.handleEvent(failed(link.executed[1]!, 'executor_crash', true, 'executor lost: gone'));
    await run.done;
    expect(run.outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED' });
    expect(run.outcome?.message).toContain('executor_crash');
  });

  it('does not dispatch before the executor is ready', async () => {
    const { link, runner } = setup({ ready: false });
    const run = runner.run(task(), calls(1));
    expect(link.executed).toHaveLength(0);
    runner.handleEvent({ type: 'executorReady', pid: 1, executorVersion: 'x', threads: 2 });
    expect(link.executed).toHaveLength(1);
    runner.handleEvent(completed(link.executed[0]!, 7));
    await expect(run).resolves.toMatchObject({ success: true, outputs: [7] });
  });

  it.each([
    [new DOMException('task calls cancelled: TIMED_OUT', 'AbortError'), 'TIMED_OUT', true],
    [new DOMException('task converged (WATCH_DISCONNECTED)', 'AbortError'), 'WATCH_DISCONNECTED', false],
    [new DOMException('worker shutting down', 'AbortError'), 'CANCELLED', true],
    [undefined, 'CANCELLED', true],
  ])('the task signal (%s) cancels in-flight calls and converges %s', async (reason, code, retryable) => {
    const { link, runner } = setup();
    const controller = new AbortController();
    const run = runner.run(task('t1', controller.signal), calls(2));
    runner.handleEvent(completed(link.executed[0]!, 'done'));
    controller.abort(reason);
    const outcome = await run;
    expect(outcome).toMatchObject({ success: false, failureCode: code, retryable, outputs: [] });
    expect(link.cancelled.map((c) => c.callId)).toEqual(['t1/1']);
  });

  it('a task whose signal is already aborted converges at once', async () => {
    const { runner } = setup();
    const controller = new AbortController();
    controller.abort(new DOMException('task calls cancelled: TIMED_OUT', 'AbortError'));
    await expect(runner.run(task('t1', controller.signal), calls(3))).resolves.toMatchObject({
      success: false,
      failureCode: 'TIMED_OUT',
    });
    expect(runner.activeTasks).toBe(0);
  });

  it('cuts a call off at its budget (from callStarted) and retries it', async () => {
    const { link, time, runner } = setup({
      callDeadlineMs: 500,
      retryOn: ['executor_crash', 'deadline', 'io', 'user'],
    });
    const run = track(runner.run(task(), calls(1, 'spin')));
    // Queued time is free: the call reports it has been on a thread for 30 ms, 100 ms after dispatch.
    await time.advanceTo(T0 + 100);
    runner.handleEvent({ type: 'callStarted', taskId: 't1', callId: 't1/0', attempt: 1, elapsedMs: 30 });
    await flush();
    expect(time.armedAt).toBe(T0 + 70 + 500);
    await time.advanceTo(T0 + 569);
    expect(link.cancelled).toHaveLength(0);
    await time.advanceTo(T0 + 570);
    expect(link.cancelled).toEqual([{ callId: 't1/0', attempt: 1, reason: 'deadline' }]);
    await time.advanceTo(T0 + 620); // the 50 ms retry backoff
    expect(link.executed.map((c) => c.attempt)).toEqual([1, 2]);
    runner.handleEvent(completed(link.executed[1]!, 'second time'));
    await run.done;
    expect(run.outcome).toMatchObject({ success: true, outputs: ['second time'] });
  });

  it('a stuck call does not hold up another task', async () => {
    const { link, time, runner } = setup({ callDeadlineMs: 500, maxAttempts: 1 });
    const stuck = track(runner.run(task('stuck'), calls(1, 'spin')));
    const quick = track(runner.run(task('quick'), calls(1)));
    runner.handleEvent({ type: 'callStarted', taskId: 'stuck', callId: 'stuck/0', attempt: 1, elapsedMs: 0 });
    runner.handleEvent(completed(link.executed[1]!, 'fast'));
    await quick.done;
    expect(quick.outcome).toMatchObject({ success: true, outputs: ['fast'] });
    expect(stuck.outcome).toBeUndefined();
    await time.advanceTo(T0 + 500);
    await stuck.done;
    expect(stuck.outcome).toMatchObject({ success: false, failureCode: 'CALL_FAILED' });
    expect(stuck.outcome?.message).toContain('deadline');
  });

  it('the task deadline converges TIMED_OUT through the timer even without a signal', async () => {
    const { link, time, runner } = setup();
    const run = track(runner.run({ ...task(), deadlineMs: T0 + 1_000 }, calls(1)));
    await time.advanceTo(T0 + 1_000);
    await run.done;
    expect(run.outcome).toMatchObject({ success: false, failureCode: 'TIMED_OUT', retryable: true });
    expect(link.cancelled).toEqual([{ callId: 't1/0', attempt: 1, reason: 'task_timed_out' }]);
  });

  it('a subcall becomes a child call and its value resumes the parent', async () => {
    const { link, runner } = setup();
    const run = runner.run(task(), calls(1, 'parent'));
    const parent = link.executed[0]!;
    runner.handleEvent({
      type: 'callWaiting',
      taskId: 't1',
      callId: parent.callId,
      attempt: 1,
      requestId: 3,
      request: { kind: 'subcall', function: 'child', args: [2] },
    });
    expect(
      runner.serveWaiting({
        taskId: 't1',
        callId: parent.callId,
        attempt: 1,
        requestId: 3,
        request: { kind: 'subcall', function: 'child', args: [2] },
      }),
    ).toBeUndefined();
    const child = link.executed[1]!;
    expect(child).toMatchObject({ function: 'child', args: [2], codeEpoch: 'epoch-a', callId: 't1/0.1' });
    runner.handleEvent(completed(child, 20));
    expect(link.resumed).toEqual([
      { callId: 't1/0', attempt: 1, outcome: { requestId: 3, ok: true, value: 20 } },
    ]);
    runner.handleEvent(completed(parent, 21));
    await expect(run).resolves.toMatchObject({ success: true, outputs: [21] });
  });

  it('a failed subcall resumes the parent with the error (kind and retryable)', async () => {
    const { link, runner } = setup({ maxAttempts: 1 });
    void runner.run(task(), calls(1, 'parent'));
    const parent = link.executed[0]!;
    runner.handleEvent({
      type: 'callWaiting',
      taskId: 't1',
      callId: parent.callId,
      attempt: 1,
      requestId: 1,
      request: { kind: 'subcall', function: 'child', args: [] },
    });
    runner.handleEvent(failed(link.executed[1]!, 'user', false, 'child broke'));
    expect(link.resumed).toHaveLength(1);
    expect(link.resumed[0]!.outcome).toMatchObject({
      requestId: 1,
      ok: false,
      error: { kind: 'user', retryable: false },
    });
    expect((link.resumed[0]!.outcome as { error: { message: string } }).error.message).toContain(
      'child broke',
    );
  });

  it('IO reads go to the IO handler; the default one fails with NO_STORAGE, not retryable', async () => {
    const { link, runner } = setup();
    void runner.run(task(), calls(1, 'reader'));
    const c = link.executed[0]!;
    const request = { kind: 'io', op: 'get', table: 'blocks', key: { number: 1 } } as const;
    runner.handleEvent({
      type: 'callWaiting',
      taskId: 't1',
      callId: c.callId,
      attempt: 1,
      requestId: 1,
      request,
    });
    const answer = runner.serveWaiting({ taskId: 't1', callId: c.callId, attempt: 1, requestId: 1, request });
    await expect(answer).rejects.toMatchObject({ code: 'NO_STORAGE', retryable: false });
    await expect(answer).rejects.toThrow(/needs storage/);
  });

  it('IO reads are served by the given handler with the task id', async () => {
    const seen: unknown[] = [];
    const { link, runner } = setup({
      io: async (taskId, request) => {
        seen.push([taskId, request]);
        return { number: 1, hash: '0xab' };
      },
    });
    void runner.run(task(), calls(1, 'reader'));
    const c = link.executed[0]!;
    const request = { kind: 'io', op: 'get', table: 'blocks', key: 1 } as const;
    runner.handleEvent({
      type: 'callWaiting',
      taskId: 't1',
      callId: c.callId,
      attempt: 1,
      requestId: 9,
      request,
    });
    await expect(
      runner.serveWaiting({ taskId: 't1', callId: c.callId, attempt: 1, requestId: 9, request }),
    ).resolves.toEqual({
      ok: true,
      value: { number: 1, hash: '0xab' },
    });
    expect(seen).toEqual([['t1', request]]);
  });

  it('read copies: a caching IO handler gives each Calls phase an ioCache id, dropped at convergence when it had hits, and takes the hits', async () => {
    const hits: [string, number][] = [];
    const io = Object.assign(async () => null, {
      countCopyHits: (taskId: string, n: number) => void hits.push([taskId, n]),
    });
    const { link, runner } = setup({ io });
    const first = track(runner.run(task('t1'), calls(2)));
    const [a, b] = link.executed;
    expect(a!.ioCache).toBeDefined();
    expect(b!.ioCache).toBe(a!.ioCache);
    runner.handleEvent({ ...completed(a!, 1), ioHits: 3 } as never);
    runner.handleEvent({ ...failed(b!, 'user', false), ioHits: 2 } as never);
    await first.done;
    expect(hits).toEqual([
      ['t1', 3],
      ['t1', 2],
    ]);
    expect(link.droppedIoCaches).toEqual([a!.ioCache]);
    // The next phase of the same task id gets a new id: copies of the last one can never answer it.
    void runner.run(task('t1'), calls(1));
    expect(link.executed[2]!.ioCache).not.toBe(a!.ioCache);
  });

  it('takes a CallsCompleted as one input: outputs in order, stale entries ignored, hits counted, freed slots refilled in one executeCalls', async () => {
    const hits: [string, number][] = [];
    const io = Object.assign(async () => null, {
      countCopyHits: (taskId: string, n: number) => void hits.push([taskId, n]),
    });
    const { link, runner } = setup({ io });
    const run = track(runner.run(task('t1'), calls(20)));
    expect(link.bulks).toEqual([16]); // the initial window, as one command
    const sent = link.executed.slice();
    const entry = (c: ExecuteCallCommand, value: unknown, ioHits?: number) => ({
      callId: c.callId,
      attempt: c.attempt,
      value,
      durationMs: 1,
      ...(ioHits === undefined ? {} : { ioHits }),
    });
    runner.handleEvent({
      type: 'callsCompleted',
      taskId: 't1',
      results: [entry(sent[1]!, 'b', 2), entry(sent[0]!, 'a'), entry(sent[1]!, 'again', 5)],
      outputBytesEach: 10,
    });
    // Two successes grow the window by two: four calls leave, in one executeCalls.
    expect(link.bulks).toEqual([16, 4]);
    expect(hits).toEqual([
      ['t1', 2],
      ['t1', 5],
    ]);
    expect(link.executed).toHaveLength(20);
    // The other 18 in one frame: the task converges with every output in list order.
    runner.handleEvent({
      type: 'callsCompleted',
      taskId: 't1',
      results: link.executed.slice(2).map((c) => entry(c, Number(c.callId.split('/')[1]))),
      outputBytesEach: 10,
    });
    await run.done;
    expect(run.outcome?.outputs).toEqual(['a', 'b', ...Array.from({ length: 18 }, (_, i) => i + 2)]);
  });

  // An executor keeps read copies only of answers the Worker gave to a call of the phase, so DropIoCache
  // goes only after a phase that read (or reported hits, which only copies of such answers give).
  const wait = (r: ExecutorCallRunner, c: ExecuteCallCommand, request: WaitingRequest['request']) =>
    r.serveWaiting({ taskId: 't1', callId: c.callId, attempt: c.attempt, requestId: 1, request });
  const readKinds: [string, boolean, (r: ExecutorCallRunner, c: ExecuteCallCommand) => unknown][] = [
    ['no read, no hits', false, () => undefined],
    ['hits of 0 only', false, (r, c) => r.handleEvent({ ...completed(c, 0), ioHits: 0 } as never)],
    ['an IO read served', true, (r, c) => wait(r, c, { kind: 'io', op: 'get', table: 'blocks', key: 1 })],
    [
      'an IO read that failed',
      true,
      (r, c) => wait(r, c, { kind: 'io', op: 'scan', table: 'nope', options: {} })?.catch(() => undefined),
    ],
    ['a subcall (not a read)', false, (r, c) => wait(r, c, { kind: 'subcall', function: 'f', args: [] })],
    ['hits in a CallsCompleted', true, (r, c) => r.handleEvent(hitsInBulk(c, 2))],
    [
      'hits in a CallFailed',
      true,
      (r, c) => r.handleEvent({ ...failed(c, 'user', false), ioHits: 1 } as never),
    ],
  ];
  it.each(readKinds)('read copies: DropIoCache after a phase with %s: %s', async (_name, drops, act) => {
    const io = Object.assign(
      async (_t: string, req: { table: string }) => {
        if (req.table === 'nope') throw new Error('no such table');
        return null;
      },
      { countCopyHits: () => undefined },
    );
    const { link, runner } = setup({ io });
    const run = track(runner.run(task('t1'), calls(2)));
    const [a, b] = link.executed;
    await act(runner, a!);
    await flush();
    for (const c of [a!, b!]) runner.handleEvent(completed(c, 1));
    await run.done;
    expect(link.droppedIoCaches).toEqual(drops ? [a!.ioCache] : []);
  });

  it('read copies: a read after the phase converged marks nothing (no task in its phase)', async () => {
    const io = Object.assign(async () => null, { countCopyHits: () => undefined });
    const { link, runner } = setup({ io });
    const run = track(runner.run(task('t1'), calls(1)));
    const [a] = link.executed;
    runner.handleEvent(completed(a!, 1));
    await run.done;
    const request = { kind: 'io', op: 'get', table: 'blocks', key: 1 } as const;
    await runner.serveWaiting({ taskId: 't1', callId: a!.callId, attempt: 1, requestId: 1, request });
    // The next phase of the task id read nothing: nothing to drop (its ioCache is a new one).
    const next = track(runner.run(task('t1'), calls(1)));
    runner.handleEvent(completed(link.executed[1]!, 1));
    await next.done;
    expect(link.droppedIoCaches).toEqual([]);
  });

  const noCopies: [string, Parameters<typeof setup>[0]][] = [
    [
      'readCopies false (the executor keeps none), even with a caching handler',
      { io: Object.assign(async () => null, { countCopyHits: () => undefined }), readCopies: false },
    ],
    ['a handler that does not cache (no countCopyHits)', { io: async () => null }],
  ];
  it.each(noCopies)('read copies: %s → no ioCache sent, nothing dropped', async (_name, opts) => {
    const { link, runner } = setup(opts);
    const run = track(runner.run(task(), calls(1)));
    const c = link.executed[0]!;
    expect(c.ioCache).toBeUndefined();
    runner.handleEvent(completed(c, 1));
    await run.done;
    expect(link.droppedIoCaches).toEqual([]);
  });

  it('OUTPUT_BYTES_EXCEEDED counts the JSON size of the values', async () => {
    const { link, runner } = setup({ maxCollectedOutputBytes: 10 });
    const run = runner.run(task(), calls(2));
    runner.handleEvent(completed(link.executed[0]!, 'abcdefgh')); // 10 bytes with quotes: at the cap
    await flush();
    runner.handleEvent(completed(link.executed[1]!, 'x')); // 3 more
    await expect(run).resolves.toMatchObject({ success: false, failureCode: 'OUTPUT_BYTES_EXCEEDED' });
  });

  it('refuses a second Calls phase for a running task, and close() cancels what runs', async () => {
    const { runner } = setup();
    const first = runner.run(task(), calls(1));
    await expect(runner.run(task(), calls(1))).rejects.toMatchObject({ code: 'TASK_ALREADY_DISPATCHING' });
    runner.close();
    await expect(first).resolves.toMatchObject({ success: false, failureCode: 'CANCELLED', retryable: true });
    await expect(runner.run(task('t2'), calls(1))).resolves.toMatchObject({ failureCode: 'CANCELLED' });
  });

  it('a link without executeCalls that refuses an attempt (throws) turns into a retryable failure of that attempt', async () => {
    const { link, time, runner } = setup();
    Object.assign(link, { executeCalls: undefined }); // each attempt through executeCall
    let refuse = true;
    const original = link.executeCall.bind(link);
    link.executeCall = (cmd) => {
      original(cmd);
      if (refuse) {
        refuse = false;
        throw new Error('CALL_ALREADY_IN_FLIGHT');
      }
    };
    const run = track(runner.run(task(), calls(1)));
    await time.advanceTo(T0 + 50);
    expect(link.executed.map((c) => c.attempt)).toEqual([1, 2]);
    runner.handleEvent(completed(link.executed[1]!, 'ok'));
    await run.done;
    expect(run.outcome).toMatchObject({ success: true, outputs: ['ok'] });
  });
});

describe('helpers', () => {
  it.each([
    ['task calls cancelled: TIMED_OUT', 'TIMED_OUT'],
    [new DOMException('task converged (TIMED_OUT)', 'AbortError'), 'TIMED_OUT'],
    [new Error('task calls cancelled: WATCH_DISCONNECTED'), 'WATCH_DISCONNECTED'],
    [new DOMException('worker shutting down', 'AbortError'), 'CANCELLED'],
    [undefined, 'CANCELLED'],
    [42, 'CANCELLED'],
  ])('taskCancelReasonOf(%s) = %s', (reason, expected) => {
    expect(taskCancelReasonOf(reason)).toBe(expected);
  });

  it.each([
    [null, 4],
    [undefined, 4],
    [true, 4],
    [false, 5],
    [12.5, 4],
    [Number.NaN, 4],
    ['héllo', 8],
    [{ a: [1, 2] }, 11],
  ])('jsonByteLength(%s) = %d, the UTF-8 size of its JSON', (value, bytes) => {
    expect(jsonByteLength(value)).toBe(bytes);
    if (value !== undefined && !Number.isNaN(value)) {
      expect(Buffer.byteLength(JSON.stringify(value))).toBe(bytes);
    }
  });

  it('dispatcherConfigFromWorker takes the worker section settings', () => {
    const w = {
      taskMaxInflightCalls: 64,
      callDeadlineMs: 700,
      maxCollectedOutputBytes: 1_000,
      callRetry: { maxAttempts: 5, initialBackoffMs: 10, maxBackoffMs: 100 },
    } as WorkerConfig;
    expect(dispatcherConfigFromWorker(w)).toMatchObject({
      taskMaxInflightCalls: 64,
      callDeadlineMs: 700,
      maxCollectedOutputBytes: 1_000,
      callRetry: { maxAttempts: 5, initialBackoffMs: 10, maxBackoffMs: 100 },
    });
  });
});

function hitsInBulk(c: ExecuteCallCommand, ioHits: number) {
  return {
    type: 'callsCompleted' as const,
    taskId: 't1',
    results: [{ callId: c.callId, attempt: c.attempt, value: 0, durationMs: 1, ioHits }],
    outputBytesEach: 1,
  };
}
