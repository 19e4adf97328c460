// Task-level retries (src/client/task-retry.ts, run-with-retries.ts): the rule table of decideTaskRetry,
// the backoff, and the loop of runWithRetries driven by a scripted fake runner on virtual time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BlockxClientError, ClientErrorCode } from '../../../src/client/errors.js';
import {
  runWithRetries,
  type RunWithRetriesOptions,
  type RunnableTask,
  type TaskRunner,
} from '../../../src/client/run-with-retries.js';
import {
  backoffMs,
  checkTaskRetryPolicy,
  decideTaskRetry,
  retryReasonOf,
  type AttemptOutcome,
  type TaskRetryPolicy,
} from '../../../src/client/task-retry.js';
import type { TaskRunResult } from '../../../src/client/types.js';
import type { TaskUpdate } from '../../../src/grpc/domain-types.js';

const C = ClientErrorCode;
const POLICY: TaskRetryPolicy = { retries: 3, initialBackoffMs: 500, maxBackoffMs: 10_000, slotTtlMs: 5_000 };
const half = () => 0.5;
const TASK = { functionCallConfig: { type: 'X', config: {} } };

/** RPCs that fail before the Worker accepted the task, and after. */
const BEFORE = [undefined, 'ReserveWorkerSlot', 'SubmitTask'] as const;
const AFTER = ['WatchTasks', 'GetTaskResult'] as const;

type Expect = 'done' | `retry ${string}` | `give_up ${string}`;

// What each client error code means before and after the Worker accepted the task.
const ERROR_RULES: Record<ClientErrorCode, { before: Expect; after: Expect }> = {
  UNAVAILABLE: { before: 'retry unreachable', after: 'retry worker_lost' },
  NOT_FOUND: { before: 'give_up non_retryable', after: 'retry worker_lost' },
  DEADLINE: { before: 'retry unreachable', after: 'retry worker_lost' },
  SLOT_UNCERTAIN: { before: 'retry slot_uncertain', after: 'retry slot_uncertain' },
  NO_CAPACITY: { before: 'retry no_capacity', after: 'retry no_capacity' },
  INVALID_SLOT: { before: 'retry no_capacity', after: 'retry no_capacity' },
  INVALID_ARGUMENT: { before: 'give_up non_retryable', after: 'give_up non_retryable' },
  INTERNAL: { before: 'give_up non_retryable', after: 'give_up non_retryable' },
  CANCELLED: { before: 'give_up cancelled', after: 'give_up cancelled' },
};

const TABLE: [string, AttemptOutcome, Expect][] = [
  ['SUCCEEDED', { kind: 'result', success: true, retryable: false }, 'done'],
  ['SUCCEEDED (retryable flag set)', { kind: 'result', success: true, retryable: true }, 'done'],
  ['FAILED retryable', { kind: 'result', success: false, retryable: true }, 'retry retryable_failure'],
  ['FAILED non-retryable', { kind: 'result', success: false, retryable: false }, 'give_up non_retryable'],
  ...Object.values(C).flatMap((code) => [
    ...BEFORE.map((rpc): [string, AttemptOutcome, Expect] => [
      `${code} from ${rpc ?? '(no rpc)'}`,
      { kind: 'error', code, rpc },
      ERROR_RULES[code].before,
    ]),
    ...AFTER.map((rpc): [string, AttemptOutcome, Expect] => [
      `${code} from ${rpc}`,
      { kind: 'error', code, rpc },
      ERROR_RULES[code].after,
    ]),
  ]),
];

const show = (d: ReturnType<typeof decideTaskRetry>): string =>
  d.type === 'done' ? 'done' : `${d.type} ${d.reason}`;

