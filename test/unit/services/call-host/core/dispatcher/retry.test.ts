import { describe, expect, it } from 'vitest';
import {
  callRetryRule,
  decideCallRetry,
  isRetryableFailure,
  retryBackoffMs,
  type CallRetryRule,
} from '../../../../../../src/services/call-host/core/dispatcher/retry-policy.js';
import { resolveDispatcherConfig } from '../../../../../../src/services/call-host/core/dispatcher/config.js';
import type { CallFailure } from '../../../../../../src/services/call-host/core/dispatcher/types.js';
import { FAR, FakeExecutor, RETRY_DEADLINES, brief, callList, converges, coreWith } from './harness.js';

const crash: CallFailure = { kind: 'executor_crash', retryable: true, message: 'executor died' };
const userError: CallFailure = { kind: 'user', retryable: false, message: 'TypeError: x is undefined' };

describe('retry classification', () => {
  it.each([
    { failure: { kind: 'executor_crash', retryable: false }, retry: true },
    { failure: { kind: 'deadline', retryable: false }, retry: true },
    { failure: { kind: 'io', retryable: true }, retry: true },
    { failure: { kind: 'io', retryable: false }, retry: false },
    { failure: { kind: 'user', retryable: false }, retry: false },
    { failure: { kind: 'user', retryable: true }, retry: true }, // the function marked its error retryable
  ] as const)('$failure.kind retryable=$failure.retryable → retried: $retry', ({ failure, retry }) => {
    expect(isRetryableFailure({ ...failure, message: '' })).toBe(retry);
  });

  it.each([
    { attempt: 1, backoff: 50 },
    { attempt: 2, backoff: 100 },
    { attempt: 3, backoff: 200 },
    { attempt: 5, backoff: 800 },
    { attempt: 6, backoff: 1_000 },
    { attempt: 60, backoff: 1_000 },
  ])('backoff after attempt $attempt is $backoff ms', ({ attempt, backoff }) => {
    expect(retryBackoffMs({ initialBackoffMs: 50, maxBackoffMs: 1_000 }, attempt)).toBe(backoff);
  });

  it('equal jitter keeps the backoff within [base/2, base]', () => {
    const policy = { maxAttempts: 3, initialBackoffMs: 100, maxBackoffMs: 1_000 };
    expect(retryBackoffMs(policy, 2, () => 0)).toBe(100);
    expect(retryBackoffMs(policy, 2, () => 0.999_999)).toBe(200);
  });
});

