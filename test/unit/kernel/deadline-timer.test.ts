// The one OS-timer driver of a Sans-IO core (src/kernel/deadline-timer.ts), on a fake timer host in
// virtual time: one timer per deadline, replaced only when the deadline changes, fired once, re-armed
// after it fired; the delay rounded up, never negative, never past Node's limit; the scan; stop() final.
import { describe, expect, it } from 'vitest';
import {
  DeadlineTimer,
  MAX_TIMER_DELAY_MS,
  nodeTimers,
  type TimerHost,
} from '../../../src/kernel/deadline-timer.js';

/** Timers as data: what is armed, and `advance` fires what falls due in order. */
class FakeHost implements TimerHost {
  now = 0;
  private seq = 0;
  readonly timeouts = new Map<number, { at: number; fire: () => void }>();
  readonly intervals = new Map<number, { next: number; every: number; fire: () => void }>();
  readonly delays: number[] = [];

  setTimeout(fire: () => void, delayMs: number): unknown {
    this.delays.push(delayMs);
    this.timeouts.set(++this.seq, { at: this.now + delayMs, fire });
    return this.seq;
  }
  clearTimeout(handle: unknown): void {
    this.timeouts.delete(handle as number);
  }
  setInterval(fire: () => void, everyMs: number): unknown {
    this.intervals.set(++this.seq, { next: this.now + everyMs, every: everyMs, fire });
    return this.seq;
  }
  clearInterval(handle: unknown): void {
    this.intervals.delete(handle as number);
  }
  advance(to: number): void {
    for (;;) {
      const due = [
        ...[...this.timeouts].map(([id, t]) => ({
          at: t.at,
          run: () => (this.timeouts.delete(id), t.fire()),
        })),
        ...[...this.intervals.values()].map((i) => ({
          at: i.next,
          run: () => ((i.next += i.every), i.fire()),
        })),
      ]
        .filter((d) => d.at <= to)
        .sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.now = due.at;
      due.run();
    }
    this.now = to;
  }
}

function setup() {
  const host = new FakeHost();
  const fired: number[] = [];
  const timer = new DeadlineTimer(() => fired.push(host.now), { host });
  return { host, fired, timer };
}

describe('DeadlineTimer', () => {
  it('arms one timer at the deadline and fires once', () => {
    const { host, fired, timer } = setup();
    timer.arm(100, 0);
    expect(host.timeouts.size).toBe(1);
    host.advance(99);
    expect(fired).toEqual([]);
    host.advance(1_000);
    expect(fired).toEqual([100]);
    expect(host.timeouts.size).toBe(0);
  });

  it.each([
    ['the same deadline again: the timer stays', [100, 100], [100], 1],
    ['an earlier deadline: replaced', [100, 50], [100, 50], 1],
    ['a later deadline: replaced', [100, 150], [100, 150], 1],
    ['nothing due: cleared, none armed', [100, undefined], [100], 0],
  ])('%s', (_name, deadlines, delays, armed) => {
    const { host, timer } = setup();
    for (const d of deadlines) timer.arm(d, 0);
    expect(host.delays).toEqual(delays);
    expect(host.timeouts.size).toBe(armed);
  });

  it('after it fired, the same deadline arms again (the core did not clear it)', () => {
    const { host, fired, timer } = setup();
    timer.arm(10, 0);
    host.advance(10);
    timer.arm(10, 10);
    expect(host.delays).toEqual([10, 0]);
    host.advance(10);
    expect(fired).toEqual([10, 10]);
  });

  it.each([
    ['a deadline already past', 5, 10, 0],
    ['a fractional delay, rounded up', 10.2, 0, 11],
    ['beyond what Node takes: the longest it takes', 2 ** 40, 0, MAX_TIMER_DELAY_MS],
  ])('%s', (_name, deadline, now, delay) => {
    const { host, timer } = setup();
    timer.arm(deadline, now);
    expect(host.delays).toEqual([delay]);
  });

  it('scanEvery calls onFire on its interval, once however often it is asked', () => {
    const { host, fired, timer } = setup();
    timer.scanEvery(500);
    timer.scanEvery(100);
    expect(host.intervals.size).toBe(1);
    host.advance(1_600);
    expect(fired).toEqual([500, 1_000, 1_500]);
  });

  it('stop() clears both timers and is final', () => {
    const { host, fired, timer } = setup();
    timer.scanEvery(500);
    timer.arm(100, 0);
    timer.stop();
    expect(host.timeouts.size + host.intervals.size).toBe(0);
    timer.arm(200, 0);
    timer.scanEvery(500);
    host.advance(10_000);
    expect(fired).toEqual([]);
    expect(host.timeouts.size + host.intervals.size).toBe(0);
  });
});

describe("nodeTimers: Node's timers", () => {
  it.each([
    [false, false],
    [true, true],
  ])('keepAlive %s: the timers hold the process %s', (keepAlive, held) => {
    const host = nodeTimers(keepAlive);
    const t = host.setTimeout(() => undefined, 60_000) as NodeJS.Timeout;
    const i = host.setInterval(() => undefined, 60_000) as NodeJS.Timeout;
    expect([t.hasRef(), i.hasRef()]).toEqual([held, held]);
    host.clearTimeout(t);
    host.clearInterval(i);
  });
});
