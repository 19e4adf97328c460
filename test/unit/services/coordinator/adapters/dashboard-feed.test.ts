// The dashboard feed adapter (src/services/coordinator/adapters/dashboard-feed.ts) against fakes of its
// ports, on fake timers: the cadence, polls never overlapping, cursors sent back, a failing Worker
// skipped while the others are read, a throwing listener isolated, stop() clearing the timer, and the
// option checks.
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ListRecentTasksResponse__Output } from '../../../../../src/generated/proto/blockx/worker/v1/ListRecentTasksResponse.js';
import { CoordinatorServer } from '../../../../../src/services/coordinator/adapters/coordinator-server.js';
import {
  DEFAULT_DASHBOARD_INTERVAL_MS,
  createDashboardFeed,
  type RecentTasksClient,
} from '../../../../../src/services/coordinator/adapters/dashboard-feed.js';
import { jobsServiceHandlers } from '../../../../../src/services/coordinator/adapters/jobs-server.js';
import { businessCodeOf } from '../../../../../src/grpc/status.js';
import { BackfillJobs } from '../../../../../src/services/coordinator/core/backfill-jobs.js';
import { BackfillReportError } from '../../../../../src/services/coordinator/core/errors.js';
import { FakeReserver, NOW, hb, readyCore } from './fakes.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function page(over: Partial<ListRecentTasksResponse__Output> = {}): ListRecentTasksResponse__Output {
  return {
    tasks: [],
    lastSeq: 0,
    succeededTotal: 0,
    failedTotal: 0,
    workerInstance: 'i1',
    nowMs: NOW,
    truncated: false,
    ...over,
  };
}

/** Answers each Worker from `answers[addr]` (a function of the call number), recording the requests. */
function fakeWorkers(answers: Record<string, (n: number) => Promise<ListRecentTasksResponse__Output>>) {
  const calls: { addr: string; afterSeq: number; timeoutMs: number }[] = [];
  const client: RecentTasksClient = {
    listRecentTasks: (addr, req, opts) => {
      const n = calls.filter((c) => c.addr === addr).length;
      calls.push({ addr, afterSeq: req.afterSeq, timeoutMs: opts.timeoutMs });
      const answer = answers[addr];
      return answer ? answer(n) : Promise.reject(new Error(`no such worker ${addr}`));
    },
  };
  return { client, calls };
}

function server(addrs: string[]) {
  return new CoordinatorServer({
    core: readyCore(addrs.map((a) => hb(a, 4))),
    reserver: new FakeReserver(),
    clock: () => NOW,
  });
}