describe('the retry decision (docs/retries.md § Call level)', () => {
  const byDefault: CallRetryRule = { maxAttempts: 3, retryOn: ['executor_crash', 'io', 'user'] };
  const every: CallRetryRule = { maxAttempts: 3, retryOn: ['executor_crash', 'deadline', 'io', 'user'] };
  const crashOnly: CallRetryRule = { maxAttempts: 5, retryOn: ['executor_crash'] };
  it.each([
    // By default a call that spent its budget, or threw an error not marked retryable, runs once.
    { rule: byDefault, kind: 'deadline', retryable: true, attempt: 1, out: 'kind_not_retried' },
    { rule: byDefault, kind: 'user', retryable: false, attempt: 1, out: 'not_retryable' },
    { rule: byDefault, kind: 'io', retryable: false, attempt: 1, out: 'not_retryable' },
    { rule: byDefault, kind: 'user', retryable: true, attempt: 1, out: 'retry' },
    { rule: byDefault, kind: 'io', retryable: true, attempt: 2, out: 'retry' },
    { rule: byDefault, kind: 'executor_crash', retryable: false, attempt: 2, out: 'retry' },
    { rule: byDefault, kind: 'executor_crash', retryable: true, attempt: 3, out: 'attempts_spent' },
    // Listing deadline retries it, within the attempts.
    { rule: every, kind: 'deadline', retryable: false, attempt: 2, out: 'retry' },
    { rule: every, kind: 'deadline', retryable: true, attempt: 3, out: 'attempts_spent' },
    // A listed user kind never retries an error that is not marked retryable.
    { rule: every, kind: 'user', retryable: false, attempt: 1, out: 'not_retryable' },
    // Kinds left out are not retried even when marked retryable.
    { rule: crashOnly, kind: 'io', retryable: true, attempt: 1, out: 'kind_not_retried' },
    { rule: crashOnly, kind: 'user', retryable: true, attempt: 1, out: 'kind_not_retried' },
    { rule: crashOnly, kind: 'executor_crash', retryable: true, attempt: 4, out: 'retry' },
    { rule: crashOnly, kind: 'executor_crash', retryable: true, attempt: 5, out: 'attempts_spent' },
  ] as const)('$kind retryable=$retryable attempt $attempt, retryOn $rule.retryOn → $out', (row) => {
    const d = decideCallRetry(
      { kind: row.kind, retryable: row.retryable, message: '' },
      row.attempt,
      row.rule,
    );
    expect(d.retry ? 'retry' : d.why).toBe(row.out);
  });

  it("a function's own fields override the worker's callRetry, field by field; other functions keep it", () => {
    const config = resolveDispatcherConfig({
      callRetry: { maxAttempts: 4 },
      functionRetry: { slow: { retryOn: ['deadline'] }, flaky: { maxAttempts: 9 } },
    });
    expect(config.callRetry.retryOn).toEqual(['executor_crash', 'io', 'user']);
    expect(callRetryRule(config, 'slow')).toEqual({ maxAttempts: 4, retryOn: ['deadline'] });
    expect(callRetryRule(config, 'flaky')).toEqual({
      maxAttempts: 9,
      retryOn: ['executor_crash', 'io', 'user'],
    });
    expect(callRetryRule(config, 'other')).toEqual({
      maxAttempts: 4,
      retryOn: ['executor_crash', 'io', 'user'],
    });
    // A name that is a property of every object is not a rule.
    expect(callRetryRule(config, 'constructor')).toEqual(callRetryRule(config, 'other'));
  });

  it('refuses a kind it does not know and an attempt count below 1, naming the function', () => {
    expect(() =>
      resolveDispatcherConfig({
        functionRetry: { f: { maxAttempts: 0, retryOn: ['timeout' as 'deadline'] } },
      }),
    ).toThrow(
      /functionRetry\.f\.maxAttempts must be >= 1.*functionRetry\.f\.retryOn must be a list of executor_crash, deadline, io, user/,
    );
  });
});

