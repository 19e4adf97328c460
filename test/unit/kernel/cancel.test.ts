// DeadlineQueue on virtual time: a fake clock and a fake timer, so every expiry is checked against the
// exact moment it happened.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeadlineQueue, type DeadlineEntry } from '../../../src/kernel/cancel.js';

interface FakeTimer {
  due: number;
  fn: () => void;
  unref(): FakeTimer;
}

/** A virtual clock and timer: `advance(to)` fires every timer due by `to`, in due order. */
function virtualTime() {
  let now = 0;
  let timers: FakeTimer[] = [];
  const setTimer = (fn: () => void, ms: number): FakeTimer => {
    const timer: FakeTimer = { due: now + ms, fn, unref: () => timer };
    timers.push(timer);
    return timer;
  };
  const clearTimer = (timer: { unref?(): unknown }): void => {
    timers = timers.filter((t) => t !== timer);
  };
  return {
    clock: () => now,
    setTimer,
    clearTimer,
    get armed() {
      return timers.length;
    },
    advance(to: number): void {
      for (;;) {
        const next = timers.filter((t) => t.due <= to).sort((a, b) => a.due - b.due)[0];
        if (next === undefined) break;
        timers = timers.filter((t) => t !== next);
        now = Math.max(now, next.due);
        next.fn();
      }
      now = Math.max(now, to);
    },
  };
}

function setup() {
  const time = virtualTime();
  const queue = new DeadlineQueue(time);
  const expired: [string, number][] = [];
  const add = (name: string, at: number): DeadlineEntry =>
    queue.add(at, () => expired.push([name, time.clock()]));
  return { time, queue, expired, add };
}

describe('DeadlineQueue', () => {
  it('expires each entry once, at its deadline, in deadline order', () => {
    const { time, queue, expired, add } = setup();
    add('b', 200);
    add('a', 100);
    add('c', 300);
    time.advance(99);
    expect(expired).toEqual([]);
    time.advance(1_000);
    expect(expired).toEqual([
      ['a', 100],
      ['b', 200],
      ['c', 300],
    ]);
    expect(queue.size).toBe(0);
    expect(time.armed).toBe(0);
  });

  it('a removed entry never expires, and removing never touches the timer', () => {
    const { time, queue, expired, add } = setup();
    const a = add('a', 100);
    add('b', 150);
    expect(time.armed).toBe(1);
    queue.remove(a);
    expect(time.armed).toBe(1);
    time.advance(1_000);
    expect(expired).toEqual([['b', 150]]);
  });

  it('a timer that finds nothing due re-arms for the earliest entry left, and none when empty', () => {
    const { time, queue, expired, add } = setup();
    const a = add('a', 100);
    add('b', 500);
    queue.remove(a);
    time.advance(100);
    expect(expired).toEqual([]);
    expect(time.armed).toBe(1);
    time.advance(500);
    expect(expired).toEqual([['b', 500]]);
    expect(time.armed).toBe(0);
  });

  it('an earlier deadline added later re-arms the timer for it', () => {
    const { time, expired, add } = setup();
    add('late', 1_000);
    add('early', 10);
    expect(time.armed).toBe(1);
    time.advance(10);
    expect(expired).toEqual([['early', 10]]);
  });

  it('entries due together expire in one firing; an expiry may add a new deadline', () => {
    const { time, queue, expired } = setup();
    queue.add(50, () => {
      expired.push(['x', time.clock()]);
      queue.add(time.clock() + 5, () => expired.push(['follow-up', time.clock()]));
    });
    queue.add(50, () => expired.push(['y', time.clock()]));
    time.advance(60);
    expect(expired).toEqual([
      ['x', 50],
      ['y', 50],
      ['follow-up', 55],
    ]);
  });

  it('a deadline already passed expires on the next turn of the timer, never synchronously', () => {
    const { time, expired, add } = setup();
    time.advance(100);
    add('past', 40);
    expect(expired).toEqual([]);
    time.advance(100);
    expect(expired).toEqual([['past', 100]]);
  });

  it('property: each expires once, exactly at its deadline, never after removal; one timer at most', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), delay: fc.integer({ min: 0, max: 1_000 }) }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({ kind: fc.constant('advance' as const), by: fc.integer({ min: 0, max: 400 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const time = virtualTime();
        const queue = new DeadlineQueue(time);
        const live: { entry: DeadlineEntry; at: number; fired: number[] }[] = [];
        const removed = new Set<number>();
        for (const o of ops) {
          if (o.kind === 'add') {
            const at = time.clock() + o.delay;
            const rec = { entry: undefined as unknown as DeadlineEntry, at, fired: [] as number[] };
            rec.entry = queue.add(at, () => rec.fired.push(time.clock()));
            live.push(rec);
          } else if (o.kind === 'remove' && live.length > 0) {
            const i = o.pick % live.length;
            const rec = live[i]!;
            if (rec.fired.length === 0) removed.add(i);
            queue.remove(rec.entry);
          } else if (o.kind === 'advance') {
            time.advance(time.clock() + o.by);
          }
          expect(time.armed).toBeLessThanOrEqual(1);
        }
        time.advance(time.clock() + 2_000);
        live.forEach((rec, i) => {
          if (removed.has(i)) {
            expect(rec.fired).toEqual([]);
          } else {
            expect(rec.fired).toHaveLength(1);
            // Deadlines are never in the past when added here, so each fires exactly at its deadline:
            // neither early nor late, however the adds, removals and firings interleave.
            expect(rec.fired[0]).toBe(rec.at);
          }
        });
        expect(queue.size).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
