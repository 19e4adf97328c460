// The thread pool's decisions (src/executor/core/): routing, stuck detection, CallStarted reports, the
// safety net, hard-limit deadlines and the pool's books, as tables on virtual time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CallQueue,
  SEQ_MASK,
  assign,
  endWait,
  newPoolCall,
  release,
  seqBefore,
  startWait,
  takeBack,
  type PoolCall,
  type ThreadBooks,
} from '../../../../src/executor/core/pool-calls.js';
import {
  DeadlineTable,
  IDLE_BEAT_INTERVAL_MS,
  STUCK_MS,
  isStuck,
  lostCallFailure,
  pickThread,
  pickupStart,
  placeCalls,
  safetyNetDue,
  shouldTakeBack,
  silenceMs,
  startedReportDue,
  type CallClock,
} from '../../../../src/executor/core/pool-scheduler.js';
import type { ExecuteCallMessage } from '../../../../src/executor/protocol.js';
import { idleThread } from './fake-books.js';

interface T extends ThreadBooks<C> {
  readonly name: string;
  beatAge: number;
}
type C = PoolCall<T, unknown>;

function thread(name: string, over: Partial<T> = {}): T {
  return { ...idleThread<C, { name: string; beatAge: number }>({ name, beatAge: 0 }), ...over };
}
function msg(callId: string, budgetMs = 1000): ExecuteCallMessage {
  return {
    type: 'ExecuteCall',
    taskId: 't',
    callId,
    attempt: 1,
    function: 'f',
    args: [],
    codeEpoch: 'e',
    budgetMs,
  };
}
const clock = (over: Partial<CallClock> = {}): CallClock => ({
  budgetMs: 1000,
  runningMs: 0,
  runningSince: 0,
  openWaits: 0,
  startReported: false,
  cancelReason: undefined,
  ...over,
});

describe('routing', () => {
  const rows: [string, T[], string | undefined][] = [
    ['the least running wins', [thread('a', { running: 3 }), thread('b', { running: 1 })], 'b'],
    ['the first of equals', [thread('a', { running: 1 }), thread('b', { running: 1 })], 'a'],
    ['not a stuck thread', [thread('a', { beatAge: STUCK_MS + 1 }), thread('b', { running: 5 })], 'b'],
    ['a beat exactly STUCK_MS ago is alive', [thread('a', { beatAge: STUCK_MS })], 'a'],
    [
      'not one with a cancelled call on it',
      [thread('a', { cancelling: 1 }), thread('b', { running: 9 })],
      'b',
    ],
    [
      'not a draining, dead or unready one',
      [thread('a', { draining: true }), thread('b', { dead: true }), thread('c', { ready: false })],
      undefined,
    ],
    ['none at the per-thread bound', [thread('a', { running: 10 }), thread('b', { running: 10 })], undefined],
  ];
  it.each(rows)('%s', (_, threads, expected) => {
    expect(pickThread(threads, 10, (t) => t.beatAge)?.name).toBe(expected);
  });

  const load = fc.record({
    running: fc.nat(12),
    beatAge: fc.constantFrom(0, STUCK_MS, STUCK_MS + 1),
    cancelling: fc.constantFrom(0, 0, 0, 1),
    ready: fc.constantFrom(true, true, true, false),
    draining: fc.constantFrom(false, false, false, true),
  });

  it('property: a batch is placed as repeated picks would place it, none past the bound, no thread hoarding it', () => {
    fc.assert(
      fc.property(
        fc.array(load, { minLength: 1, maxLength: 6 }),
        fc.nat(60),
        fc.integer({ min: 1, max: 12 }),
        (loads, n, max) => {
          const threads = loads.map((l, i) => thread(`t${i}`, l));
          const placed = placeCalls(threads, n, max, (t) => t.beatAge).map((t) => t.name);
          // The same as pickThread, one call at a time, each taking a place on its thread.
          const copies = threads.map((t) => ({ ...t }));
          const oneByOne: string[] = [];
          for (let i = 0; i < n; i++) {
            const t = pickThread(copies, max, (x) => x.beatAge);
            if (!t) break;
            t.running++;
            oneByOne.push(t.name);
          }
          expect(placed).toEqual(oneByOne);
          // Every call placed while a routable thread had room; none past the bound.
          const open = copies.filter(
            (t) => t.ready && !t.draining && t.cancelling === 0 && t.beatAge <= STUCK_MS,
          );
          const free = open.reduce(
            (sum, t) => sum + Math.max(0, max - threads[copies.indexOf(t)]!.running),
            0,
          );
          expect(placed.length).toBe(Math.min(n, free));
          for (const t of copies)
            expect(t.running).toBeLessThanOrEqual(Math.max(max, threads[copies.indexOf(t)]!.running));
          // No hoarding: a thread that got calls ends at most one above any routable thread with room left.
          for (const t of open) {
            if (!placed.includes(t.name)) continue;
            for (const u of open) if (u.running < max) expect(t.running).toBeLessThanOrEqual(u.running + 1);
          }
        },
      ),
    );
  });

  it('places a batch of 5 on threads with 0 and 3 running: 4 and 1', () => {
    const picks = placeCalls([thread('a'), thread('b', { running: 3 })], 5, 10, () => 0);
    expect(picks.map((t) => t.name)).toEqual(['a', 'a', 'a', 'a', 'b']);
  });

  it('takes back from stuck threads and ones with a cancelled call', () => {
    expect(shouldTakeBack(thread('a'), STUCK_MS)).toBe(false);
    expect(shouldTakeBack(thread('a'), STUCK_MS + 1)).toBe(true);
    expect(shouldTakeBack(thread('a', { cancelling: 1 }), 0)).toBe(true);
  });
});