describe('decideTaskRetry: the rule table', () => {
  it('covers every ClientErrorCode', () => {
    expect(Object.keys(ERROR_RULES).sort()).toEqual(Object.values(C).sort());
  });

  it.each(TABLE)('attempt 1 of 4, %s → %s', (_name, outcome, want) => {
    const d = decideTaskRetry(outcome, 1, POLICY, half);
    expect(show(d)).toBe(want);
    const reason = retryReasonOf(outcome);
    expect(reason).toBe(want === 'done' ? undefined : want.split(' ')[1]);
    if (d.type !== 'retry') return;
    // random 0.5 at attempt 1: base 500 → 375; after SLOT_UNCERTAIN one slot TTL.
    expect(d.delayMs).toBe(d.reason === 'slot_uncertain' ? POLICY.slotTtlMs : 375);
  });

  it.each(TABLE)('last attempt (4 of 4), %s → retries exhausted instead of a retry', (_n, outcome, want) => {
    const d = decideTaskRetry(outcome, POLICY.retries + 1, POLICY, half);
    expect(show(d)).toBe(want.startsWith('retry') ? 'give_up retries_exhausted' : want);
  });

  it('retries while attempt ≤ retries and gives up at exactly attempt retries + 1', () => {
    const failed: AttemptOutcome = { kind: 'result', success: false, retryable: true };
    for (const retries of [0, 1, 3, 7]) {
      const policy = { ...POLICY, retries };
      const types = Array.from({ length: retries + 2 }, (_, i) =>
        show(decideTaskRetry(failed, i + 1, policy, half)),
      );
      expect(types).toEqual([
        ...Array.from({ length: retries }, () => 'retry retryable_failure'),
        'give_up retries_exhausted',
        'give_up retries_exhausted',
      ]);
    }
  });

  it('SLOT_UNCERTAIN waits exactly slotTtlMs whatever the attempt and the random draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 3_600_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, slotTtlMs, r) => {
          const policy = { ...POLICY, retries: 100, slotTtlMs };
          const d = decideTaskRetry(
            { kind: 'error', code: C.SLOT_UNCERTAIN, rpc: 'SubmitTask' },
            attempt,
            policy,
            () => r,
          );
          expect(d).toEqual({ type: 'retry', reason: 'slot_uncertain', delayMs: slotTtlMs });
        },
      ),
    );
  });
});

const policyArb = fc
  .record({
    retries: fc.integer({ min: 0, max: 6 }),
    initialBackoffMs: fc.integer({ min: 0, max: 5_000 }),
    extra: fc.integer({ min: 0, max: 60_000 }),
    slotTtlMs: fc.integer({ min: 0, max: 10_000 }),
  })
  .map(({ extra, ...p }) => ({ ...p, maxBackoffMs: p.initialBackoffMs + extra }));
const randomArb = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('backoffMs', () => {
  it('doubles from initialBackoffMs up to maxBackoffMs, jittered down to half', () => {
    const p = { ...POLICY, initialBackoffMs: 500, maxBackoffMs: 3_000 };
    expect([1, 2, 3, 4, 5].map((k) => backoffMs(k, p, () => 0))).toEqual([250, 500, 1_000, 1_500, 1_500]);
    expect([1, 2, 3, 4, 5].map((k) => backoffMs(k, p, () => 0.999_999))).toEqual([
      500, 1_000, 2_000, 3_000, 3_000,
    ]);
  });

  it('always lies within [base/2, base] and never above maxBackoffMs (property)', () => {
    fc.assert(
      fc.property(policyArb, fc.integer({ min: 1, max: 2_000 }), randomArb, (policy, attempt, r) => {
        const base = Math.min(policy.initialBackoffMs * 2 ** Math.min(attempt - 1, 30), policy.maxBackoffMs);
        const ms = backoffMs(attempt, policy, () => r);
        expect(Number.isInteger(ms)).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(base / 2);
        expect(ms).toBeLessThanOrEqual(base);
        expect(ms).toBeLessThanOrEqual(policy.maxBackoffMs);
      }),
    );
  });
});

describe('checkTaskRetryPolicy', () => {
  it('accepts a sane policy and names the field of a bad one', () => {
    expect(checkTaskRetryPolicy(POLICY)).toBe(POLICY);
    expect(() => checkTaskRetryPolicy({ ...POLICY, retries: -1 })).toThrow(/retries must be an integer/);
    expect(() => checkTaskRetryPolicy({ ...POLICY, retries: 1.5 })).toThrow(/retries/);
    expect(() => checkTaskRetryPolicy({ ...POLICY, slotTtlMs: Number.NaN })).toThrow(/slotTtlMs/);
    expect(() => checkTaskRetryPolicy({ ...POLICY, initialBackoffMs: 2_000, maxBackoffMs: 1_000 })).toThrow(
      /maxBackoffMs \(1000\) must not be below initialBackoffMs \(2000\)/,
    );
  });
});

