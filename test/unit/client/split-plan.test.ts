// The split plan of `blockx ingest` over a long range (src/client/backfill/split-plan.ts): which units a range
// becomes (tables and a property over ranges and sizes), that each unit's task and task id are its part's own
// job's, and the split journal: what it reads as done and started from the parts' journals, where it records,
// and a run of the engine (runBackfill) on it against a fake runner, then a rerun that skips everything.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BackfillJournal, JournalEntry } from '../../../src/client/backfill/journal.js';
import { planBackfill, type BackfillTemplate } from '../../../src/client/backfill/plan.js';
import { runBackfill, type BackfillEvent } from '../../../src/client/backfill/run-backfill.js';
import {
  planSplit,
  splitJournal,
  wholeBundles,
  type SplitPlan,
} from '../../../src/client/backfill/split-plan.js';
import type { TaskRunner } from '../../../src/client/run-with-retries.js';
import type { TaskRunResult } from '../../../src/client/types.js';
import type { TaskUpdate } from '../../../src/grpc/domain-types.js';

const template = (unit: Record<string, unknown>): BackfillTemplate => ({
  functionCallConfig: { type: 'ChainIngestCallConfig', config: { chainId: 1, ...unit } },
  resultHandler: {
    type: 'ChainIngestResultHandler',
    config: { source: { name: 'rpc' }, chainId: 1, traces: true, ...unit },
  },
});
const STORAGE = 'sqlite:/data/blockx.db';

function split(from: number, to: number, bundleSize: number): SplitPlan | undefined {
  return planSplit({
    blockTemplate: template({ block: { number: 0 } }),
    bundleTemplate: template({ bundle: 0, bundleSize }),
    bundleSize,
    from,
    to,
    storage: STORAGE,
  });
}

/** Units as `b5` (a block) and `u2:11-20` (bundle 2 and its blocks). */
const shape = (plan: SplitPlan | undefined): string[] | undefined =>
  plan?.units.map((u) =>
    u.part.per === 'block' ? `b${u.part.key}` : `u${u.part.key}:${u.firstBlock}-${u.lastBlock}`,
  );

