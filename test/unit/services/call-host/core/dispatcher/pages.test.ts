// Pages (README.md § Pages): consecutive calls of one function with encoded arguments travel as one
// attempt; a page that fails in any way is split and its calls run on their own. Table tests of packing
// and splitting, and a property test: whatever pages do (succeed, fail by any kind, answer the wrong
// number of values), every call ends with its own output, in call-list order, exactly once.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodedArgsText } from '../../../../../../src/contracts/call-args.js';
import {
  packPages,
  PAGE_MAX_ARG_CHARS,
} from '../../../../../../src/services/call-host/core/dispatcher/pages.js';
import type {
  CallFailureKind,
  CallSpec,
} from '../../../../../../src/services/call-host/core/dispatcher/types.js';
import { FAR, FakeExecutor, brief, coreWith, executes, RETRY_DEADLINES } from './harness.js';

/** A call of `fn` whose arguments are encoded (a row of a JSON scan), bound to block `block`. */
const row = (i: number, fn = 'f', block: unknown = { number: i }): CallSpec => ({
  function: fn,
  args: encodedArgsText(JSON.stringify([{ i }])),
  block,
});
/** A call with argument values (never paged). */
const valued = (i: number, fn = 'f'): CallSpec => ({ function: fn, args: [i] });

const shape = (list: readonly CallSpec[]): string[] =>
  list.map((c) => (c.page ? `${c.function}[${c.page.first}+${c.page.args.length}]` : c.function));

describe('packPages', () => {
  it.each([
    { name: 'off at 1 row', calls: [row(0), row(1)], max: 1, want: ['f', 'f'] },
    { name: 'one call stays a call', calls: [row(0)], max: 4, want: ['f'] },
    {
      name: 'a run of 5 in pages of 2',
      calls: [0, 1, 2, 3, 4].map((i) => row(i)),
      max: 2,
      want: ['f[0+2]', 'f[2+2]', 'f'],
    },
    {
      name: 'a function change ends a page',
      calls: [row(0), row(1), row(2, 'g'), row(3, 'g'), row(4)],
      max: 8,
      want: ['f[0+2]', 'g[2+2]', 'f'],
    },
    {
      name: 'argument values are never paged',
      calls: [row(0), valued(1), row(2), row(3)],
      max: 8,
      want: ['f', 'f', 'f[2+2]'],
    },
  ])('$name', ({ calls, max, want }) => {
    expect(shape(packPages(calls, max, 0))).toEqual(want);
  });

  it('keeps each call’s arguments and block, and numbers pages from `first`', () => {
    const calls = [row(0, 'f', 'a'), row(1, 'f', 'b'), row(2, 'f', 'b')];
    const [page] = packPages(calls, 8, 100);
    expect(page!.page).toEqual({ first: 100, args: calls.map((c) => c.args), blocks: ['a', 'b', 'b'] });
  });

  it('closes a page at PAGE_MAX_ARG_CHARS of argument text', () => {
    const wide = (i: number): CallSpec => ({
      function: 'f',
      args: encodedArgsText(JSON.stringify(['x'.repeat(PAGE_MAX_ARG_CHARS / 3)])),
      block: i,
    });
    expect(shape(packPages([0, 1, 2, 3].map(wide), 256, 0))).toEqual(['f[0+2]', 'f[2+2]']);
  });
});