// --- runWithRetries on virtual time -------------------------------------------------------------------

/** One scripted attempt: the result the fake Worker gives, or the client error the run throws. */
type Step =
  | { readonly kind: 'result'; readonly success: boolean; readonly retryable: boolean }
  | { readonly kind: 'error'; readonly code: ClientErrorCode; readonly rpc: string | undefined };

function resultOf(taskId: string, success: boolean, retryable: boolean): TaskRunResult {
  return {
    taskId,
    workerAddr: 'w:1',
    state: success ? 'SUCCEEDED' : 'FAILED',
    success,
    failureCode: success ? '' : 'CALL_FAILED',
    failureMessage: success ? '' : 'boom',
    retryable,
    pluginResults: [],
    update: { taskId } as unknown as TaskUpdate,
    attempts: 1,
    durationMs: 0,
  };
}

/** A runner that plays `steps` in order (the last one repeats), recording each task it was given. */
function scripted(steps: readonly Step[], during?: (attempt: number) => void) {
  const calls: RunnableTask[] = [];
  const runner: TaskRunner = {
    run(task) {
      calls.push(task);
      during?.(calls.length);
      const step = steps[Math.min(calls.length, steps.length) - 1] as Step;
      if (step.kind === 'result') return Promise.resolve(resultOf(task.taskId, step.success, step.retryable));
      return Promise.reject(
        new BlockxClientError(step.code, `${step.code} in ${step.rpc}`, {
          rpc: step.rpc,
          taskId: task.taskId,
        }),
      );
    },
  };
  return { runner, calls };
}

/** Virtual time: sleep records its delay and resolves at once. */
function virtualSleep() {
  const delays: number[] = [];
  let now = 0;
  return {
    delays,
    now: () => now,
    sleep: (ms: number) => {
      delays.push(ms);
      now += ms;
      return Promise.resolve();
    },
  };
}

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('result' as const), success: fc.boolean(), retryable: fc.boolean() }),
  fc.record({
    kind: fc.constant('error' as const),
    code: fc.constantFrom(...Object.values(C)),
    rpc: fc.constantFrom(...BEFORE, ...AFTER),
  }),
);

/** The test's own oracle, from the rule table above: what a step means. */
function expected(step: Step): Expect {
  if (step.kind === 'result') {
    if (step.success) return 'done';
    return step.retryable ? 'retry retryable_failure' : 'give_up non_retryable';
  }
  const rules = ERROR_RULES[step.code];
  return step.rpc === 'WatchTasks' || step.rpc === 'GetTaskResult' ? rules.after : rules.before;
}

