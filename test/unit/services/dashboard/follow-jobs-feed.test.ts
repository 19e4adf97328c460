// The follow jobs beside the dashboard feed (src/services/dashboard/app/follow-jobs-feed.ts), on fake
// timers: every snapshot the feed publishes carries the latest list read; reads never overlap (the next is
// armed when one ends); a failed read keeps the last list and is logged once; stop clears the timer.
import { describe, expect, it } from 'vitest';
import type { DashboardSnapshot, FollowJobView } from '../../../../src/contracts/dashboard.js';
import { withFollowJobs, type FeedTimers } from '../../../../src/services/dashboard/app/follow-jobs-feed.js';
import type { DashboardFeedHandle } from '../../../../src/services/dashboard/app/serve-dashboard.js';
import { followJob, snapshotAt } from './fakes.js';

/** A feed that publishes when told to, and records start/stop. */
function fakeFeed() {
  const listeners = new Set<(s: DashboardSnapshot) => void>();
  let current = snapshotAt(1);
  const log: string[] = [];
  const feed: DashboardFeedHandle = {
    snapshot: () => current,
    onSnapshot: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    start: () => void log.push('start'),
    stop: () => void log.push('stop'),
  };
  const publish = (atMs: number): void => {
    current = snapshotAt(atMs);
    for (const l of listeners) l(current);
  };
  return { feed, publish, log };
}

/** Timers that fire only when the test says so. */
function manualTimers() {
  const armed = new Map<number, { fn: () => void; ms: number }>();
  let next = 0;
  const timers: FeedTimers = {
    set: (fn, ms) => {
      armed.set(++next, { fn, ms });
      return next;
    },
    clear: (handle) => void armed.delete(handle as number),
  };
  const fire = (): void => {
    const [id, t] = [...armed][0] as [number, { fn: () => void }];
    armed.delete(id);
    t.fn();
  };
  return { timers, armed, fire };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('withFollowJobs', () => {
  it('adds the latest read to every snapshot, reading again an interval after each read ends', async () => {
    const { feed, publish, log } = fakeFeed();
    const { timers, armed, fire } = manualTimers();
    const lists: FollowJobView[][] = [[followJob('fl-a', { head: 10 })], [followJob('fl-a', { head: 11 })]];
    let reads = 0;
    let pending: (() => void) | undefined;
    const read = () =>
      new Promise<FollowJobView[]>((resolve) => {
        const list = lists[reads++] ?? [];
        pending = () => resolve(list);
      });
    const seen: DashboardSnapshot[] = [];
    const jobsFeed = withFollowJobs({ feed, read, intervalMs: 1000, timers });
    jobsFeed.onSnapshot((s) => seen.push(s));
    jobsFeed.start();
    expect(log).toEqual(['start']);
    expect(reads).toBe(1);
    // Until the first read ends: no jobs, and no second read armed (reads never overlap).
    publish(2);
    expect(seen.at(-1)?.followJobs).toEqual([]);
    expect(armed.size).toBe(0);
    pending?.();
    await settle();
    expect([...armed.values()].map((t) => t.ms)).toEqual([1000]);
    publish(3);
    expect(seen.at(-1)?.followJobs?.[0]?.head).toBe(10);
    expect(jobsFeed.snapshot()).toMatchObject({ atMs: 3, followJobs: [{ head: 10 }] });
    fire();
    expect(reads).toBe(2);
    pending?.();
    await settle();
    publish(4);
    expect(seen.at(-1)?.followJobs?.[0]?.head).toBe(11);
    jobsFeed.stop();
    expect(armed.size).toBe(0);
    expect(log).toEqual(['start', 'stop']);
  });

  it('keeps the last list when a read fails, and logs once until a read succeeds', async () => {
    const { feed } = fakeFeed();
    const { timers, fire } = manualTimers();
    const outcomes = [true, false, false, true, false];
    let reads = 0;
    const read = () =>
      outcomes[reads++]
        ? Promise.resolve([followJob('fl-a', { head: reads })])
        : Promise.reject(new Error('database gone'));
    const warnings: string[] = [];
    const jobsFeed = withFollowJobs({
      feed,
      read,
      intervalMs: 500,
      timers,
      logger: { warn: (_o, msg) => void warnings.push(msg) },
    });
    jobsFeed.start();
    const heads: (number | null | undefined)[] = [];
    for (let i = 0; i < outcomes.length; i++) {
      await settle();
      heads.push(jobsFeed.snapshot().followJobs?.[0]?.head);
      if (i < outcomes.length - 1) fire();
    }
    expect(heads).toEqual([1, 1, 1, 4, 4]);
    expect(warnings).toHaveLength(2);
    jobsFeed.stop();
  });
});