describe('silence: stuck detection reads an idle thread as not silent', () => {
  it.each([
    // beat age, busy for (undefined: no calls on it) → silence, stuck
    ['idle, on its slow beat', IDLE_BEAT_INTERVAL_MS, undefined, 0, false],
    [
      'idle and not beating at all (a stray timer spinning): seen once it gets calls',
      10_000,
      undefined,
      0,
      false,
    ],
    ['just got calls after an idle stretch: counts from then', IDLE_BEAT_INTERVAL_MS, 5, 5, false],
    ['got calls and has not beaten since', 10_000, STUCK_MS + 1, STUCK_MS + 1, true],
    ['busy and beating', 3, 10_000, 3, false],
    ['busy, a call keeps the loop from running', STUCK_MS + 1, 10_000, STUCK_MS + 1, true],
  ])('%s', (_name, beatAge, busyFor, silence, stuck) => {
    expect(silenceMs(beatAge, busyFor)).toBe(silence);
    expect(isStuck(silenceMs(beatAge, busyFor))).toBe(stuck);
  });
});

describe('running time (virtual ms)', () => {
  it.each([
    // now, dispatchedAt, pickup age → running since
    [100, 50, undefined, 50],
    [100, 50, 10, 90],
    [100, 50, 80, 50], // never before it was sent
    [100, 50, -5, 100], // clocks disagree by a hair: not in the future
  ] as const)('pickup at now=%d sent=%d age=%s → %d', (now, sent, age, expected) => {
    expect(pickupStart(now, sent, age)).toBe(expected);
  });

  it.each([
    ['not yet', clock({ runningSince: 80 }), 100, undefined],
    ['at 25 ms', clock({ runningSince: 75 }), 100, 25],
    ['reported already', clock({ runningSince: 0, startReported: true }), 100, undefined],
  ] as const)('CallStarted: %s', (_, c, now, expected) => {
    expect(startedReportDue(c, now)).toBe(expected);
  });

  it.each([
    ['within budget + max(1 s, budget)', clock({ budgetMs: 500 }), 1500, undefined, false],
    ['past it', clock({ budgetMs: 500 }), 1501, undefined, true],
    ['a big budget doubles', clock({ budgetMs: 3000 }), 6000, undefined, false],
    ['waiting time does not count', clock({ runningMs: 100, openWaits: 1 }), 99_999, undefined, false],
    ['ran stretches count', clock({ runningMs: 1900, runningSince: 1000 }), 1101, undefined, true],
    ['an explicit margin', clock({ budgetMs: 100 }), 151, 50, true],
    ['no budget, no net', clock({ budgetMs: 0 }), 99_999, undefined, false],
    ['cancelled already', clock({ cancelReason: 'x' }), 99_999, undefined, false],
  ] as const)('safety net: %s', (_, c, now, margin, due) => {
    expect(safetyNetDue(c, now, margin) !== undefined).toBe(due);
  });

  it('a lost thread fails its calls: memory, overdue, else crash; all retryable', () => {
    const call = { overdue: false, cancelReason: undefined };
    expect(lostCallFailure({ index: 1, memoryKill: 'heap' }, call, 'r')).toMatchObject({
      kind: 'executor_crash',
      code: 'EXECUTOR_MEMORY_LIMIT',
      retryable: true,
    });
    expect(
      lostCallFailure({ index: 1, memoryKill: undefined }, { overdue: true, cancelReason: 'x' }, 'r'),
    ).toMatchObject({
      kind: 'deadline',
      retryable: true,
    });
    expect(lostCallFailure({ index: 1, memoryKill: undefined }, call, 'exited')).toEqual({
      kind: 'executor_crash',
      retryable: true,
      message: 'execution thread 1 exited',
    });
  });
});

