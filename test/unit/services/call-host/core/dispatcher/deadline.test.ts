import { describe, expect, it } from 'vitest';
import {
  FAR,
  FakeExecutor,
  RETRY_DEADLINES,
  brief,
  callList,
  converges,
  coreWith,
  executes,
} from './harness.js';

describe('per-call deadline (CallDeadlineMs = 5000)', () => {
  it('cuts off a running attempt at exactly its budget: CancelCall, then a retry', () => {
    const core = coreWith(RETRY_DEADLINES);
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.start('t/0', 100);
    expect(core.nextDeadline()).toBe(5_100);
    expect(core.tick(5_099)).toEqual([]);
    expect(brief(ex.take(core.tick(5_100)))).toEqual(['C t/0#1 deadline']);
    expect(core.stats().deadlinesExpired).toBe(1);
    expect(core.nextDeadline()).toBe(5_150); // backoff 50
    expect(brief(ex.take(core.tick(5_150)))).toEqual(['X t/0#2']);
  });

  it('excludes queueing: a call queued for a long time still gets its full budget', () => {
    const core = coreWith({ ...RETRY_DEADLINES, initialWindow: 1, minWindow: 1, taskMaxInflightCalls: 1 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(2), { deadlineMs: FAR }, 0));
    ex.start('t/0', 0);
    // t/1 waits in the worker's queue for 4.9 s behind t/0.
    expect(brief(ex.complete('t/0', 4_900))).toEqual(['X t/1#1']);
    // ... and another 3 s inside the executor before it starts running.
    expect(core.tick(7_900)).toEqual([]);
    ex.start('t/1', 7_900);
    expect(core.nextDeadline()).toBe(12_900);
    expect(core.tick(12_899)).toEqual([]);
    expect(brief(ex.take(core.tick(12_900)))).toEqual(['C t/1#1 deadline']);
  });

  it('never cuts off an attempt that has not started (it is still queued at the executor)', () => {
    const core = coreWith();
    core.startCallPhase('t', callList(1), { deadlineMs: 1_000_000 }, 0);
    expect(core.nextDeadline()).toBe(1_000_000); // only the task deadline
    expect(core.tick(999_999)).toEqual([]);
  });

  it('IO waits do not pause the clock: IO backend time counts', () => {
    const core = coreWith(RETRY_DEADLINES);
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.start('t/0', 0);
    expect(
      core.callWaiting('t/0', 1, { kind: 'io', waitId: 1, request: { table: 'blocks' } }, 1_000),
    ).toEqual([]);
    expect(core.nextDeadline()).toBe(5_000);
    expect(core.taskStats('t')!.ioWaits).toBe(1);
    expect(core.ioFinished('t/0', 1, 4_000)).toEqual([]);
    expect(core.taskStats('t')!.ioWaits).toBe(0);
    expect(brief(ex.take(core.tick(5_000)))).toEqual(['C t/0#1 deadline']);
  });

  it('an event before callStarted starts the clock at that event', () => {
    const core = coreWith();
    core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0);
    core.callWaiting('t/0', 1, { kind: 'io' }, 300);
    expect(core.nextDeadline()).toBe(5_300);
  });

  it('caps the budget sent with ExecuteCall at the time the task has left', () => {
    const core = coreWith();
    const [call] = executes(core.startCallPhase('t', callList(1), { deadlineMs: 2_000 }, 500));
    expect(call!.budgetMs).toBe(1_500);
  });
});

describe('task timeout', () => {
  it('cancelTask(TIMED_OUT) cancels every in-flight attempt, drops queued calls, converges retryable', () => {
    const core = coreWith({ initialWindow: 3 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(10), { deadlineMs: FAR }, 0));
    ex.complete('t/0', 1); // t/3 and t/4 dispatched
    ex.take(core.callFailed('t/1', 1, { kind: 'executor_crash', retryable: true, message: '' }, 2)); // in backoff
    const cmds = ex.take(core.cancelTask('t', 'TIMED_OUT', 3));
    expect(brief(cmds)).toEqual([
      'C t/2#1 task_timed_out',
      'C t/3#1 task_timed_out',
      'C t/4#1 task_timed_out',
      'DONE t TIMED_OUT',
    ]);
    expect(converges(cmds)[0]).toMatchObject({
      retryable: true,
      outputs: [],
      counters: { rootCalls: 10, rootsSucceeded: 1 },
    });
    expect(core.nextDeadline()).toBeUndefined(); // the backoff timer of t/1 went with the task
    expect(core.tick(1_000)).toEqual([]);
    expect(core.stats()).toMatchObject({ tasks: 0, inflight: 0, liveCalls: 0 });
    expect(core.cancelTask('t', 'TIMED_OUT', 4)).toEqual([]); // already converged: no-op
  });

  it.each([
    { reason: 'CANCELLED', cancel: 'task_cancelled', retryable: true },
    { reason: 'WATCH_DISCONNECTED', cancel: 'watch_disconnected', retryable: false },
  ] as const)(
    'cancelTask($reason) converges $reason, retryable: $retryable',
    ({ reason, cancel, retryable }) => {
      const core = coreWith();
      core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0);
      const cmds = core.cancelTask('t', reason, 1);
      expect(brief(cmds)).toEqual([`C t/0#1 ${cancel}`, `DONE t ${reason}`]);
      expect(converges(cmds)[0]!.retryable).toBe(retryable);
    },
  );

  it('the task deadline is a timer too (a backstop to the WorkerCore timeout)', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(2), { deadlineMs: 3_000 }, 0));
    ex.start('t/0', 2_000);
    expect(core.nextDeadline()).toBe(3_000);
    expect(brief(ex.take(core.tick(3_000)))).toEqual([
      'C t/0#1 task_timed_out',
      'C t/1#1 task_timed_out',
      'DONE t TIMED_OUT',
    ]);
  });

  it('a phase started after its deadline converges TIMED_OUT at once, dispatching nothing', () => {
    const core = coreWith();
    expect(brief(core.startCallPhase('t', callList(3), { deadlineMs: 100 }, 100))).toEqual([
      'DONE t TIMED_OUT',
    ]);
  });
});
