// The per-task call budget (README.md, "Call budget"; docs/security.md, "Task isolation"):
// taskMaxPendingSubcalls bounds the subcalls pending at once, taskMaxCallAttempts the attempts of the
// whole phase. Past either, the task converges CALL_BUDGET_EXCEEDED and everything at the executor is
// cancelled.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WaitRequest } from '../../../../../../src/services/call-host/core/dispatcher/types.js';
import { FAR, FakeExecutor, brief, callList, converges, coreWith, executes } from './harness.js';

const sub = (fn: string): WaitRequest => ({ kind: 'subcall', function: fn, args: [] });

describe('taskMaxPendingSubcalls', () => {
  it.each([
    { max: 1, asks: 1, exceeded: false },
    { max: 1, asks: 2, exceeded: true },
    { max: 3, asks: 3, exceeded: false },
    { max: 3, asks: 4, exceeded: true },
  ])('limit $max, $asks subcalls pending at once → exceeded: $exceeded', ({ max, asks, exceeded }) => {
    const core = coreWith({ taskMaxPendingSubcalls: max });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.start('t/0', 0);
    let last: ReturnType<typeof core.callWaiting> = [];
    for (let i = 0; i < asks; i++) last = ex.take(core.callWaiting('t/0', 1, sub('g'), 1));
    const done = ex.converged.get('t');
    if (!exceeded) {
      expect(done).toBeUndefined();
      expect(core.taskStats('t')).toMatchObject({ subcalls: asks });
      return;
    }
    expect(done).toMatchObject({ success: false, failureCode: 'CALL_BUDGET_EXCEEDED', retryable: false });
    expect(done!.message).toContain(`worker.taskMaxPendingSubcalls (${max})`);
    // The parent and every pending child are cancelled; nothing of the task is left.
    expect(brief(last)).toEqual([
      'C t/0#1 call_budget_exceeded',
      ...Array.from({ length: max }, (_, i) => `C t/0.${i + 1}#1 call_budget_exceeded`),
      'DONE t CALL_BUDGET_EXCEEDED',
    ]);
    expect(core.stats()).toMatchObject({ tasks: 0, inflight: 0, parked: 0, liveCalls: 0 });
  });

  it('ended subcalls free their place: a long chain of one subcall at a time is fine', () => {
    const core = coreWith({ taskMaxPendingSubcalls: 1 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.start('t/0', 0);
    for (let i = 1; i <= 50; i++) {
      ex.take(core.callWaiting('t/0', 1, sub('g'), i));
      ex.complete(`t/0.${i}`, i, i);
    }
    ex.complete('t/0', 51, 'root');
    expect(ex.converged.get('t')).toMatchObject({ success: true, counters: { subcalls: 50 } });
  });
});

describe('taskMaxCallAttempts', () => {
  it('counts roots, subcalls and retries; the attempt past the limit fails the task', () => {
    const core = coreWith({ taskMaxCallAttempts: 4, initialWindow: 1 });
    const ex = new FakeExecutor(core);
    const crash = { kind: 'executor_crash' as const, retryable: true, message: 'x' };
    ex.take(core.startCallPhase('t', callList(2), { deadlineMs: FAR }, 0)); // attempt 1: t/0
    ex.start('t/0', 0);
    ex.take(core.callWaiting('t/0', 1, sub('g'), 1)); // attempt 2: the subcall t/0.1
    ex.take(core.callFailed('t/0.1', 1, crash, 2)); // its slot goes to attempt 3: t/1
    ex.complete('t/1', 3, 'second');
    expect(brief(ex.take(core.tick(FAR / 2)))).toEqual(['X t/0.1#2']); // attempt 4: the retry
    ex.complete('t/0.1', FAR / 2, 'child'); // resumes t/0 (a resume is not an attempt)
    expect(ex.converged.get('t')).toBeUndefined();
    const cmds = ex.take(core.callWaiting('t/0', 1, sub('g'), FAR / 2)); // its subcall would be attempt 5
    expect(brief(cmds)).toEqual(['C t/0#1 call_budget_exceeded', 'DONE t CALL_BUDGET_EXCEEDED']);
    expect(converges(cmds)[0]).toMatchObject({
      success: false,
      retryable: false,
      counters: { attempts: 4, retries: 1 },
    });
    expect(converges(cmds)[0]!.message).toContain('worker.taskMaxCallAttempts (4)');
    expect(core.stats()).toMatchObject({ tasks: 0, inflight: 0, parked: 0, liveCalls: 0 });
  });

  it('property: no task ever dispatches more than taskMaxCallAttempts attempts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.boolean(), { maxLength: 80 }),
        (max, roots, failures) => {
          const core = coreWith({ taskMaxCallAttempts: max, initialWindow: 4 });
          const ex = new FakeExecutor(core);
          let dispatched = executes(
            ex.take(core.startCallPhase('t', callList(roots), { deadlineMs: FAR }, 0)),
          ).length;
          let now = 1;
          for (const fail of failures) {
            const next = ex.live.entries().next().value as [string, number] | undefined;
            if (next === undefined) break;
            const [callId, attempt] = next;
            ex.live.delete(callId);
            const failure = { kind: 'deadline' as const, retryable: true, message: '' };
            const cmds = fail
              ? ex.take(core.callFailed(callId, attempt, failure, now))
              : ex.take(core.callCompleted(callId, attempt, 1, 1, now));
            dispatched += executes(cmds).length;
            dispatched += executes(ex.take(core.tick((now += 10_000)))).length;
          }
          expect(dispatched).toBeLessThanOrEqual(max);
        },
      ),
    );
  });
});
