// Property test: random interleavings of executor events, time and owner inputs against a model of
// what the executor runs. After every step the core's view must match the model exactly.
// Bulk: successes also arrive as one `callsCompleted` (with duplicate and stale entries mixed in). A twin
// core gets every input too, but each bulk report as its entries one by one (`callCompleted`): the two must
// emit the same commands, attempt for attempt — a bulk report is exactly its entries in order — and no
// input may emit two ExecuteCalls of one task back to back (one command per task per pump).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resolveDispatcherConfig } from '../../../../../../src/services/call-host/core/dispatcher/config.js';
import { DispatcherCore } from '../../../../../../src/services/call-host/core/dispatcher/dispatcher-core.js';
import type { DispatcherCommand } from '../../../../../../src/services/call-host/core/dispatcher/commands.js';
import type {
  CallFailureKind,
  TaskCancelReason,
} from '../../../../../../src/services/call-host/core/dispatcher/types.js';

type Action =
  | { a: 'start' | 'io' | 'ioDone' | 'stale'; pick: number }
  | { a: 'complete'; pick: number; bytes: number }
  | { a: 'completeMany'; picks: number[]; stale: number[]; bytes: number }
  | { a: 'fail'; pick: number; kind: CallFailureKind; retryable: boolean }
  | { a: 'subcall'; pick: number; waitId: number }
  | { a: 'advance'; ms: number }
  | { a: 'lost' | 'ready' }
  | { a: 'cancel'; task: number; reason: TaskCancelReason }
  | { a: 'append'; task: number; n: number }
  | { a: 'finish'; task: number };

const pick = fc.nat(1_000);
const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ a: fc.constant('start' as const), pick }) },
  { weight: 6, arbitrary: fc.record({ a: fc.constant('complete' as const), pick, bytes: fc.nat(40) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      a: fc.constant('completeMany' as const),
      picks: fc.array(pick, { minLength: 1, maxLength: 6 }),
      stale: fc.array(fc.nat(6), { maxLength: 2 }),
      bytes: fc.nat(40),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      a: fc.constant('fail' as const),
      pick,
      kind: fc.constantFrom<CallFailureKind>('user', 'executor_crash', 'deadline', 'io'),
      retryable: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ a: fc.constant('subcall' as const), pick, waitId: fc.nat(5) }) },
  {
    weight: 1,
    arbitrary: fc.record({ a: fc.constantFrom('io' as const, 'ioDone' as const, 'stale' as const), pick }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ a: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 40 }) }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constantFrom('lost' as const, 'ready' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      a: fc.constant('cancel' as const),
      task: fc.nat(3),
      reason: fc.constantFrom<TaskCancelReason>('TIMED_OUT', 'CANCELLED', 'WATCH_DISCONNECTED'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant('append' as const), task: fc.nat(3), n: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ a: fc.constant('finish' as const), task: fc.nat(3) }) },
);