describe('planSplit: the units of a range', () => {
  it.each([
    [
      'from genesis: block 0, then bundles, then the tail',
      0,
      35,
      ['b0', 'u1:1-10', 'u2:11-20', 'u3:21-30', 'b31', 'b32', 'b33', 'b34', 'b35'],
    ],
    ['an aligned range: bundles only', 1, 30, ['u1:1-10', 'u2:11-20', 'u3:21-30']],
    ['both edges cut', 7, 23, ['b7', 'b8', 'b9', 'b10', 'u2:11-20', 'b21', 'b22', 'b23']],
    ['a bundle is whole from its first block', 11, 20, ['u2:11-20']],
    ["a bundle's last block alone is an edge", 10, 21, ['b10', 'u2:11-20', 'b21']],
  ] as const)('%s (%i..%i, bundles of 10)', (_name, from, to, want) => {
    expect(shape(split(from, to, 10))).toEqual(want);
  });

  it.each([
    [0, 0],
    [0, 9],
    [5, 18],
    [12, 19],
  ])('%i..%i holds no whole bundle of 10: no split plan (per block)', (from, to) => {
    expect(split(from, to, 10)).toBeUndefined();
    expect(wholeBundles(from, to, 10)).toBeUndefined();
  });

  it('covers the range once, in order; the bundles are every whole one, the edges fewer than two bundles (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 1, max: 60 }),
        (from, length, size) => {
          const to = from + length;
          const plan = split(from, to, size);
          // Every whole aligned bundle b ≥ 1 inside [from, to].
          const whole: number[] = [];
          for (let b = 1; b * size <= to; b++) if ((b - 1) * size + 1 >= from) whole.push(b);
          if (plan === undefined) return whole.length === 0;
          const blocks = plan.units.flatMap((u) =>
            Array.from({ length: u.lastBlock - u.firstBlock + 1 }, (_, i) => u.firstBlock + i),
          );
          expect(blocks).toEqual(Array.from({ length: to - from + 1 }, (_, i) => from + i));
          expect(plan.units.every((u, i) => i === 0 || u.key > (plan.units[i - 1]?.key ?? 0))).toBe(true);
          expect(plan.units.every((u) => u.key === u.firstBlock)).toBe(true);
          const bundles = plan.units.filter((u) => u.part.per === 'bundle');
          expect(bundles.map((u) => u.part.key)).toEqual(whole);
          for (const u of bundles) {
            expect([u.firstBlock, u.lastBlock]).toEqual([(u.part.key - 1) * size + 1, u.part.key * size]);
          }
          expect(plan.units.length - bundles.length).toBeLessThan(2 * size);
          expect(plan.blocks).toBe(to - from + 1);
          return true;
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('planSplit: tasks and task ids are each part job’s own', () => {
  const plan = split(7, 23, 10) as SplitPlan;
  const blockJob = planBackfill({
    template: template({ block: { number: 0 } }),
    per: 'block',
    from: 7,
    to: 23,
    storage: STORAGE,
  });
  const bundleJob = planBackfill({
    template: template({ bundle: 0, bundleSize: 10 }),
    per: 'bundle',
    from: 11,
    to: 20,
    storage: STORAGE,
  });

  it('the job ids: the block part is the per-block job of the same template, the plan is named by its bundle part', () => {
    expect(plan.parts.block.jobId).toBe(blockJob.jobId);
    expect(plan.parts.bundle.jobId).toBe(bundleJob.jobId);
    expect(plan.jobId).toBe(bundleJob.jobId);
    expect(plan.parts.block.jobId).not.toBe(plan.parts.bundle.jobId);
    expect(plan.per).toBe('bundle');
  });

  it("a unit's task is its part's, with its own selector", () => {
    const b8 = plan.units.find((u) => u.part.per === 'block' && u.part.key === 8);
    const u2 = plan.units.find((u) => u.part.per === 'bundle');
    expect(plan.taskOf(b8 as never)).toEqual(blockJob.taskOf({ key: 8, firstBlock: 8, lastBlock: 8 }));
    expect(plan.taskOf(u2 as never)).toEqual(bundleJob.taskOf({ key: 2, firstBlock: 11, lastBlock: 20 }));
  });

  it("task ids carry the run given, or with withRuns each part's own run tag", () => {
    const [b7, u2] = [plan.units[0], plan.units[4]] as const;
    expect(plan.taskIdOf(b7 as never, 1, 'aa')).toBe(`bf-${blockJob.jobId}-aa-b7-1`);
    expect(plan.taskIdOf(u2 as never, 2, 'aa')).toBe(`bf-${bundleJob.jobId}-aa-u2-2`);
    const bound = plan.withRuns({ block: 'b1', bundle: 'c2' });
    expect(bound.taskIdOf(b7 as never, 1, 'ignored')).toBe(`bf-${blockJob.jobId}-b1-b7-1`);
    expect(bound.taskIdOf(u2 as never, 3, 'ignored')).toBe(`bf-${bundleJob.jobId}-c2-u2-3`);
    expect(bound.units).toBe(plan.units);
  });
});

interface FakeJournal extends BackfillJournal {
  readonly done: Set<number>;
  readonly entries: JournalEntry[];
  readonly started: number[];
}

function fakeJournal(runId: string, done: number[] = [], startedThrough?: number): FakeJournal {
  const entries: JournalEntry[] = [];
  const started: number[] = [];
  const set = new Set(done);
  return {
    done: set,
    runId,
    startedThrough,
    entries,
    started,
    record(e) {
      entries.push(e);
      set.add(e.key);
    },
    recordStarted(key) {
      started.push(key);
    },
  };
}

describe('splitJournal', () => {
  const plan = split(7, 43, 10) as SplitPlan; // b7..b10, u2..u4 (11..40), b41..b43

  it("reads a unit as done when its part's journal holds its own key", () => {
    const j = splitJournal(plan, {
      block: fakeJournal('r1', [8, 42, 15]),
      bundle: fakeJournal('r2', [3, 9]),
    });
    // b8, b42; bundle 3 is keyed by its first block, 21; block 15 and bundle 9 are not units here.
    expect([...j.done].sort((a, b) => a - b)).toEqual([8, 21, 42]);
    expect(j.runId).toBe('r2');
  });

  it("records a success in its part's journal under the part's key", () => {
    const parts = { block: fakeJournal('r1'), bundle: fakeJournal('r2') };
    const j = splitJournal(plan, parts);
    j.record({ key: 31, taskId: 't-u4', rows: 5 });
    j.record({ key: 41, taskId: 't-b41', rows: 1 });
    expect(parts.bundle.entries).toEqual([{ key: 4, taskId: 't-u4', rows: 5 }]);
    expect(parts.block.entries).toEqual([{ key: 41, taskId: 't-b41', rows: 1 }]);
    expect(j.done.has(31) && j.done.has(41)).toBe(true);
    expect(() => j.record({ key: 12, taskId: 'x', rows: 0 })).toThrow(/no unit keyed 12/);
  });

  it('a started mark: each part its highest key up to it, written only when it grows', () => {
    const parts = { block: fakeJournal('r1'), bundle: fakeJournal('r2') };
    const j = splitJournal(plan, parts);
    j.recordStarted?.(9); // b7..b9
    j.recordStarted?.(21); // .. u3 (first block 21)
    j.recordStarted?.(25); // nothing new
    j.recordStarted?.(43); // .. b43
    expect(parts.block.started).toEqual([9, 10, 43]);
    expect(parts.bundle.started).toEqual([3, 4]);
  });

  it("an earlier run's marks: every unit a part says may have started is at or below startedThrough (property)", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 0, max: 60 }), { nil: undefined }),
        fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
        (blockMark, bundleMark) => {
          const parts = {
            block: fakeJournal('r1', [], blockMark),
            bundle: fakeJournal('r2', [], bundleMark),
          };
          const j = splitJournal(plan, parts);
          const marked = plan.units.filter((u) => {
            const mark = u.part.per === 'block' ? blockMark : bundleMark;
            return mark !== undefined && u.part.key <= mark;
          });
          if (marked.length === 0) return j.startedThrough === undefined;
          return marked.every((u) => u.key <= (j.startedThrough as number));
        },
      ),
    );
  });

  it('runBackfill over a split plan: every unit once under its part’s task id, journaled in its part; a rerun skips them all', async () => {
    const parts = { block: fakeJournal('r1'), bundle: fakeJournal('r2') };
    const ran: string[] = [];
    const runner: TaskRunner = {
      run(task) {
        ran.push(task.taskId);
        const r = {
          taskId: task.taskId,
          workerAddr: 'w:1',
          update: {} as TaskUpdate,
          attempts: 1,
          durationMs: 1,
        };
        return Promise.resolve({
          ...r,
          state: 'SUCCEEDED',
          success: true,
          failureCode: '',
          failureMessage: '',
          retryable: false,
          pluginResults: [
            { pluginName: 'w', success: true, failureCode: '', failureMessage: '', result: { rows: 2 } },
          ],
        } as TaskRunResult);
      },
    };
    const opts = {
      concurrency: 3,
      policy: { retries: 1, initialBackoffMs: 1, maxBackoffMs: 1, slotTtlMs: 1_000 },
      sleep: () => Promise.resolve(),
      random: () => 0.5,
      clock: () => 0,
    };
    const drain = async (journal: BackfillJournal) => {
      const events: BackfillEvent[] = [];
      const bound = plan.withRuns({ block: 'r1', bundle: 'r2' });
      for await (const e of runBackfill(runner, bound, { ...opts, journal })) events.push(e);
      return events;
    };
    const first = await drain(splitJournal(plan, parts));
    const { blockJob, bundleJob } = { blockJob: plan.parts.block.jobId, bundleJob: plan.parts.bundle.jobId };
    expect(ran.sort()).toEqual(
      [
        ...[7, 8, 9, 10, 41, 42, 43].map((n) => `bf-${blockJob}-r1-b${n}-1`),
        ...[2, 3, 4].map((b) => `bf-${bundleJob}-r2-u${b}-1`),
      ].sort(),
    );
    expect(parts.block.entries.map((e) => e.key).sort((a, b) => a - b)).toEqual([7, 8, 9, 10, 41, 42, 43]);
    expect(parts.bundle.entries.map((e) => e.key).sort()).toEqual([2, 3, 4]);
    expect(first.at(-1)).toMatchObject({
      type: 'summary',
      summary: { blocks: 37, succeeded: 37, units: 10, rows: 20 },
    });

    ran.length = 0;
    const again = await drain(splitJournal(plan, parts));
    expect(ran).toEqual([]);
    expect(again.at(-1)).toMatchObject({
      type: 'summary',
      summary: { skipped: 37, succeeded: 0, attempts: 0 },
    });
  });
});