describe('retries on virtual time', () => {
  it('a call that spends its budget fails its task after one attempt by default, saying why', () => {
    const core = coreWith({ callDeadlineMs: 100 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.start('t/0', 10);
    const [done] = converges(ex.take(core.tick(110)));
    expect(done).toMatchObject({ success: false, failureCode: 'CALL_FAILED', failedCall: { attempts: 1 } });
    expect(done?.message).toMatch(
      /failed after 1 attempt\(s\): deadline: .*not retried: retryOn does not list deadline/,
    );
    expect(core.taskStats('t')).toBeUndefined();
  });

  it('functions.retry of one function retries its budget spent; another function in the task keeps the default', () => {
    const core = coreWith({
      callDeadlineMs: 100,
      functionRetry: { slow: { retryOn: ['deadline'], maxAttempts: 2 } },
    });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', [{ function: 'slow', args: [] }], { deadlineMs: FAR }, 0));
    ex.start('t/0', 0);
    expect(brief(ex.take(core.tick(100)))).toEqual(['C t/0#1 deadline']);
    expect(brief(ex.take(core.tick(150)))).toEqual(['X t/0#2']);
    ex.start('t/0', 150);
    const [done] = converges(ex.take(core.tick(250)));
    expect(done).toMatchObject({ success: false, failedCall: { function: 'slow', attempts: 2 } });

    const other = coreWith({ callDeadlineMs: 100, functionRetry: { slow: { retryOn: ['deadline'] } } });
    const ox = new FakeExecutor(other);
    ox.take(other.startCallPhase('u', [{ function: 'fast', args: [] }], { deadlineMs: FAR }, 0));
    ox.start('u/0', 0);
    expect(converges(ox.take(other.tick(100)))[0]).toMatchObject({
      failedCall: { function: 'fast', attempts: 1 },
    });
  });

  it('retry then success: the retry waits out its backoff, then gets a fresh attempt', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR, fastFail: true }, 0));
    ex.start('t/0', 10);
    expect(ex.take(core.callFailed('t/0', 1, crash, 20))).toEqual([]);
    expect(core.nextDeadline()).toBe(70);
    expect(core.tick(69)).toEqual([]);
    expect(brief(ex.take(core.tick(70)))).toEqual(['X t/0#2']);
    expect(core.taskStats('t')).toMatchObject({ attempts: 2, retries: 1 });
    const [done] = converges(ex.complete('t/0', 80, 'ok'));
    expect(done).toMatchObject({ success: true, outputs: ['ok'], counters: { attempts: 2, retries: 1 } });
  });

  it('retries exhausted → CALL_FAILED, not retryable, naming the call and the last error', () => {
    const core = coreWith({ callRetry: { maxAttempts: 3, initialBackoffMs: 50, maxBackoffMs: 1_000 } });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR, fastFail: true }, 0));
    const io: CallFailure = { kind: 'io', retryable: true, message: 'backend overloaded' };
    const rows = [
      { failAt: 0, attempt: 1, expect: [] as string[], retryAt: 50 },
      { failAt: 50, attempt: 2, expect: [] as string[], retryAt: 150 },
    ];
    for (const row of rows) {
      expect(ex.take(core.callFailed('t/0', row.attempt, io, row.failAt))).toEqual(row.expect);
      expect(core.nextDeadline()).toBe(row.retryAt);
      expect(brief(ex.take(core.tick(row.retryAt)))).toEqual([`X t/0#${row.attempt + 1}`]);
    }
    const [done] = converges(ex.take(core.callFailed('t/0', 3, io, 200)));
    expect(done).toMatchObject({
      success: false,
      failureCode: 'CALL_FAILED',
      retryable: false,
      outputs: [],
      failedCall: { callId: 't/0', index: 0, function: 'f', attempts: 3, failure: io },
    });
    expect(done!.message).toContain('t/0');
    expect(done!.message).toContain('backend overloaded');
    expect(core.nextDeadline()).toBeUndefined();
  });

  it('a thrown user error fails at once; marked retryable it is retried', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('a', callList(1), { deadlineMs: FAR }, 0));
    expect(brief(ex.take(core.callFailed('a/0', 1, userError, 1)))).toEqual(['DONE a CALL_FAILED']);
    ex.take(core.startCallPhase('b', callList(1), { deadlineMs: FAR }, 0));
    expect(ex.take(core.callFailed('b/0', 1, { ...userError, retryable: true }, 1))).toEqual([]);
    expect(brief(ex.take(core.tick(51)))).toEqual(['X b/0#2']);
  });

  it('a retry goes before new root calls', () => {
    const core = coreWith({ initialWindow: 2, minWindow: 2 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(5), { deadlineMs: FAR }, 0));
    ex.take(core.callFailed('t/0', 1, crash, 0)); // frees a slot: t/2 goes now
    expect(ex.live.has('t/2')).toBe(true);
    ex.take(core.tick(50)); // t/0 is queued again, but both slots are taken
    expect(brief(ex.complete('t/1', 60))).toEqual(['X t/0#2']);
  });
});

describe('executor lost', () => {
  it('fails every attempt at the executor retryably, holds dispatch until ready, then retries', () => {
    const core = coreWith({ initialWindow: 4 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(6), { deadlineMs: FAR }, 0));
    ex.start('t/0', 1);
    ex.complete('t/1', 2); // one success: window 5, t/4 and t/5 dispatched
    expect(core.taskStats('t')).toMatchObject({ inflight: 5, window: 5 });
    expect(core.executorLost(3)).toEqual([]); // no CancelCall: the attempts died with the executor
    ex.live.clear();
    expect(core.taskStats('t')).toMatchObject({ inflight: 0, window: 2 }); // halved once, not five times
    expect(core.stats()).toMatchObject({ executorReady: false, inflight: 0 });
    // Backoff is over before the executor is back: nothing is dispatched.
    expect(core.tick(53)).toEqual([]);
    expect(brief(ex.take(core.executorReady(60)))).toEqual(['X t/0#2', 'X t/2#2']);
    ex.drain(70);
    const done = ex.converged.get('t');
    expect(done).toMatchObject({
      success: true,
      outputs: ['v:t/0', 'v:t/1', 'v:t/2', 'v:t/3', 'v:t/4', 'v:t/5'],
    });
  });

  it('exhausting attempts through repeated crashes fails the task with CALL_FAILED', () => {
    const core = coreWith({ callRetry: { maxAttempts: 2 } });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    core.executorLost(1);
    ex.take(core.executorReady(2));
    expect(brief(ex.take(core.tick(51)))).toEqual(['X t/0#2']);
    const [done] = converges(ex.take(core.executorLost(60)));
    expect(done).toMatchObject({
      failureCode: 'CALL_FAILED',
      failedCall: { attempts: 2, failure: { kind: 'executor_crash' } },
    });
  });
});