describe('runWithRetries', () => {
  const taskIdOf = (attempt: number) => `t-${attempt}`;
  /** runWithRetries of TASK with POLICY, ids t-<attempt>, random 0.5 and `clock`'s sleep, unless `over` says. */
  const run = (runner: TaskRunner, clock = virtualSleep(), over: Partial<RunWithRetriesOptions> = {}) =>
    runWithRetries(runner, TASK, { policy: POLICY, taskIdOf, sleep: clock.sleep, random: half, ...over });
  const FAILED_RETRYABLE: Step = { kind: 'result', success: false, retryable: true };
  const SUCCEEDED: Step = { kind: 'result', success: true, retryable: false };

  it('a unit failing retryably twice then succeeding: 3 attempts under 3 ids, 2 backoffs', async () => {
    const { runner, calls } = scripted([
      FAILED_RETRYABLE,
      { kind: 'error', code: C.UNAVAILABLE, rpc: 'WatchTasks' },
      SUCCEEDED,
    ]);
    const clock = virtualSleep();
    const reports: string[] = [];
    const out = await run(runner, clock, {
      onAttempt: (r) => reports.push(`${r.attempt} ${r.taskId} ${show(r.decision)}`),
    });
    expect(out).toMatchObject({ ok: true, attempts: 3, result: { taskId: 't-3', success: true } });
    expect(calls.map((c) => c.taskId)).toEqual(['t-1', 't-2', 't-3']);
    expect(calls.every((c) => c.functionCallConfig === TASK.functionCallConfig)).toBe(true);
    expect(clock.delays).toEqual([375, 750]);
    expect(reports).toEqual(['1 t-1 retry retryable_failure', '2 t-2 retry worker_lost', '3 t-3 done']);
  });

  it('always retryable: exactly retries + 1 attempts, then retries_exhausted with the last result', async () => {
    const { runner, calls } = scripted([FAILED_RETRYABLE]);
    const clock = virtualSleep();
    const out = await run(runner, clock);
    expect(out).toMatchObject({
      ok: false,
      attempts: 4,
      reason: 'retries_exhausted',
      result: { taskId: 't-4' },
    });
    expect(calls).toHaveLength(POLICY.retries + 1);
    expect(clock.delays).toEqual([375, 750, 1_500]);
  });

  it('SLOT_UNCERTAIN waits exactly one slot TTL before the next attempt', async () => {
    const { runner } = scripted([
      { kind: 'error', code: C.SLOT_UNCERTAIN, rpc: 'ReserveWorkerSlot' },
      { kind: 'error', code: C.SLOT_UNCERTAIN, rpc: 'SubmitTask' },
      SUCCEEDED,
    ]);
    const clock = virtualSleep();
    const out = await run(runner, clock, { random: Math.random });
    expect(out.ok).toBe(true);
    expect(clock.delays).toEqual([POLICY.slotTtlMs, POLICY.slotTtlMs]);
  });

  it('a non-retryable client error gives up at once, keeping the error; a plain Error is INTERNAL', async () => {
    const { runner, calls } = scripted([{ kind: 'error', code: C.INVALID_ARGUMENT, rpc: 'SubmitTask' }]);
    const clock = virtualSleep();
    expect(await run(runner, clock)).toMatchObject({
      ok: false,
      attempts: 1,
      reason: 'non_retryable',
      error: { code: 'INVALID_ARGUMENT' },
    });
    expect(calls).toHaveLength(1);
    expect(clock.delays).toEqual([]);
    expect(await run({ run: () => Promise.reject(new Error('bug')) })).toMatchObject({
      ok: false,
      attempts: 1,
      reason: 'non_retryable',
      error: { code: 'INTERNAL', taskId: 't-1' },
    });
  });

  it('whatever the outcomes: at most retries + 1 attempts, distinct ids, stops at success or a final outcome (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        policyArb,
        fc.array(stepArb, { minLength: 1, maxLength: 10 }),
        randomArb,
        async (policy, steps, r) => {
          const { runner, calls } = scripted(steps);
          const clock = virtualSleep();
          const out = await run(runner, clock, { policy, random: () => r });
          const n = calls.length;
          const played = Array.from({ length: n }, (_, i) => steps[Math.min(i, steps.length - 1)] as Step);
          const meanings = played.map(expected);
          const last = meanings[n - 1] as Expect;

          expect(n).toBeGreaterThanOrEqual(1);
          expect(n).toBeLessThanOrEqual(policy.retries + 1);
          expect(out.attempts).toBe(n);
          // Each attempt ran under its own id, the one taskIdOf gave.
          expect(calls.map((c) => c.taskId)).toEqual(Array.from({ length: n }, (_, i) => taskIdOf(i + 1)));
          expect(new Set(calls.map((c) => c.taskId)).size).toBe(n);
          // Every attempt but the last was retryable: a success or a final outcome ends the loop at once.
          for (const m of meanings.slice(0, -1)) expect(m).toMatch(/^retry /);
          if (last === 'done') expect(out.ok).toBe(true);
          else if (last.startsWith('give_up'))
            expect(out).toMatchObject({ ok: false, reason: last.split(' ')[1] });
          else {
            expect(out).toMatchObject({ ok: false, reason: 'retries_exhausted' });
            expect(n).toBe(policy.retries + 1);
          }
          // One wait per retry (none when it rounds to 0): a slot TTL after SLOT_UNCERTAIN, else a backoff.
          const waits = meanings.slice(0, -1).map((m, i) => {
            if (m === 'retry slot_uncertain') return policy.slotTtlMs;
            return backoffMs(i + 1, policy, () => r);
          });
          expect(clock.delays).toEqual(waits.filter((ms) => ms > 0));
        },
      ),
    );
  });

  it('`signal` aborted during an attempt: the outcome is CANCELLED and nothing is retried', async () => {
    const abort = new AbortController();
    const { runner, calls } = scripted([FAILED_RETRYABLE], () => abort.abort());
    expect(await run(runner, virtualSleep(), { signal: abort.signal })).toMatchObject({
      ok: false,
      attempts: 1,
      reason: 'cancelled',
      error: { code: 'CANCELLED', taskId: 't-1' },
    });
    expect(calls).toHaveLength(1);
  });

  it.each(['signal', 'stopRetrying'] as const)(
    '`%s` aborted during an attempt that still succeeded: the success stands',
    async (which) => {
      const abort = new AbortController();
      const { runner } = scripted([SUCCEEDED], () => abort.abort());
      expect(await run(runner, virtualSleep(), { [which]: abort.signal })).toMatchObject({
        ok: true,
        attempts: 1,
      });
    },
  );

  it('`signal` is passed to each attempt', async () => {
    const abort = new AbortController();
    const seen: (AbortSignal | undefined)[] = [];
    const runner: TaskRunner = {
      run: (task, opts) => (seen.push(opts?.signal), Promise.resolve(resultOf(task.taskId, true, false))),
    };
    await run(runner, virtualSleep(), { signal: abort.signal });
    expect(seen).toEqual([abort.signal]);
  });

  it('`stopRetrying` aborted mid-attempt: that attempt completes, its result is kept, no new attempt', async () => {
    const stop = new AbortController();
    const clock = virtualSleep();
    const { runner, calls } = scripted(
      [{ kind: 'error', code: C.NO_CAPACITY, rpc: 'ReserveWorkerSlot' }, FAILED_RETRYABLE],
      (attempt) => attempt === 2 && stop.abort(),
    );
    expect(await run(runner, clock, { stopRetrying: stop.signal })).toMatchObject({
      ok: false,
      attempts: 2,
      reason: 'cancelled',
      result: { taskId: 't-2', failureCode: 'CALL_FAILED' },
    });
    expect(calls).toHaveLength(2);
    expect(clock.delays).toEqual([375]);
  });

  it('`stopRetrying` aborted during the backoff wait: the wait ends early and no new attempt starts', async () => {
    const stop = new AbortController();
    const { runner, calls } = scripted([FAILED_RETRYABLE]);
    let woken = false;
    const sleep = (_ms: number, signal?: AbortSignal) => {
      signal?.addEventListener('abort', () => (woken = true));
      stop.abort();
      return Promise.resolve();
    };
    const out = await run(runner, virtualSleep(), {
      sleep,
      signal: new AbortController().signal,
      stopRetrying: stop.signal,
    });
    expect(woken).toBe(true);
    expect(calls).toHaveLength(1);
    expect(out).toMatchObject({ ok: false, attempts: 1, reason: 'cancelled', result: { taskId: 't-1' } });
  });

  it('`signal` aborted during the backoff wait: CANCELLED, no new attempt starts', async () => {
    const abort = new AbortController();
    const { runner, calls } = scripted([{ kind: 'error', code: C.UNAVAILABLE, rpc: 'WatchTasks' }]);
    const sleep = (_ms: number, signal?: AbortSignal) => {
      abort.abort();
      expect(signal?.aborted).toBe(true);
      return Promise.resolve();
    };
    expect(await run(runner, virtualSleep(), { sleep, signal: abort.signal })).toMatchObject({
      ok: false,
      attempts: 1,
      reason: 'cancelled',
      error: { code: 'CANCELLED' },
    });
    expect(calls).toHaveLength(1);
  });
});