const scenarioArb = fc.record({
  cap: fc.integer({ min: 1, max: 6 }),
  initialWindow: fc.integer({ min: 1, max: 8 }),
  maxAttempts: fc.integer({ min: 1, max: 3 }),
  callDeadlineMs: fc.integer({ min: 5, max: 60 }),
  maxBytes: fc.integer({ min: 20, max: 400 }),
  maxDepth: fc.integer({ min: 0, max: 3 }),
  tasks: fc.array(
    fc.record({ calls: fc.nat(8), streaming: fc.boolean(), deadline: fc.integer({ min: 50, max: 2_000 }) }),
    {
      minLength: 1,
      maxLength: 4,
    },
  ),
  actions: fc.array(actionArb, { maxLength: 150 }),
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

/** Commands with each ExecuteCalls spelled out per attempt: what the executor gets, whatever the grouping. */
function flat(cmds: readonly DispatcherCommand[]): unknown[] {
  return cmds.flatMap((c): unknown[] =>
    c.type === 'ExecuteCalls'
      ? c.attempts.map((a) => ({ x: a, taskId: c.taskId, budgetMs: c.budgetMs }))
      : [c],
  );
}

function run(sc: Scenario): void {
  const config = resolveDispatcherConfig({
    taskMaxInflightCalls: sc.cap,
    initialWindow: sc.initialWindow,
    minWindow: 1,
    callDeadlineMs: sc.callDeadlineMs,
    maxCollectedOutputBytes: sc.maxBytes,
    maxSubcallDepth: sc.maxDepth,
    callRetry: { maxAttempts: sc.maxAttempts, initialBackoffMs: 3, maxBackoffMs: 10 },
  });
  const core = new DispatcherCore(config, { executorReady: true });
  const twin = new DispatcherCore(config, { executorReady: true });
  let now = 0;
  let ready = true;
  const live = new Map<string, { taskId: string; attempt: number }>(); // the executor's view
  const lastAttempt = new Map<string, number>();
  const converged = new Map<string, Extract<DispatcherCommand, { type: 'ConvergeTaskCalls' }>>();
  const rootValue = new Map<string, unknown>(); // root callId → the value its accepted completion gave
  const resumedChildren = new Set<string>();
  const roots = new Map<string, number>(); // taskId → root calls handed over
  const streamingOpen = new Set<string>();
  const taskIds = sc.tasks.map((_, i) => `task${i}`);

  /** The same input to both cores (the twin must answer the same); returns the core's commands. */
  const both = (input: (d: DispatcherCore) => readonly DispatcherCommand[]): readonly DispatcherCommand[] => {
    const cmds = input(core);
    expect(flat(input(twin))).toEqual(flat(cmds));
    return cmds;
  };

  const apply = (cmds: readonly DispatcherCommand[]): void => {
    for (let i = 0; i < cmds.length; i++) {
      const c = cmds[i]!;
      expect(converged.has(c.taskId), `command after convergence: ${JSON.stringify(c)}`).toBe(false);
      switch (c.type) {
        case 'ExecuteCalls': {
          const prev = cmds[i - 1];
          expect(prev?.type === 'ExecuteCalls' && prev.taskId === c.taskId, 'two ExecuteCalls in a row').toBe(
            false,
          );
          expect(c.attempts.length).toBeGreaterThan(0);
          expect(c.budgetMs).toBeGreaterThanOrEqual(1);
          expect(c.budgetMs).toBeLessThanOrEqual(sc.callDeadlineMs);
          for (const a of c.attempts) {
            expect(ready).toBe(true);
            expect(live.has(a.callId), `double execution of ${a.callId}`).toBe(false);
            expect(a.attempt).toBe((lastAttempt.get(a.callId) ?? 0) + 1);
            expect(a.attempt).toBeLessThanOrEqual(sc.maxAttempts);
            lastAttempt.set(a.callId, a.attempt);
            live.set(a.callId, { taskId: c.taskId, attempt: a.attempt });
          }
          break;
        }
        case 'CancelCall':
          expect(live.get(c.callId)?.attempt, `cancel of a dead attempt ${c.callId}#${c.attempt}`).toBe(
            c.attempt,
          );
          live.delete(c.callId);
          break;
        case 'ResumeCall':
          expect(live.get(c.callId)?.attempt).toBe(c.attempt);
          expect(resumedChildren.has(c.childCallId), `child ${c.childCallId} ended twice`).toBe(false);
          resumedChildren.add(c.childCallId);
          break;
        case 'ConvergeTaskCalls': {
          converged.set(c.taskId, c);
          streamingOpen.delete(c.taskId);
          for (const [id, v] of live)
            if (v.taskId === c.taskId) expect.fail(`${id} still live after convergence`);
          if (c.success) {
            const n = roots.get(c.taskId) ?? 0;
            expect(c.outputs).toHaveLength(n);
            for (let i = 0; i < n; i++) expect(c.outputs[i]).toBe(rootValue.get(`${c.taskId}/${i}`));
          } else {
            expect(c.outputs).toEqual([]);
          }
          break;
        }
        default: {
          const _exhaustive: never = c;
          throw new Error(String(_exhaustive));
        }
      }
    }
  };

  const checkInvariants = (): void => {
    let inflight = 0;
    for (const taskId of taskIds) {
      const st = core.taskStats(taskId);
      if (st === undefined) continue;
      expect(st.inflight).toBeLessThanOrEqual(sc.cap);
      expect(st.ioWaits).toBeGreaterThanOrEqual(0);
      inflight += st.inflight;
      const coreView = core
        .callsAtExecutor(taskId)
        .map((x) => `${x.callId}#${x.attempt}`)
        .sort();
      const model = [...live]
        .filter(([, v]) => v.taskId === taskId)
        .map(([id, v]) => `${id}#${v.attempt}`)
        .sort();
      expect(coreView).toEqual(model);
    }
    expect(core.stats().inflight).toBe(inflight);
  };

  const pickLive = (p: number): [string, number] | undefined => {
    const ids = [...live.keys()].sort();
    if (ids.length === 0) return undefined;
    const id = ids[p % ids.length]!;
    return [id, live.get(id)!.attempt];
  };

  const complete = (id: string, attempt: number, bytes: number): void => {
    live.delete(id);
    const value = `${id}@${attempt}`;
    if (/^task\d+\/\d+$/.test(id)) rootValue.set(id, value);
    apply(both((d) => d.callCompleted(id, attempt, value, bytes, now)));
  };

  sc.tasks.forEach((t, i) => {
    const calls = Array.from({ length: t.calls }, (_, k) => ({ function: 'f', args: [k] }));
    roots.set(taskIds[i]!, t.calls);
    if (t.streaming) streamingOpen.add(taskIds[i]!);
    apply(
      both((d) =>
        d.startCallPhase(
          taskIds[i]!,
          calls,
          { deadlineMs: t.deadline, fastFail: true, streaming: t.streaming },
          now,
        ),
      ),
    );
  });
  checkInvariants();

  for (const act of sc.actions) {
    switch (act.a) {
      case 'start':
      case 'io':
      case 'ioDone':
      case 'stale':
      case 'complete':
      case 'fail':
      case 'subcall': {
        const target = pickLive(act.pick);
        if (target === undefined) break;
        const [id, attempt] = target;
        if (act.a === 'start') apply(both((d) => d.callStarted(id, attempt, now)));
        else if (act.a === 'io') apply(both((d) => d.callWaiting(id, attempt, { kind: 'io' }, now)));
        else if (act.a === 'ioDone') apply(both((d) => d.ioFinished(id, attempt, now)));
        else if (act.a === 'stale')
          expect(both((d) => d.callCompleted(id, attempt + 1, 'x', 0, now))).toEqual([]);
        else if (act.a === 'complete') complete(id, attempt, act.bytes);
        else if (act.a === 'fail') {
          live.delete(id);
          const failure = { kind: act.kind, retryable: act.retryable, message: 'm' };
          apply(both((d) => d.callFailed(id, attempt, failure, now)));
        } else if (act.a === 'subcall') {
          const wait = { kind: 'subcall' as const, function: 'g', args: [], waitId: act.waitId };
          apply(both((d) => d.callWaiting(id, attempt, wait, now)));
        }
        break;
      }
      case 'completeMany': {
        // Live attempts picked (duplicates possible), plus stale entries: a later attempt of a picked call.
        const batch: { callId: string; attempt: number; value: string }[] = [];
        for (const p of act.picks) {
          const target = pickLive(p);
          if (target !== undefined) batch.push({ callId: target[0], attempt: target[1], value: '' });
        }
        for (const k of act.stale)
          if (batch.length > 0) {
            const b = batch[k % batch.length]!;
            batch.splice(k % (batch.length + 1), 0, { callId: b.callId, attempt: b.attempt + 1, value: '' });
          }
        for (const b of batch) b.value = `${b.callId}@${b.attempt}`;
        if (batch.length === 0) break;
        const cmds = core.callsCompleted(batch, act.bytes, now);
        // The twin gets the entries one by one; the model follows it entry by entry.
        const oneByOne: DispatcherCommand[] = [];
        for (const b of batch) {
          if (live.get(b.callId)?.attempt === b.attempt) {
            live.delete(b.callId);
            if (/^task\d+\/\d+$/.test(b.callId)) rootValue.set(b.callId, b.value);
          }
          const step = twin.callCompleted(b.callId, b.attempt, b.value, act.bytes, now);
          oneByOne.push(...step);
          apply(step);
        }
        expect(flat(cmds)).toEqual(flat(oneByOne));
        // And the bulk report's own commands keep to one ExecuteCalls per task per pump.
        for (let i = 1; i < cmds.length; i++) {
          const [a, b] = [cmds[i - 1]!, cmds[i]!];
          expect(a.type === 'ExecuteCalls' && b.type === 'ExecuteCalls' && a.taskId === b.taskId).toBe(false);
        }
        break;
      }
      case 'advance':
        now += act.ms;
        apply(both((d) => d.tick(now)));
        break;
      case 'lost':
        ready = false;
        live.clear();
        apply(both((d) => d.executorLost(now)));
        break;
      case 'ready':
        ready = true;
        apply(both((d) => d.executorReady(now)));
        break;
      case 'cancel': {
        const taskId = taskIds[act.task % taskIds.length]!;
        apply(both((d) => d.cancelTask(taskId, act.reason, now)));
        break;
      }
      case 'append':
      case 'finish': {
        const taskId = taskIds[act.task % taskIds.length]!;
        if (!streamingOpen.has(taskId)) break;
        if (act.a === 'finish') {
          streamingOpen.delete(taskId);
          apply(both((d) => d.finishAppending(taskId, now)));
        } else {
          roots.set(taskId, (roots.get(taskId) ?? 0) + act.n);
          const more = Array.from({ length: act.n }, () => ({ function: 'f', args: [] }));
          apply(both((d) => d.appendCalls(taskId, more, now)));
        }
        break;
      }
      default: {
        const _exhaustive: never = act;
        throw new Error(String(_exhaustive));
      }
    }
    checkInvariants();
  }

  // Liveness: with a healthy executor that completes everything, every task converges.
  if (!ready) {
    ready = true;
    apply(both((d) => d.executorReady(now)));
  }
  for (const taskId of [...streamingOpen]) {
    streamingOpen.delete(taskId);
    apply(both((d) => d.finishAppending(taskId, now)));
  }
  for (let guard = 0; converged.size < taskIds.length; guard++) {
    expect(guard).toBeLessThan(10_000);
    const target = pickLive(0);
    if (target !== undefined) complete(target[0], target[1], 0);
    else {
      const next = core.nextDeadline();
      expect(next, 'a task is stuck with nothing live and no timer').toBeDefined();
      now = Math.max(now, next!);
      apply(both((d) => d.tick(now)));
    }
    checkInvariants();
  }
  expect(core.stats()).toMatchObject({ tasks: 0, inflight: 0, parked: 0, liveCalls: 0 });
  expect(core.nextDeadline()).toBeUndefined();
}

describe('DispatcherCore properties', () => {
  it('keeps in-flight ≤ cap, matches the executor view, ends every call once, converges every task once', () => {
    fc.assert(fc.property(scenarioArb, run), { numRuns: 400 });
  });
});