describe('a page in the dispatcher', () => {
  it('goes as one attempt and gives each call its output, in order', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    const calls = [row(0), row(1), row(2), valued(3)];
    const cmds = ex.take(core.startCallPhase('t', calls, { deadlineMs: FAR }, 0));
    expect(brief(cmds)).toEqual(['X t/0-2#1', 'X t/3#1']);
    expect(executes(cmds)[0]!.page?.args).toHaveLength(3);
    ex.complete('t/0-2', 1, ['a', 'b', 'c']);
    ex.complete('t/3', 1, 'd');
    expect(ex.converged.get('t')).toMatchObject({
      success: true,
      outputs: ['a', 'b', 'c', 'd'],
      counters: { rootCalls: 4, rootsSucceeded: 4, attempts: 2 },
    });
  });

  it.each<{ name: string; fail: (ex: FakeExecutor) => void }>([
    {
      name: 'a call threw',
      fail: (ex) =>
        ex.take(ex.core.callFailed('t/0-2', 1, { kind: 'user', retryable: false, message: 'row 1' }, 1)),
    },
    {
      name: 'the executor was lost',
      fail: (ex) => ex.take(ex.core.executorLost(1)),
    },
    { name: 'it answered four values for three calls', fail: (ex) => ex.complete('t/0-2', 1, [1, 2, 3, 4]) },
    { name: 'it answered an empty list', fail: (ex) => ex.complete('t/0-2', 1, []) },
    { name: 'it answered no list', fail: (ex) => ex.complete('t/0-2', 1, 'oops') },
  ])('is split when $name: each call runs on its own from attempt 1', ({ fail }) => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', [row(0), row(1), row(2)], { deadlineMs: FAR }, 0));
    fail(ex);
    ex.live.delete('t/0-2');
    ex.take(core.executorReady(2));
    expect([...ex.live.entries()].sort()).toEqual([
      ['t/0', 1],
      ['t/1', 1],
      ['t/2', 1],
    ]);
    ex.drain(3);
    const done = ex.converged.get('t')!;
    expect(done).toMatchObject({ success: true, outputs: ['v:t/0', 'v:t/1', 'v:t/2'], retried: undefined });
    expect(done.counters).toMatchObject({ rootCalls: 3, rootsSucceeded: 3 });
    expect(core.stats().pagesSplit).toBe(1);
  });

  it('answered for its first calls only (the executor stopped at half its budget): the rest run on their own', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', [row(0), row(1), row(2), row(3)], { deadlineMs: FAR }, 0));
    const cmds = ex.complete('t/0-3', 1, ['a', 'b']);
    expect(brief(cmds)).toEqual(['X t/2#1', 'X t/3#1']);
    ex.complete('t/3', 2, 'd');
    ex.complete('t/2', 2, 'c');
    expect(ex.converged.get('t')).toMatchObject({
      success: true,
      outputs: ['a', 'b', 'c', 'd'],
      counters: { rootCalls: 4, rootsSucceeded: 4 },
    });
  });

  it('a call of a split page that fails for good fails the task, naming the call and its position', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', [row(0), row(1), row(2)], { deadlineMs: FAR }, 0));
    ex.live.delete('t/0-2');
    ex.take(core.callFailed('t/0-2', 1, { kind: 'user', retryable: false, message: 'x' }, 1));
    ex.live.delete('t/1');
    const cmds = ex.take(core.callFailed('t/1', 1, { kind: 'user', retryable: false, message: 'bad' }, 2));
    expect(brief(cmds)).toEqual(['C t/0#1 fast_fail', 'C t/2#1 fast_fail', 'DONE t CALL_FAILED']);
    expect(ex.converged.get('t')!.failedCall).toMatchObject({ callId: 't/1', index: 1, attempts: 1 });
  });

  it('pages a streaming task within each append, numbering calls across appends', () => {
    const core = coreWith();
    const ex = new FakeExecutor(core);
    ex.take(core.startCallPhase('t', [], { deadlineMs: FAR, streaming: true }, 0));
    expect(brief(ex.take(core.appendCalls('t', [row(0), row(1)], 1)))).toEqual(['X t/0-1#1']);
    expect(brief(ex.take(core.appendCalls('t', [row(2), row(3), row(4)], 1)))).toEqual(['X t/2-4#1']);
    ex.take(core.finishAppending('t', 2));
    ex.complete('t/2-4', 3, ['c', 'd', 'e']);
    ex.complete('t/0-1', 3, ['a', 'b']);
    expect(ex.converged.get('t')).toMatchObject({ success: true, outputs: ['a', 'b', 'c', 'd', 'e'] });
  });
});

type Step =
  | { a: 'ok'; pick: number }
  | { a: 'fail'; pick: number; kind: CallFailureKind }
  | { a: 'short'; pick: number }
  | { a: 'partial'; pick: number; k: number }
  | { a: 'lost' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ a: fc.constant('ok' as const), pick: fc.nat(1000) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      a: fc.constant('fail' as const),
      pick: fc.nat(1000),
      kind: fc.constantFrom<CallFailureKind>('user', 'deadline', 'executor_crash', 'io'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant('short' as const), pick: fc.nat(1000) }) },
  {
    weight: 2,
    arbitrary: fc.record({ a: fc.constant('partial' as const), pick: fc.nat(1000), k: fc.nat(10) }),
  },
  { weight: 1, arbitrary: fc.record({ a: fc.constant('lost' as const) }) },
);

