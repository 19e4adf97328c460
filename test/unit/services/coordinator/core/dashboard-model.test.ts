// The dashboard model (src/services/coordinator/core/dashboard-model.ts) on virtual time: counter deltas
// into throughput buckets (baseline, restarts, counters going down), the merged recent-task list and its
// bounds, cursors, and the retention of departed Workers. Property: on any interleaving of reports and
// restarts, the buckets sum to the counted deltas and never hold a negative.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DashboardModel,
  MAX_RECENT_TASKS,
  MAX_TASKS_PER_WORKER,
  THROUGHPUT_BUCKET_MS,
  THROUGHPUT_WINDOW_MS,
  recentTaskView,
  type ReportedTask,
  type WorkerReport,
} from '../../../../../src/services/coordinator/core/dashboard-model.js';

const T0 = 1_700_000_000_000;

function report(over: Partial<WorkerReport> = {}): WorkerReport {
  return {
    workerAddr: 'w1:1',
    afterSeq: 0,
    instance: 'i1',
    lastSeq: 0,
    succeededTotal: 0,
    failedTotal: 0,
    truncated: false,
    tasks: [],
    ...over,
  };
}

function task(over: Partial<ReportedTask> = {}): ReportedTask {
  return {
    taskId: 't1',
    state: 'SUCCEEDED',
    startedAtMs: T0,
    endedAtMs: T0 + 100,
    builder: 'CallListCallConfig',
    failureCode: '',
    failureMessage: '',
    codeVersion: '',
    seq: 1,
    ...over,
  };
}

const sums = (m: DashboardModel, now: number) =>
  m
    .throughput(now)
    .reduce((s, p) => ({ succeeded: s.succeeded + p.succeeded, failed: s.failed + p.failed }), {
      succeeded: 0,
      failed: 0,
    });

describe('throughput from counters', () => {
  // Each case: successive (instance, succeeded, failed) reports 1 s apart, and the total counted.
  const cases: [string, [string, number, number][], { succeeded: number; failed: number }][] = [
    ['the first report is only the baseline', [['i1', 50, 5]], { succeeded: 0, failed: 0 }],
    [
      'deltas of one instance',
      [
        ['i1', 50, 5],
        ['i1', 53, 5],
        ['i1', 60, 7],
      ],
      { succeeded: 10, failed: 2 },
    ],
    [
      'a restart counts the new totals, never a negative delta',
      [
        ['i1', 50, 5],
        ['i2', 3, 1],
        ['i2', 4, 1],
      ],
      { succeeded: 4, failed: 1 },
    ],
    [
      'totals going down under one instance are a reset too',
      [
        ['i1', 50, 5],
        ['i1', 2, 0],
      ],
      { succeeded: 2, failed: 0 },
    ],
    [
      'an unchanged report counts nothing',
      [
        ['i1', 9, 9],
        ['i1', 9, 9],
      ],
      { succeeded: 0, failed: 0 },
    ],
  ];
  it.each(cases)('%s', (_name, reports, want) => {
    const m = new DashboardModel();
    reports.forEach(([instance, succeededTotal, failedTotal], i) =>
      m.applyReport(report({ instance, succeededTotal, failedTotal }), T0 + i * 1_000),
    );
    expect(sums(m, T0 + reports.length * 1_000)).toEqual(want);
  });

  it('a delta lands in the bucket of the poll that saw it', () => {
    const m = new DashboardModel();
    m.applyReport(report({ succeededTotal: 0 }), T0);
    const at = T0 + 3 * THROUGHPUT_BUCKET_MS + 1;
    m.applyReport(report({ succeededTotal: 4, failedTotal: 1 }), at);
    const points = m.throughput(at);
    const last = points[points.length - 1]!;
    expect(last).toEqual({
      atMs: Math.floor(at / THROUGHPUT_BUCKET_MS) * THROUGHPUT_BUCKET_MS,
      bucketMs: THROUGHPUT_BUCKET_MS,
      succeeded: 4,
      failed: 1,
    });
    expect(points.slice(0, -1).every((p) => p.succeeded === 0 && p.failed === 0)).toBe(true);
  });

  it('returns every bucket of the window, oldest first, and forgets what fell out of it', () => {
    const m = new DashboardModel();
    m.applyReport(report(), T0);
    m.applyReport(report({ succeededTotal: 7 }), T0 + 1);
    const points = m.throughput(T0 + 1);
    expect(points).toHaveLength(THROUGHPUT_WINDOW_MS / THROUGHPUT_BUCKET_MS);
    for (let i = 1; i < points.length; i++) {
      expect(points[i]!.atMs - points[i - 1]!.atMs).toBe(THROUGHPUT_BUCKET_MS);
    }
    expect(sums(m, T0 + 1).succeeded).toBe(7);
    expect(sums(m, T0 + THROUGHPUT_WINDOW_MS + THROUGHPUT_BUCKET_MS).succeeded).toBe(0);
  });

  it('counts each Worker on its own', () => {
    const m = new DashboardModel();
    m.applyReport(report({ workerAddr: 'a', succeededTotal: 10 }), T0);
    m.applyReport(report({ workerAddr: 'b', succeededTotal: 100 }), T0);
    m.applyReport(report({ workerAddr: 'a', succeededTotal: 12 }), T0 + 1_000);
    m.applyReport(report({ workerAddr: 'b', succeededTotal: 105 }), T0 + 1_000);
    expect(sums(m, T0 + 1_000).succeeded).toBe(7);
  });
});