describe('DeadlineTable', () => {
  it('gives the earliest deadline and takes what is due, earliest first', () => {
    const d = new DeadlineTable<string>();
    expect(d.nextDeadline()).toBeUndefined();
    d.set('b', 200);
    d.set('a', 100);
    d.set('c', 300);
    expect(d.nextDeadline()).toBe(100);
    expect(d.takeDue(99)).toEqual([]);
    expect(d.takeDue(250)).toEqual(['a', 'b']);
    d.delete('c');
    expect(d.nextDeadline()).toBeUndefined();
  });
});

describe('the books', () => {
  it('sequence numbers wrap', () => {
    expect(seqBefore(SEQ_MASK, 0)).toBe(true);
    expect(seqBefore(0, 0)).toBe(false);
    expect(seqBefore(5, 3)).toBe(false);
  });

  it('waits free a place on the thread and resumes take it again', () => {
    const t = thread('a');
    const c = newPoolCall<T, unknown>(msg('c'), msg('c'), 'c#1');
    assign(c, t, 10);
    expect(t.running).toBe(1);
    expect(startWait(c, t, 30)).toBe(true);
    expect(startWait(c, t, 31)).toBe(false); // a second open request
    expect([t.running, c.runningMs]).toEqual([0, 20]);
    endWait(c, t, 40);
    expect(t.running).toBe(0);
    endWait(c, t, 50);
    expect([t.running, c.runningSince]).toEqual([1, 50]);
    expect(release<T, C>(c)).toBe(t);
    expect(t.running).toBe(0);
  });

  it('property: take-back returns exactly the calls sent from `from` on and not picked up, in order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: SEQ_MASK - 20, max: SEQ_MASK }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
        fc.nat(30),
        (start, picked, cut) => {
          const t = thread('a', { sentSeq: start });
          const calls = picked.map((_, i) => {
            const c = newPoolCall<T, unknown>(msg(`c${i}`), msg(`c${i}`), `c${i}#1`);
            assign(c, t, i);
            return c;
          });
          const k = Math.min(cut, calls.length);
          // The thread started everything before k (a prefix), and maybe marked some as picked up.
          calls.forEach((c, i) => (c.pickedUp = i < k && picked[i]!));
          const from = (start + k) & SEQ_MASK;
          const back = takeBack<T, C>(t, from);
          expect(back).toEqual(calls.slice(k));
          expect(t.running).toBe(k);
          expect(back.every((c) => c.state === 'queued' && c.thread === undefined)).toBe(true);
          const q = new CallQueue<C>();
          q.push(calls[0]!);
          q.pushFront(back);
          expect(q.peek()).toBe(back[0] ?? calls[0]);
        },
      ),
    );
  });
});