describe('pages, property', () => {
  it('every call ends with its own output in call-list order, whatever its pages do', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ encoded: fc.boolean(), fn: fc.constantFrom('f', 'g') }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(stepArb, { maxLength: 200 }),
        (specs, pageRows, steps) => {
          const core = coreWith({
            callPageRows: pageRows,
            ...RETRY_DEADLINES,
            callRetry: { ...RETRY_DEADLINES.callRetry, maxAttempts: 1_000_000 },
          });
          const ex = new FakeExecutor(core);
          const calls = specs.map((s, i) => (s.encoded ? row(i, s.fn) : valued(i, s.fn)));
          const pages = new Map<string, number>(); // page call id → its first call's position
          const record = (cmds: readonly ReturnType<typeof core.tick>[number][]) => {
            for (const a of executes(cmds)) if (a.page) pages.set(a.callId, a.page.first);
            ex.take(cmds);
          };
          const valueOf = (callId: string, j: number) =>
            pages.has(callId) ? `v:t/${pages.get(callId)! + j}` : `v:${callId}`;
          const answer = (callId: string, now: number) => {
            const attempt = ex.attemptOf(callId);
            ex.live.delete(callId);
            const rows = callId.includes('-') ? Number(callId.split('-')[1]) - pages.get(callId)! + 1 : 1;
            const value = pages.has(callId)
              ? Array.from({ length: rows }, (_, j) => valueOf(callId, j))
              : valueOf(callId, 0);
            record(core.callCompleted(callId, attempt, value, 1, now));
          };
          record(core.startCallPhase('t', calls, { deadlineMs: FAR }, 0));
          let now = 1;
          for (const step of steps) {
            if (ex.converged.has('t')) break;
            now += 1;
            if (step.a === 'lost') {
              ex.live.clear();
              record(core.executorLost(now));
              record(core.executorReady(now));
              continue;
            }
            const live = [...ex.live.keys()];
            if (live.length === 0) {
              record(core.tick(now + 1_000_000));
              continue;
            }
            const callId = live[step.pick % live.length]!;
            const paged = pages.has(callId);
            if (step.a === 'ok' || ((step.a === 'short' || step.a === 'partial') && !paged))
              answer(callId, now);
            else if (step.a === 'partial') {
              // The first k + 1 calls' values (fewer than the page's calls: else the whole list).
              const attempt = ex.attemptOf(callId);
              ex.live.delete(callId);
              const rows = Number(callId.split('-')[1]) - pages.get(callId)! + 1;
              const k = Math.min(step.k + 1, rows);
              const value = Array.from({ length: k }, (_, j) => valueOf(callId, j));
              record(core.callCompleted(callId, attempt, value, 1, now));
            } else if (step.a === 'short') {
              const attempt = ex.attemptOf(callId);
              ex.live.delete(callId);
              record(core.callCompleted(callId, attempt, [], 1, now));
            } else {
              const attempt = ex.attemptOf(callId);
              ex.live.delete(callId);
              record(
                core.callFailed(
                  callId,
                  attempt,
                  { kind: step.a === 'fail' ? step.kind : 'user', retryable: true, message: 'x' },
                  now,
                ),
              );
            }
          }
          // Then everything succeeds.
          for (let guard = 0; !ex.converged.has('t') && guard < 100_000; guard++) {
            now += 1;
            const live = [...ex.live.keys()];
            if (live.length === 0) record(core.tick(now + 1_000_000));
            else answer(live[0]!, now);
          }
          const done = ex.converged.get('t')!;
          expect(done.success).toBe(true);
          expect(done.outputs).toEqual(calls.map((_, i) => `v:t/${i}`));
          expect(done.counters).toMatchObject({ rootCalls: calls.length, rootsSucceeded: calls.length });
          expect(core.stats()).toMatchObject({ tasks: 0, inflight: 0, liveCalls: 0 });
        },
      ),
      { numRuns: 300 },
    );
  });
});