describe('recent tasks', () => {
  it('merges Workers newest first (end time, else start time)', () => {
    const m = new DashboardModel();
    m.applyReport(
      report({
        workerAddr: 'a',
        tasks: [
          task({ taskId: 'a-done', endedAtMs: T0 + 10 }),
          task({ taskId: 'a-run', state: 'RUNNING', startedAtMs: T0 + 30, endedAtMs: 0, seq: 2 }),
        ],
      }),
      T0,
    );
    m.applyReport(report({ workerAddr: 'b', tasks: [task({ taskId: 'b-done', endedAtMs: T0 + 20 })] }), T0);
    expect(m.recentTasks().map((t) => `${t.workerAddr}/${t.taskId}`)).toEqual([
      'a/a-run',
      'b/b-done',
      'a/a-done',
    ]);
  });

  it('a later record of a task replaces the earlier one, whatever order the page lists them in', () => {
    const m = new DashboardModel();
    m.applyReport(report({ tasks: [task({ state: 'RUNNING', endedAtMs: 0, seq: 1 })] }), T0);
    m.applyReport(
      report({
        tasks: [
          task({ state: 'FAILED', failureCode: 'CALL_FAILED', seq: 3 }),
          task({ state: 'RUNNING', endedAtMs: 0, seq: 2 }),
        ],
      }),
      T0 + 1,
    );
    expect(m.recentTasks()).toEqual([
      expect.objectContaining({ taskId: 't1', state: 'FAILED', failureCode: 'CALL_FAILED', durationMs: 100 }),
    ]);
  });

  it("bounds the snapshot list and each Worker's records", () => {
    const m = new DashboardModel();
    const tasks = Array.from({ length: MAX_TASKS_PER_WORKER + 50 }, (_, i) =>
      task({ taskId: `t${i}`, endedAtMs: T0 + i, seq: i + 1 }),
    );
    m.applyReport(report({ tasks }), T0);
    const recent = m.recentTasks();
    expect(recent).toHaveLength(MAX_RECENT_TASKS);
    expect(recent[0]!.taskId).toBe(`t${MAX_TASKS_PER_WORKER + 49}`);
    expect(m.recentTasks(10_000)).toHaveLength(MAX_TASKS_PER_WORKER);
  });

  const views: [string, Partial<ReportedTask>, Record<string, unknown> | undefined][] = [
    ['a running task has no duration', { state: 'RUNNING', endedAtMs: 0 }, { durationMs: 0, endedAtMs: 0 }],
    ['an ended task has end minus start', {}, { durationMs: 100 }],
    ['an end before the start is clamped to 0', { endedAtMs: T0 - 5 }, { durationMs: 0 }],
    ['an unknown start has no duration', { startedAtMs: 0 }, { durationMs: 0 }],
    ['an unknown state is dropped', { state: 'EXPLODED' }, undefined],
  ];
  it.each(views)('%s', (_name, over, want) => {
    const view = recentTaskView('w', task(over));
    if (want === undefined) expect(view).toBeUndefined();
    else expect(view).toMatchObject(want);
  });
});

