// The follow jobs beside a dashboard feed (docs/dashboard.md § Follow jobs): the feed of the Coordinator
// assembles the cluster's snapshots on its own timer; this reads the follow jobs of the storage database
// on a timer of its own (every `intervalMs`, the next read armed when one ends, so reads never overlap)
// and adds the latest list to every snapshot the feed publishes. A read that fails keeps the last list
// (the page shows when each job was last updated) and is logged once until a read succeeds again.
import type { DashboardSnapshot, FollowJobView } from '../../../contracts/dashboard.js';
import type { DashboardFeedHandle } from './serve-dashboard.js';

/** The timers the reader arms; real ones by default, a fake in tests. */
export interface FeedTimers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const REAL_TIMERS: FeedTimers = {
  set: (fn, ms) => setTimeout(fn, ms).unref(),
  clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface FollowJobsFeedOptions {
  readonly feed: DashboardFeedHandle;
  /** Every follow job with its status (readJobStatuses) and this process's restarts of it. */
  readonly read: () => Promise<readonly FollowJobView[]>;
  readonly intervalMs: number;
  readonly timers?: FeedTimers;
  readonly logger?: { warn(obj: Record<string, unknown>, msg: string): void };
}

/** `feed`, its snapshots carrying the follow jobs too. */
export function withFollowJobs(o: FollowJobsFeedOptions): DashboardFeedHandle {
  const timers = o.timers ?? REAL_TIMERS;
  let jobs: readonly FollowJobView[] = [];
  let running = false;
  let timer: unknown;
  let failing = false;
  const merged = (s: DashboardSnapshot): DashboardSnapshot => ({ ...s, followJobs: jobs });
  const poll = (): void => {
    timer = undefined;
    o.read()
      .then(
        (list) => {
          jobs = list;
          failing = false;
        },
        (err: unknown) => {
          if (!failing)
            o.logger?.warn({ err: String(err) }, 'reading the follow jobs failed; showing the last');
          failing = true;
        },
      )
      .finally(() => {
        if (running) timer = timers.set(poll, o.intervalMs);
      });
  };
  return {
    snapshot: () => merged(o.feed.snapshot()),
    onSnapshot: (listener) => o.feed.onSnapshot((s) => listener(merged(s))),
    start() {
      if (running) return;
      running = true;
      o.feed.start();
      poll();
    },
    stop() {
      running = false;
      if (timer !== undefined) timers.clear(timer);
      timer = undefined;
      o.feed.stop();
    },
  };
}