describe('dashboard feed', () => {
  it('polls at once, then once per interval, sending each Worker its cursor', async () => {
    const { client, calls } = fakeWorkers({
      'w1:1': async (n) => page({ lastSeq: 10 * (n + 1), succeededTotal: 5 * n }),
    });
    let now = NOW;
    const feed = createDashboardFeed({
      coordinatorServer: server(['w1:1']),
      workerClients: client,
      clock: () => now,
    });
    const seen: number[] = [];
    feed.onSnapshot((s) => seen.push(s.atMs));
    feed.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    for (let i = 0; i < 3; i++) {
      now += DEFAULT_DASHBOARD_INTERVAL_MS;
      await vi.advanceTimersByTimeAsync(DEFAULT_DASHBOARD_INTERVAL_MS);
    }
    expect(calls.map((c) => c.afterSeq)).toEqual([0, 10, 20, 30]);
    expect(seen).toHaveLength(4);
    const s = feed.snapshot();
    expect(s.cluster.workers.map((w) => w.workerAddr)).toEqual(['w1:1']);
    // Baseline 0, then +5 per poll.
    expect(s.throughput.reduce((n, p) => n + p.succeeded, 0)).toBe(15);
    feed.stop();
    await vi.advanceTimersByTimeAsync(10 * DEFAULT_DASHBOARD_INTERVAL_MS);
    expect(calls).toHaveLength(4);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a Worker that fails is skipped; the others are read in the same snapshot', async () => {
    const { client } = fakeWorkers({
      'good:1': async () =>
        page({
          tasks: [
            {
              taskId: 't',
              state: 'SUCCEEDED',
              startedAtMs: NOW - 10,
              endedAtMs: NOW,
              builder: 'B',
              failureCode: '',
              failureMessage: '',
              codeVersion: 'v7',
              seq: 1,
              client: 'alice',
            },
          ],
          lastSeq: 1,
        }),
      'bad:1': () =>
        Promise.reject(Object.assign(new Error('unimplemented'), { code: grpc.status.UNIMPLEMENTED })),
    });
    const debug = vi.fn();
    const feed = createDashboardFeed({
      coordinatorServer: server(['good:1', 'bad:1']),
      workerClients: client,
      clock: () => NOW,
      logger: { debug, info: vi.fn(), warn: vi.fn(), error: vi.fn() },
    });
    const s = await feed.pollNow();
    await feed.pollNow();
    expect(s.cluster.workers).toHaveLength(2);
    expect(s.recentTasks).toEqual([
      // The submitter travels with the task, for the dashboard's per-viewer views.
      expect.objectContaining({
        taskId: 't',
        workerAddr: 'good:1',
        codeVersion: 'v7',
        durationMs: 10,
        client: 'alice',
      }),
    ]);
    // Logged once per failure streak, not once per poll.
    expect(debug).toHaveBeenCalledTimes(1);
    expect(debug.mock.calls[0]![0]).toMatchObject({ workerAddr: 'bad:1' });
  });

  it('never overlaps polls: a slow Worker delays the next one instead', async () => {
    let release: (() => void) | undefined;
    let inFlight = 0;
    let maxInFlight = 0;
    const { client, calls } = fakeWorkers({
      'w:1': () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        return new Promise((resolve) => {
          release = () => {
            inFlight--;
            resolve(page());
          };
        });
      },
    });
    const feed = createDashboardFeed({
      coordinatorServer: server(['w:1']),
      workerClients: client,
      intervalMs: 100,
    });
    feed.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toHaveLength(1);
    release?.();
    await vi.advanceTimersByTimeAsync(0);
    // The first poll took longer than the interval: the next starts at once.
    expect(calls).toHaveLength(2);
    expect(maxInFlight).toBe(1);
    feed.stop();
    release?.();
  });

  it('a throwing listener does not stop the others or the feed', async () => {
    const { client } = fakeWorkers({ 'w:1': async () => page() });
    const feed = createDashboardFeed({ coordinatorServer: server(['w:1']), workerClients: client });
    const good = vi.fn();
    feed.onSnapshot(() => {
      throw new Error('listener bug');
    });
    const off = feed.onSnapshot(good);
    await feed.pollNow();
    await feed.pollNow();
    expect(good).toHaveBeenCalledTimes(2);
    off();
    await feed.pollNow();
    expect(good).toHaveBeenCalledTimes(2);
  });

  it('includes the backfill jobs, most recent first', async () => {
    const jobs = new BackfillJobs();
    const base = {
      run: 'r',
      per: 'block',
      fromBlock: 1,
      toBlock: 2,
      units: 2,
      succeeded: 0,
      failed: 0,
      skipped: 0,
      inFlight: 0,
      startedAtMs: 1,
      finished: false,
    };
    jobs.report({ ...base, jobId: 'older' }, NOW - 2);
    jobs.report({ ...base, jobId: 'newer' }, NOW - 1);
    const { client } = fakeWorkers({});
    const feed = createDashboardFeed({
      coordinatorServer: server([]),
      workerClients: client,
      backfillJobs: jobs,
      clock: () => NOW,
    });
    expect((await feed.pollNow()).backfills.map((b) => b.jobId)).toEqual(['newer', 'older']);
  });

  it('before the first poll, the snapshot is empty and says why', () => {
    const { client } = fakeWorkers({});
    const feed = createDashboardFeed({
      coordinatorServer: server([]),
      workerClients: client,
      clock: () => NOW,
    });
    expect(feed.snapshot()).toMatchObject({
      atMs: NOW,
      recentTasks: [],
      backfills: [],
      cluster: { ready: false, workers: [] },
    });
    expect(feed.snapshot().cluster.unavailableReason).not.toBe('');
  });

  it.each([
    ['intervalMs', { intervalMs: 0 }],
    ['intervalMs', { intervalMs: 1.5 }],
    ['workerTimeoutMs', { workerTimeoutMs: -1 }],
  ])('refuses a bad %s', (name, over) => {
    const { client } = fakeWorkers({});
    expect(() =>
      createDashboardFeed({ coordinatorServer: server([]), workerClients: client, ...over }),
    ).toThrow(new RegExp(name));
  });
});

describe('jobsServiceHandlers: a refused report', () => {
  const report = (err: Error) =>
    new Promise<grpc.ServiceError | null>((resolve) => {
      const jobs = {
        retainMs: 1,
        report: () => {
          throw err;
        },
      } as unknown as BackfillJobs;
      const call = { request: {}, metadata: new grpc.Metadata() };
      const handler = jobsServiceHandlers(jobs).ReportBackfillProgress as unknown as (
        c: typeof call,
        cb: (e: grpc.ServiceError | null) => void,
      ) => void;
      handler(call, resolve);
    });

  it.each([
    [
      'a bad field',
      new BackfillReportError('InvalidArgument', 'run', 'bad run'),
      grpc.status.INVALID_ARGUMENT,
    ],
    [
      'a full table',
      new BackfillReportError('TooManyJobs', 'job_id', 'full'),
      grpc.status.RESOURCE_EXHAUSTED,
    ],
    [
      "another's job",
      new BackfillReportError('NotOwner', 'job_id', 'not yours'),
      grpc.status.PERMISSION_DENIED,
    ],
  ])('%s: its status, message and business code', async (_name, err, code) => {
    const status = await report(err);
    expect(status?.code).toBe(code);
    expect(status?.details).toBe(err.message);
    expect(businessCodeOf(status)).toBe(err.code);
  });

  it('anything else: INTERNAL, without its text', async () => {
    const status = await report(new Error('bug'));
    expect(status?.code).toBe(grpc.status.INTERNAL);
    expect(status?.details).toBe('ReportBackfillProgress failed');
    expect(businessCodeOf(status)).toBeUndefined();
  });
});