describe('the retry summary of a converged task (logged once per task, issue 31)', () => {
  it('counts every retried attempt by failure kind and keeps the first failure', () => {
    const core = coreWith({ ...RETRY_DEADLINES, initialWindow: 4, callDeadlineMs: 100 });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(4), { deadlineMs: FAR }, 0));
    for (const id of ['t/0', 't/1', 't/2', 't/3']) ex.start(id, 1);
    core.executorLost(3); // four attempts die with the executor
    ex.live.clear();
    ex.take(core.executorReady(60));
    ex.take(core.tick(60)); // their backoff is over: second attempts go out
    const second = [...ex.live.keys()];
    for (const id of second) ex.start(id, 61);
    ex.take(core.tick(500)); // each spends its 100 ms budget: a third attempt
    for (let now = 600; !ex.converged.has('t') && now < 10_000; now += 100) {
      ex.take(core.tick(now));
      ex.drain(now);
    }
    const done = ex.converged.get('t');
    expect(second.length).toBeGreaterThan(0);
    expect(done?.success).toBe(true);
    expect(done?.retried).toMatchObject({
      attempts: 4 + second.length,
      byKind: { executor_crash: 4, deadline: second.length },
      first: { attempt: 1, failure: { kind: 'executor_crash', message: 'executor lost' } },
    });
  });

  it('is absent when no call ran twice, and on a terminal failure names what was retried', () => {
    const clean = coreWith();
    const a = new FakeExecutor(clean);
    a.take(clean.startCallPhase('t', callList(3), { deadlineMs: FAR }, 0));
    a.drain(1);
    expect(a.converged.get('t')).toMatchObject({ success: true, retried: undefined });

    const core = coreWith({ callRetry: { maxAttempts: 2 } });
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0));
    ex.take(core.callFailed('t/0', 1, crash, 1));
    ex.take(core.tick(100));
    const [done] = converges(ex.take(core.callFailed('t/0', 2, crash, 101)));
    expect(done).toMatchObject({ success: false, retried: { attempts: 1, byKind: { executor_crash: 1 } } });
  });
});

describe('stale events', () => {
  it('ignores every event for an old attempt, an unknown call, or a converged task', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', callList(2), { deadlineMs: FAR }, 0));
    ex.take(core.callFailed('t/0', 1, crash, 1));
    ex.take(core.tick(51)); // attempt 2 is out
    const before = core.stats().staleEvents;
    expect(core.callStarted('t/0', 1, 52)).toEqual([]);
    expect(core.callCompleted('t/0', 1, 'late', 1, 52)).toEqual([]);
    expect(core.callFailed('t/0', 1, userError, 52)).toEqual([]);
    expect(core.callWaiting('t/0', 1, { kind: 'subcall', function: 'g', args: [] }, 52)).toEqual([]);
    expect(core.callCompleted('nope/0', 1, 'x', 1, 52)).toEqual([]);
    expect(core.stats().staleEvents).toBe(before + 5);
    expect(core.taskStats('t')).toMatchObject({ inflight: 2, rootsSucceeded: 0 });

    ex.complete('t/0', 60, 'fresh');
    ex.complete('t/1', 61);
    expect(ex.converged.get('t')?.outputs).toEqual(['fresh', 'v:t/1']);
    expect(core.callCompleted('t/1', 1, 'again', 1, 70)).toEqual([]);
  });

  it('ignores a duplicate callStarted (the clock keeps its first start)', () => {
    const core = coreWith();
    core.startCallPhase('t', callList(1), { deadlineMs: FAR }, 0);
    core.callStarted('t/0', 1, 100);
    core.callStarted('t/0', 1, 4_000);
    expect(core.nextDeadline()).toBe(5_100);
  });
});