describe('cursors', () => {
  const cases: [string, WorkerReport[], number][] = [
    ['a new Worker starts at 0', [], 0],
    ['the cursor follows lastSeq', [report({ lastSeq: 7 })], 7],
    [
      'a truncated page starts over',
      [report({ lastSeq: 7 }), report({ afterSeq: 7, lastSeq: 9, truncated: true })],
      0,
    ],
    [
      'a restarted Worker asked with an old cursor starts over',
      [report({ lastSeq: 7 }), report({ afterSeq: 7, instance: 'i2', lastSeq: 3 })],
      0,
    ],
    [
      'a restarted Worker asked from 0 keeps its new cursor',
      [report({ lastSeq: 7, truncated: true }), report({ afterSeq: 0, instance: 'i2', lastSeq: 3 })],
      3,
    ],
  ];
  it.each(cases)('%s', (_name, reports, want) => {
    const m = new DashboardModel();
    reports.forEach((r, i) => m.applyReport(r, T0 + i));
    expect(m.cursorOf('w1:1')).toBe(want);
  });
});

describe('departed Workers', () => {
  it('keep their tasks for the window after their last report, then are dropped', () => {
    const m = new DashboardModel();
    m.applyReport(report({ workerAddr: 'gone', tasks: [task()] }), T0);
    m.retainWorkers(new Set(), T0 + THROUGHPUT_WINDOW_MS - 1);
    expect(m.recentTasks()).toHaveLength(1);
    m.retainWorkers(new Set(['gone']), T0 + THROUGHPUT_WINDOW_MS + 1);
    expect(m.recentTasks()).toHaveLength(1);
    m.retainWorkers(new Set(), T0 + THROUGHPUT_WINDOW_MS);
    expect(m.recentTasks()).toHaveLength(0);
    expect(m.trackedWorkers).toBe(0);
  });
});

describe('property: buckets sum to the counted deltas', () => {
  /** One event: a Worker finishes some tasks, restarts, or is polled. */
  const event = fc.oneof(
    fc.record({ kind: fc.constant('work' as const), worker: fc.nat(2), ok: fc.nat(20), bad: fc.nat(5) }),
    fc.record({ kind: fc.constant('restart' as const), worker: fc.nat(2) }),
    fc.record({
      kind: fc.constant('poll' as const),
      worker: fc.nat(2),
      advanceMs: fc.nat(THROUGHPUT_BUCKET_MS),
    }),
  );

  it('holds on any interleaving of work, restarts and polls', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 100 }), (events) => {
        const m = new DashboardModel();
        const workers = [0, 1, 2].map(() => ({
          instance: 0,
          ok: 0,
          bad: 0,
          seenOk: -1,
          seenBad: -1,
          seenInstance: -1,
        }));
        let now = T0;
        const expected = { succeeded: 0, failed: 0 };
        for (const e of events) {
          const w = workers[e.worker]!;
          if (e.kind === 'work') {
            w.ok += e.ok;
            w.bad += e.bad;
          } else if (e.kind === 'restart') {
            w.instance++;
            w.ok = 0;
            w.bad = 0;
          } else {
            now += e.advanceMs;
            // The reference: nothing for the first sight; the new totals after a restart; else the delta.
            if (w.seenInstance !== -1) {
              const restarted = w.seenInstance !== w.instance;
              expected.succeeded += restarted ? w.ok : w.ok - w.seenOk;
              expected.failed += restarted ? w.bad : w.bad - w.seenBad;
            }
            w.seenInstance = w.instance;
            w.seenOk = w.ok;
            w.seenBad = w.bad;
            m.applyReport(
              report({
                workerAddr: `w${e.worker}`,
                instance: `i${w.instance}`,
                succeededTotal: w.ok,
                failedTotal: w.bad,
              }),
              now,
            );
          }
          const points = m.throughput(now);
          if (points.some((p) => p.succeeded < 0 || p.failed < 0)) return false;
        }
        // At most 100 polls of at most one bucket each: nothing has fallen out of the window yet.
        expect(now - T0).toBeLessThan(THROUGHPUT_WINDOW_MS - THROUGHPUT_BUCKET_MS);
        expect(sums(m, now)).toEqual(expected);
        return true;
      }),
      { numRuns: 300 },
    );
  });
});
