import { describe, expect, it } from 'vitest';
import type { WaitRequest } from '../../../../../../src/services/call-host/core/dispatcher/types.js';
import {
  FAR,
  FakeExecutor,
  RETRY_DEADLINES,
  brief,
  callList,
  coreWith,
  executes,
  resumes,
} from './harness.js';

const sub = (fn: string, waitId?: number): WaitRequest => ({
  kind: 'subcall',
  function: fn,
  args: [fn],
  waitId,
});

describe('subcalls', () => {
  it('nest 3 deep: each child runs with its own id and depth, values flow back up, only the root is output', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    const block = { number: 42 };
    ex.take(core.startCallPhase('t', [{ function: 'root', args: [], block }], { deadlineMs: FAR }, 0));
    ex.start('t/0', 0);
    const chain = [
      { parent: 't/0', child: 't/0.1', fn: 'a', depth: 1 },
      { parent: 't/0.1', child: 't/0.1.1', fn: 'b', depth: 2 },
      { parent: 't/0.1.1', child: 't/0.1.1.1', fn: 'c', depth: 3 },
    ];
    for (const step of chain) {
      ex.start(step.parent, 1);
      const [call] = executes(ex.take(core.callWaiting(step.parent, 1, sub(step.fn, 7), 1)));
      expect(call).toMatchObject({
        callId: step.child,
        parentCallId: step.parent,
        depth: step.depth,
        function: step.fn,
        args: [step.fn],
        block,
      });
    }
    expect(core.taskStats('t')).toMatchObject({ inflight: 1, parked: 3, subcalls: 3 });
    // Unwind: each child's value resumes its parent, which then completes with its own value.
    for (const step of [...chain].reverse()) {
      const [resume] = resumes(ex.complete(step.child, 2, `from ${step.fn}`));
      expect(resume).toMatchObject({
        callId: step.parent,
        attempt: 1,
        ok: true,
        value: `from ${step.fn}`,
        childCallId: step.child,
        waitId: 7,
      });
    }
    ex.complete('t/0', 3, 'root value');
    expect(ex.converged.get('t')).toMatchObject({
      success: true,
      outputs: ['root value'],
      counters: { subcalls: 3, rootCalls: 1 },
    });
  });

  it("pauses the parent's budget clock while its subcall is outstanding", () => {
    const core = coreWith(RETRY_DEADLINES);
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.start('t/0', 0);
    ex.take(core.callWaiting('t/0', 1, sub('g'), 1_000)); // the parent used 1 s
    ex.start('t/0.1', 1_000);
    expect(core.nextDeadline()).toBe(6_000); // only the child's budget runs
    const [resume] = resumes(ex.complete('t/0.1', 5_500));
    expect(resume!.budgetMs).toBe(4_000);
    expect(core.nextDeadline()).toBe(9_500); // without the pause it would have been 5,000
    expect(core.tick(9_499)).toEqual([]);
    expect(brief(ex.take(core.tick(9_500)))).toEqual(['C t/0#1 deadline']);
  });

  it('a failed child resumes its parent with the error; the task fails only if the parent does', () => {
    const core = coreWith({ callRetry: { maxAttempts: 1 } });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, sub('g', 1), 1));
    const cmds = ex.take(
      core.callFailed('t/0.1', 1, { kind: 'user', retryable: false, message: 'child threw' }, 2),
    );
    expect(resumes(cmds)).toEqual([
      expect.objectContaining({
        callId: 't/0',
        ok: false,
        error: {
          kind: 'user',
          retryable: false,
          message: 'child threw',
          childCallId: 't/0.1',
          function: 'g',
          attempts: 1,
        },
      }),
    ]);
    expect(ex.converged.has('t')).toBe(false);
    ex.take(core.callFailed('t/0', 1, { kind: 'user', retryable: false, message: 'parent rethrew' }, 3));
    expect(ex.converged.get('t')).toMatchObject({
      failureCode: 'CALL_FAILED',
      failedCall: { callId: 't/0' },
    });
  });

  it('a child is retried on its own while the parent keeps waiting', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, sub('g'), 1));
    expect(
      ex.take(core.callFailed('t/0.1', 1, { kind: 'executor_crash', retryable: true, message: '' }, 2)),
    ).toEqual([]);
    expect(brief(ex.take(core.tick(52)))).toEqual(['X t/0.1#2']);
    expect(brief(ex.complete('t/0.1', 60))).toEqual(['R t/0#1 ok']);
  });

  it.each([
    { how: 'the parent fails while waiting', expectReason: 'parent_ended' },
    { how: 'the task times out', expectReason: 'task_timed_out' },
  ])('cancels the whole subtree when $how', ({ how, expectReason }) => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, sub('a'), 1));
    ex.take(core.callWaiting('t/0.1', 1, sub('b'), 2));
    const cmds =
      how === 'the task times out'
        ? ex.take(core.cancelTask('t', 'TIMED_OUT', 3))
        : ex.take(core.callFailed('t/0', 1, { kind: 'executor_crash', retryable: true, message: '' }, 3));
    const cancelled = brief(cmds).filter((c) => c.startsWith('C '));
    expect(cancelled).toEqual(
      expectReason === 'task_timed_out'
        ? ['C t/0#1 task_timed_out', 'C t/0.1#1 task_timed_out', 'C t/0.1.1#1 task_timed_out']
        : ['C t/0.1#1 parent_ended', 'C t/0.1.1#1 parent_ended'],
    );
    expect(core.stats()).toMatchObject({ parked: 0, inflight: 0 });
    if (how !== 'the task times out') {
      // The parent's retry gets fresh children with new ids; the old ones are stale.
      expect(brief(ex.take(core.tick(53)))).toEqual(['X t/0#2']);
      expect(brief(ex.take(core.callWaiting('t/0', 2, sub('a'), 60)))).toEqual(['X t/0.2#1']);
      expect(core.callCompleted('t/0.1', 1, 'old', 1, 61)).toEqual([]);
    }
  });

  it('cancels children orphaned by a parent that completes without awaiting them', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, sub('a'), 1));
    expect(brief(ex.complete('t/0', 2, 'done'))).toEqual(['C t/0.1#1 parent_ended', 'DONE t ok']);
  });

  it('a parked parent hands its slot to its child, so children never wait behind new root calls', () => {
    const core = coreWith({ initialWindow: 2, minWindow: 2, taskMaxInflightCalls: 2 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(5), { deadlineMs: FAR }, 0));
    expect(brief(ex.take(core.callWaiting('t/0', 1, sub('a'), 1)))).toEqual(['X t/0.1#1']);
    expect(core.taskStats('t')).toMatchObject({ inflight: 2, parked: 1, rootsPending: 3 });
    // The child's end gives the slot back to the parent, not to t/2.
    expect(brief(ex.complete('t/0.1', 2))).toEqual(['R t/0#1 ok']);
    expect(core.taskStats('t')).toMatchObject({ inflight: 2, parked: 0, rootsPending: 3 });
  });

  it('a resume waits its turn for a slot behind older queued work', () => {
    const core = coreWith({ ...RETRY_DEADLINES, initialWindow: 2, minWindow: 1, taskMaxInflightCalls: 2 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(3), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, sub('a'), 1)); // t/0.1 takes t/0's slot
    ex.take(core.callFailed('t/1', 1, { kind: 'deadline', retryable: true, message: '' }, 2)); // window 1
    expect(ex.take(core.tick(52))).toEqual([]); // t/1's retry is queued: t/0.1 holds the only slot
    // The child fails (no window change); the parent's resume queues behind t/1's retry.
    const cmds = ex.take(core.callFailed('t/0.1', 1, { kind: 'user', retryable: false, message: 'no' }, 60));
    expect(brief(cmds)).toEqual(['X t/1#2']);
    expect(core.taskStats('t')).toMatchObject({ inflight: 1, parked: 1, urgentQueued: 1 });
    // t/1 succeeds: the window grows back to 2, the resume goes first, then the next root call.
    expect(brief(ex.complete('t/1', 70))).toEqual(['R t/0#1 err', 'X t/2#1']);
  });

  it('new root calls wait while taskMaxInflightCalls calls are parked', () => {
    const core = coreWith({ initialWindow: 1, taskMaxInflightCalls: 1 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(2), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, sub('a'), 1));
    // The child crashes into backoff: the slot is free, but t/1 must not start while t/0 is parked.
    expect(
      ex.take(core.callFailed('t/0.1', 1, { kind: 'executor_crash', retryable: true, message: '' }, 2)),
    ).toEqual([]);
    expect(core.taskStats('t')).toMatchObject({ inflight: 0, parked: 1, rootsPending: 1 });
  });

  it('parallel subcalls: each answer names its waitId; the last one gives the parent its slot back', () => {
    const core = coreWith({ initialWindow: 4 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.start('t/0', 0);
    ex.take(core.callWaiting('t/0', 1, sub('a', 1), 100));
    ex.take(core.callWaiting('t/0', 1, sub('b', 2), 100));
    expect([...ex.live.keys()]).toEqual(['t/0', 't/0.1', 't/0.2']);
    const first = resumes(ex.complete('t/0.2', 200, 'B'));
    expect(first).toEqual([expect.objectContaining({ waitId: 2, value: 'B', budgetMs: 4_900 })]);
    expect(core.taskStats('t')).toMatchObject({ parked: 1 }); // still waiting for a
    const second = resumes(ex.complete('t/0.1', 300, 'A'));
    expect(second).toEqual([expect.objectContaining({ waitId: 1, value: 'A', budgetMs: 4_900 })]);
    expect(core.taskStats('t')).toMatchObject({ parked: 0, inflight: 1 });
  });

  it('refuses a subcall beyond maxSubcallDepth with an immediate error resume', () => {
    const core = coreWith({ maxSubcallDepth: 1 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.take(core.callWaiting('t/0', 1, sub('a'), 1));
    ex.start('t/0.1', 1);
    const cmds = ex.take(core.callWaiting('t/0.1', 1, sub('deeper', 9), 2));
    expect(executes(cmds)).toEqual([]);
    expect(resumes(cmds)).toEqual([
      expect.objectContaining({
        callId: 't/0.1',
        ok: false,
        waitId: 9,
        error: expect.objectContaining({ attempts: 0, retryable: false }),
      }),
    ]);
    expect((resumes(cmds)[0] as { error: { message: string } }).error.message).toMatch(/depth limit/);
    expect(core.taskStats('t')).toMatchObject({ inflight: 1, parked: 1 }); // t/0.1 keeps running
  });
});
