// runBackfill (src/client/backfill/run-backfill.ts) against a fake TaskRunner on virtual time: the event
// stream, the journal, task-level retries per unit, the concurrency bound and stopping.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BackfillJournal, JournalEntry } from '../../../src/client/backfill/journal.js';
import { planBackfill, type BackfillPlan, type BackfillTemplate } from '../../../src/client/backfill/plan.js';
import {
  runBackfill,
  type BackfillEvent,
  type BackfillRunOptions,
  type BackfillSummary,
  type UnitReport,
} from '../../../src/client/backfill/run-backfill.js';
import { BlockxClientError, ClientErrorCode } from '../../../src/client/errors.js';
import type { RunnableTask, TaskRunner } from '../../../src/client/run-with-retries.js';
import type { TaskRunResult } from '../../../src/client/types.js';
import type { TaskUpdate } from '../../../src/grpc/domain-types.js';

const BLOCK_TEMPLATE: BackfillTemplate = {
  functionCallConfig: {
    type: 'BlockTableCallConfig',
    config: { function: 'erc20_transfers', table: 'events', chainId: 1, block: { number: 1 } },
  },
  resultHandler: {
    type: 'BlockWriteResultHandler',
    config: { table: 'token_transfers', chainId: 1, block: { number: 1 } },
  },
};
const BUNDLE_TEMPLATE: BackfillTemplate = {
  functionCallConfig: {
    type: 'BlockBundleCallConfig',
    config: { function: 'erc20_transfers', table: 'events', chainId: 1, bundle: 1, bundleSize: 10 },
  },
  resultHandler: {
    type: 'BlockBundleWriteResultHandler',
    config: { table: 'token_transfers', chainId: 1, bundle: 1, bundleSize: 10 },
  },
};
const POLICY = { retries: 3, initialBackoffMs: 500, maxBackoffMs: 10_000, slotTtlMs: 5_000 };

/** The fake journal's run tag. */
const RUN = 'abc123';

/** Key and attempt of a backfill task id `bf-<job>-<run>-<b|u><key>-<attempt>`. */
function parseTaskId(taskId: string): { key: number; attempt: number } {
  const m = /^bf-[0-9a-f]{12}-[0-9a-f]+-[bu](\d+)-(\d+)$/.exec(taskId);
  if (!m) throw new Error(`not a backfill task id: ${taskId}`);
  return { key: Number(m[1]), attempt: Number(m[2]) };
}

/** The task id of `tail` (`b5-1`) in the fake journal's run. */
const idOf = (plan: BackfillPlan, tail: string) => `bf-${plan.jobId}-${RUN}-${tail}`;
/** `b5-1` of a task id. */
const tailOf = (taskId: string) => taskId.replace(/^bf-\w+-\w+-/, '');

/** What one attempt does: succeed writing `rows`, fail, or throw a client error. */
type Step =
  | { readonly kind: 'ok'; readonly rows?: number }
  | { readonly kind: 'failed'; readonly retryable: boolean }
  | { readonly kind: 'error'; readonly code: ClientErrorCode; readonly rpc: string };

const OK: Step = { kind: 'ok' };

function result(taskId: string, step: Step): TaskRunResult {
  const base = {
    taskId,
    workerAddr: 'w:1',
    update: { taskId } as unknown as TaskUpdate,
    attempts: 1,
    durationMs: 100,
  };
  if (step.kind !== 'ok') {
    const retryable = step.kind === 'failed' && step.retryable;
    const failure = { failureCode: 'CALL_FAILED', failureMessage: 'boom', retryable, pluginResults: [] };
    return { ...base, state: 'FAILED', success: false, ...failure };
  }
  // The writer reports its rows, as BlockWriteResultHandler does.
  const rows = step.rows ?? parseTaskId(taskId).key % 7;
  const writer = {
    pluginName: 'BlockWriteResultHandler',
    success: true,
    failureCode: '',
    failureMessage: '',
    result: { rows },
  };
  return {
    ...base,
    state: 'SUCCEEDED',
    success: true,
    failureCode: '',
    failureMessage: '',
    retryable: false,
    pluginResults: [writer],
  };
}

interface Harness {
  readonly runner: TaskRunner;
  readonly calls: RunnableTask[];
  readonly delays: number[];
  readonly maxInFlight: () => number;
  readonly opts: BackfillRunOptions;
  readonly journal: BackfillJournal & { readonly done: Set<number>; readonly entries: JournalEntry[] };
}

/**
 * A fake cluster on virtual time. `script(key, attempt)` says what an attempt does; each attempt takes
 * `ticks(key)` turns of the event loop (so several overlap) and 100 ms of virtual time.
 */
function harness(
  script: (key: number, attempt: number) => Step = () => OK,
  over: Partial<BackfillRunOptions> & {
    ticks?: (key: number) => number;
    onCall?: (task: RunnableTask) => void;
  } = {},
): Harness {
  let now = 1_000_000;
  let inFlight = 0;
  let max = 0;
  const calls: RunnableTask[] = [];
  const delays: number[] = [];
  const runner: TaskRunner = {
    async run(task) {
      calls.push(task);
      inFlight++;
      max = Math.max(max, inFlight);
      over.onCall?.(task);
      const { key, attempt } = parseTaskId(task.taskId);
      try {
        for (let i = 0; i < (over.ticks?.(key) ?? 1); i++) await new Promise<void>((r) => setImmediate(r));
        now += 100;
        const step = script(key, attempt);
        if (step.kind === 'error') {
          throw new BlockxClientError(step.code, `${step.code} from ${step.rpc}`, {
            rpc: step.rpc,
            taskId: task.taskId,
          });
        }
        return result(task.taskId, step);
      } finally {
        inFlight--;
      }
    },
  };
  const entries: JournalEntry[] = [];
  const done = new Set<number>();
  const journal = {
    done,
    runId: RUN,
    entries,
    record(e: JournalEntry) {
      entries.push(e);
      done.add(e.key);
    },
  };
  const opts: BackfillRunOptions = {
    concurrency: 4,
    policy: POLICY,
    journal,
    sleep: (ms) => {
      delays.push(ms);
      now += ms;
      return Promise.resolve();
    },
    random: () => 0.5,
    clock: () => now,
    ...over,
  };
  return { runner, calls, delays, maxInFlight: () => max, opts, journal };
}

async function drain(runner: TaskRunner, plan: BackfillPlan, opts: BackfillRunOptions) {
  const events: BackfillEvent[] = [];
  for await (const e of runBackfill(runner, plan, opts)) events.push(e);
  const last = events.at(-1);
  if (last?.type !== 'summary') throw new Error('the last event is not the summary');
  const units = events.filter((e): e is UnitReport => e.type === 'unit');
  const retries = events.filter((e) => e.type === 'retry');
  return { events, units, retries, summary: last.summary };
}

const blocks = (from: number, to: number) =>
  planBackfill({ template: BLOCK_TEMPLATE, from, to, per: 'block' });

describe('runBackfill', () => {
  it('all succeed: start, one SUCCEEDED unit event per block, a summary with rows and virtual seconds', async () => {
    const h = harness();
    const plan = blocks(1, 10);
    const { events, units, retries, summary } = await drain(h.runner, plan, h.opts);
    expect(events[0]).toEqual({ type: 'start', units: 10, skipped: 0 });
    expect(retries).toEqual([]);
    expect(units.map((u) => u.unit.key).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(units.every((u) => u.state === 'SUCCEEDED' && u.attempts === 1 && u.gaveUp === undefined)).toBe(
      true,
    );
    const u3 = units.find((u) => u.unit.key === 3);
    expect(u3).toMatchObject({
      taskId: idOf(plan, 'b3-1'),
      rows: 3,
      workerAddr: 'w:1',
      failureCode: '',
    });
    const rows = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].reduce((n, k) => n + (k % 7), 0);
    expect(summary).toEqual<BackfillSummary>({
      jobId: plan.jobId,
      per: 'block',
      blocks: 10,
      succeeded: 10,
      failed: 0,
      skipped: 0,
      remaining: 0,
      units: 10,
      attempts: 10,
      rows,
      seconds: 1, // 10 attempts × 100 ms of virtual time
      interrupted: false,
    });
    expect(h.journal.entries.map((e) => e.key).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);
    expect(h.journal.entries.find((e) => e.key === 3)).toEqual({
      key: 3,
      taskId: idOf(plan, 'b3-1'),
      rows: 3,
    });
    // Each unit ran its own filled task.
    expect(h.calls.find((c) => c.taskId.endsWith('-b4-1'))?.functionCallConfig.config).toMatchObject({
      block: { number: 4 },
    });
  });

  it("stops at the first failure stopOn names the job's: nothing more starts, the summary says why", async () => {
    // Blocks 5 and 6 fail (not retryable); only a failure of 5 is the job's (its Worker lacks the source).
    const script = (key: number): Step =>
      key === 5 || key === 6 ? { kind: 'failed', retryable: false } : OK;
    const stopOn = (r: TaskRunResult) =>
      parseTaskId(r.taskId).key === 5 ? `the Worker at ${r.workerAddr} lacks the source` : undefined;
    const h = harness(script, { concurrency: 2, stopOn });
    const { units, retries, summary } = await drain(h.runner, blocks(1, 20), h.opts);
    expect(retries).toEqual([]);
    // Two lanes: 6 started beside 5 and ends on its own; nothing after them starts.
    const failed = units.filter((u) => u.state === 'FAILED');
    expect(failed.map((u) => [u.unit.key, u.jobFailure])).toEqual([
      [5, 'the Worker at w:1 lacks the source'],
      [6, undefined],
    ]);
    const started = h.calls.map((c) => parseTaskId(c.taskId).key).sort((a, b) => a - b);
    expect(started).toEqual([1, 2, 3, 4, 5, 6]);
    expect(summary).toMatchObject({
      stoppedBy: 'the Worker at w:1 lacks the source',
      succeeded: 4,
      failed: 2,
      remaining: 14,
      interrupted: true,
    });
    // Without stopOn the same failures are the units' own: every block runs.
    const all = harness(script, { concurrency: 2 });
    const plain = await drain(all.runner, blocks(1, 20), all.opts);
    expect(plain.summary).toMatchObject({ failed: 2, remaining: 0, succeeded: 18 });
    expect(plain.summary.stoppedBy).toBeUndefined();
    expect(plain.units.some((u) => u.jobFailure !== undefined)).toBe(false);
  });

  it('units the journal holds are SKIPPED first, never run, and counted as skipped', async () => {
    const h = harness();
    for (const k of [2, 3, 9]) h.journal.done.add(k);
    const { events, units, summary } = await drain(h.runner, blocks(1, 10), h.opts);
    expect(events[0]).toEqual({ type: 'start', units: 10, skipped: 3 });
    expect(units.slice(0, 3).map((u) => [u.unit.key, u.state, u.attempts, u.taskId])).toEqual([
      [2, 'SKIPPED', 0, ''],
      [3, 'SKIPPED', 0, ''],
      [9, 'SKIPPED', 0, ''],
    ]);
    expect(h.calls.map((c) => parseTaskId(c.taskId).key).sort((a, b) => a - b)).toEqual([
      1, 4, 5, 6, 7, 8, 10,
    ]);
    expect(summary).toMatchObject({
      blocks: 10,
      succeeded: 7,
      skipped: 3,
      failed: 0,
      attempts: 7,
      remaining: 0,
    });
    expect(h.journal.entries).toHaveLength(7);
  });

  it('resuming: units up to the earlier started mark are asked of the Workers first; one held is not run again', async () => {
    const h = harness();
    for (const k of [1, 2]) h.journal.done.add(k);
    // The earlier run wrote `started` through 6; Workers hold 3 (succeeded), 4 (failed) and 5 (running).
    const held = new Map<string, Step>([
      ['b3-1', OK],
      ['b4-1', { kind: 'failed', retryable: true }],
      ['b5-1', OK],
    ]);
    const asked: string[] = [];
    const runner: TaskRunner = {
      run: (task, o) => h.runner.run(task, o),
      resume(taskId) {
        asked.push(tailOf(taskId));
        const step = held.get(tailOf(taskId));
        return Promise.resolve(
          step === undefined ? undefined : { ...result(taskId, step), workerAddr: 'w:held' },
        );
      },
    };
    const { units, summary } = await drain(runner, blocks(1, 10), {
      ...h.opts,
      journal: { ...h.journal, startedThrough: 6, record: (e) => h.journal.record(e) },
    });
    expect(asked.sort()).toEqual(['b3-1', 'b4-1', 'b5-1', 'b6-1']);
    // 3 and 5 came from their Worker; 4's first attempt failed there, so it goes on with attempt 2.
    expect(h.calls.map((c) => tailOf(c.taskId)).sort()).toEqual([
      'b10-1',
      'b4-2',
      'b6-1',
      'b7-1',
      'b8-1',
      'b9-1',
    ]);
    const byKey = new Map(units.map((u) => [u.unit.key, u]));
    expect(
      [3, 4, 5, 6].map((k) => [k, byKey.get(k)?.state, byKey.get(k)?.attempts, byKey.get(k)?.workerAddr]),
    ).toEqual([
      [3, 'SUCCEEDED', 1, 'w:held'],
      [4, 'SUCCEEDED', 2, 'w:1'],
      [5, 'SUCCEEDED', 1, 'w:held'],
      [6, 'SUCCEEDED', 1, 'w:1'],
    ]);
    expect(summary).toMatchObject({ succeeded: 8, skipped: 2, failed: 0 });
    expect(h.journal.entries.map((e) => tailOf(e.taskId)).sort()).toContain('b3-1');
  });

  it("writes a started mark ahead of the units it starts, once per `concurrency` units; nothing's asked without an earlier one", async () => {
    const h = harness();
    const marks: number[] = [];
    const asked: string[] = [];
    const runner: TaskRunner = { ...h.runner, resume: (id) => (asked.push(id), Promise.resolve(undefined)) };
    await drain(runner, blocks(1, 10), {
      ...h.opts,
      journal: { ...h.journal, recordStarted: (k) => marks.push(k) },
    });
    // Concurrency 4: before unit 1 the mark covers 1-4, before 5 it covers 5-8, before 9 the rest.
    expect(marks).toEqual([4, 8, 10]);
    expect(asked).toEqual([]);
  });

  it('a unit failing retryably twice then succeeding: attempts 3, two retry events, the third id journaled', async () => {
    const h = harness((key, attempt) =>
      key === 5 && attempt < 3 ? { kind: 'failed', retryable: true } : OK,
    );
    const plan = blocks(1, 8);
    const { units, retries, summary } = await drain(h.runner, plan, h.opts);
    const u5 = units.find((u) => u.unit.key === 5);
    expect(u5).toMatchObject({ state: 'SUCCEEDED', attempts: 3, taskId: idOf(plan, 'b5-3') });
    expect(retries).toEqual([
      {
        type: 'retry',
        unit: u5?.unit,
        attempt: 1,
        taskId: idOf(plan, 'b5-1'),
        reason: 'retryable_failure',
        delayMs: 375,
        failure: 'CALL_FAILED boom',
      },
      {
        type: 'retry',
        unit: u5?.unit,
        attempt: 2,
        taskId: idOf(plan, 'b5-2'),
        reason: 'retryable_failure',
        delayMs: 750,
        failure: 'CALL_FAILED boom',
      },
    ]);
    expect(h.delays).toEqual([375, 750]);
    expect(h.journal.entries.find((e) => e.key === 5)?.taskId).toBe(idOf(plan, 'b5-3'));
    expect(summary).toMatchObject({ succeeded: 8, failed: 0, attempts: 10 });
  });

  it('a non-retryable failure is reported, not retried and not journaled', async () => {
    const h = harness((key) => (key === 2 ? { kind: 'failed', retryable: false } : OK));
    const plan = blocks(1, 4);
    const { units, retries, summary } = await drain(h.runner, plan, h.opts);
    expect(retries).toEqual([]);
    expect(units.find((u) => u.unit.key === 2)).toMatchObject({
      state: 'FAILED',
      attempts: 1,
      taskId: idOf(plan, 'b2-1'),
      failureCode: 'CALL_FAILED',
      failureMessage: 'boom',
      gaveUp: 'non_retryable',
      rows: undefined,
    });
    expect(h.calls.filter((c) => parseTaskId(c.taskId).key === 2)).toHaveLength(1);
    expect(h.journal.done.has(2)).toBe(false);
    expect(summary).toMatchObject({ succeeded: 3, failed: 1, remaining: 0, attempts: 4, interrupted: false });
  });

  it('a lost Worker (UNAVAILABLE from WatchTasks) is retried under the next attempt id', async () => {
    const h = harness((key, attempt) =>
      key === 3 && attempt === 1
        ? { kind: 'error', code: ClientErrorCode.UNAVAILABLE, rpc: 'WatchTasks' }
        : OK,
    );
    const plan = blocks(1, 4);
    const { units, retries } = await drain(h.runner, plan, h.opts);
    expect(retries).toMatchObject([
      {
        attempt: 1,
        taskId: idOf(plan, 'b3-1'),
        reason: 'worker_lost',
        failure: 'UNAVAILABLE UNAVAILABLE from WatchTasks',
      },
    ]);
    expect(h.calls.filter((c) => parseTaskId(c.taskId).key === 3).map((c) => c.taskId)).toEqual([
      idOf(plan, 'b3-1'),
      idOf(plan, 'b3-2'),
    ]);
    expect(units.find((u) => u.unit.key === 3)).toMatchObject({ state: 'SUCCEEDED', attempts: 2 });
  });

  it('retries exhausted: FAILED with the client error of the last attempt', async () => {
    const h = harness(() => ({ kind: 'error', code: ClientErrorCode.NO_CAPACITY, rpc: 'ReserveWorkerSlot' }));
    const plan = blocks(7, 7);
    const { units, retries, summary } = await drain(h.runner, plan, {
      ...h.opts,
      policy: { ...POLICY, retries: 2 },
    });
    expect(retries).toHaveLength(2);
    expect(units).toMatchObject([
      {
        state: 'FAILED',
        attempts: 3,
        gaveUp: 'retries_exhausted',
        failureCode: 'NO_CAPACITY',
        taskId: idOf(plan, 'b7-3'),
      },
    ]);
    expect(summary).toMatchObject({ failed: 1, attempts: 3 });
  });

  it('never has more than `concurrency` units in flight, and runs every unit once to the end (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 25 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 25, maxLength: 25 }),
        fc.array(
          fc.constantFrom<Step>(
            OK,
            { kind: 'failed', retryable: true },
            { kind: 'failed', retryable: false },
          ),
          {
            minLength: 25,
            maxLength: 25,
          },
        ),
        async (concurrency, n, ticks, firstSteps) => {
          const h = harness((key, attempt) => (attempt === 1 ? (firstSteps[key - 1] as Step) : OK), {
            concurrency,
            ticks: (key) => ticks[key - 1] as number,
          });
          const { units, summary } = await drain(h.runner, blocks(1, n), h.opts);
          expect(h.maxInFlight()).toBeLessThanOrEqual(concurrency);
          expect(h.maxInFlight()).toBe(Math.min(concurrency, n));
          expect(units.map((u) => u.unit.key).sort((a, b) => a - b)).toEqual(
            Array.from({ length: n }, (_, i) => i + 1),
          );
          expect(summary.succeeded + summary.failed).toBe(n);
          expect(summary.attempts).toBe(h.calls.length);
          expect([...h.journal.done].sort((a, b) => a - b)).toEqual(
            units
              .filter((u) => u.state === 'SUCCEEDED')
              .map((u) => u.unit.key)
              .sort((a, b) => a - b),
          );
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a graceful stop: no new units, the ones in flight finish and are journaled, the rest remain', async () => {
    const stop = new AbortController();
    const h = harness((key) => (key === 2 ? { kind: 'failed', retryable: true } : OK), {
      concurrency: 3,
      stop: stop.signal,
      ticks: () => 3,
      // The stop arrives while units 1..3 are in flight, before any of them ended.
      onCall: (task) => parseTaskId(task.taskId).key === 3 && stop.abort(),
    });
    const { units, retries, summary } = await drain(h.runner, blocks(1, 10), h.opts);
    expect(h.calls.map((c) => tailOf(c.taskId)).sort()).toEqual(['b1-1', 'b2-1', 'b3-1']);
    // Unit 2 failed retryably in flight: it is not retried after the stop.
    expect(retries).toEqual([]);
    expect(units.map((u) => [u.unit.key, u.state, u.gaveUp]).sort()).toEqual([
      [1, 'SUCCEEDED', undefined],
      [2, 'FAILED', 'cancelled'],
      [3, 'SUCCEEDED', undefined],
    ]);
    expect([...h.journal.done].sort()).toEqual([1, 3]);
    expect(summary).toMatchObject({ succeeded: 2, failed: 1, skipped: 0, remaining: 7, interrupted: true });

    // The rerun (same journal) does exactly what is left: 2 and 4..10.
    const rerun = harness(() => OK);
    for (const k of h.journal.done) rerun.journal.done.add(k);
    const again = await drain(rerun.runner, blocks(1, 10), rerun.opts);
    expect(rerun.calls.map((c) => parseTaskId(c.taskId).key).sort((a, b) => a - b)).toEqual([
      2, 4, 5, 6, 7, 8, 9, 10,
    ]);
    expect(again.summary).toMatchObject({ skipped: 2, succeeded: 8, remaining: 0, interrupted: false });
  });

  it('a graceful stop during a backoff wait starts no retry', async () => {
    const stop = new AbortController();
    const h = harness(() => ({ kind: 'failed', retryable: true }), { concurrency: 1, stop: stop.signal });
    const { units, summary } = await drain(h.runner, blocks(1, 3), {
      ...h.opts,
      sleep: () => (stop.abort(), Promise.resolve()),
    });
    expect(h.calls).toHaveLength(1);
    expect(units).toMatchObject([{ state: 'FAILED', attempts: 1, gaveUp: 'cancelled' }]);
    expect(summary).toMatchObject({ failed: 1, remaining: 2, interrupted: true });
  });

  it('a hard stop (`signal`) cancels the attempts in flight', async () => {
    const cancel = new AbortController();
    const h = harness(() => ({ kind: 'failed', retryable: true }), {
      concurrency: 2,
      signal: cancel.signal,
      onCall: (task) => parseTaskId(task.taskId).key === 2 && cancel.abort(),
    });
    const { units, summary } = await drain(h.runner, blocks(1, 5), h.opts);
    expect(h.calls).toHaveLength(2);
    expect(
      units.every((u) => u.state === 'FAILED' && u.failureCode === 'CANCELLED' && u.gaveUp === 'cancelled'),
    ).toBe(true);
    expect(summary).toMatchObject({ failed: 2, remaining: 3, interrupted: true });
  });

  it('per bundle: the summary counts blocks (a bundle counts its size), units count bundles', async () => {
    const plan = planBackfill({ template: BUNDLE_TEMPLATE, from: 1, to: 50, per: 'bundle' });
    expect(plan.units).toHaveLength(5);
    const stop = new AbortController();
    const h = harness(
      (key) => (key === 3 ? { kind: 'failed', retryable: false } : { kind: 'ok', rows: 100 }),
      {
        concurrency: 1,
        stop: stop.signal,
        onCall: (task) => parseTaskId(task.taskId).key === 4 && stop.abort(),
      },
    );
    h.journal.done.add(1);
    const { units, summary } = await drain(h.runner, plan, h.opts);
    expect(h.calls.map((c) => tailOf(c.taskId))).toEqual(['u2-1', 'u3-1', 'u4-1']);
    expect(h.calls[0]?.functionCallConfig.config).toMatchObject({ bundle: 2, bundleSize: 10 });
    expect(units.map((u) => [u.unit.key, u.unit.firstBlock, u.unit.lastBlock, u.state])).toEqual([
      [1, 1, 10, 'SKIPPED'],
      [2, 11, 20, 'SUCCEEDED'],
      [3, 21, 30, 'FAILED'],
      [4, 31, 40, 'SUCCEEDED'],
    ]);
    expect(summary).toMatchObject({
      per: 'bundle',
      blocks: 50,
      units: 5,
      skipped: 10,
      succeeded: 20,
      failed: 10,
      remaining: 10,
      attempts: 3,
      rows: 200,
      interrupted: true,
    });
  });

  it("task ids carry the journal's run tag; without a journal each run draws its own", async () => {
    const h = harness();
    const plan = blocks(4, 4);
    await drain(h.runner, plan, h.opts);
    const { journal: _journal, ...noJournal } = h.opts;
    // Drawn from the cryptographic source, not the retry jitter's `random` (128 bits: unguessable).
    await drain(h.runner, plan, { ...noJournal, random: () => 0 });
    await drain(h.runner, plan, { ...noJournal, random: () => 0 });
    const [journaled, first, second] = h.calls.map((c) => c.taskId);
    expect(journaled).toBe(idOf(plan, 'b4-1'));
    const drawn = new RegExp(`^bf-${plan.jobId}-([0-9a-f]{32})-b4-1$`);
    expect(first).toMatch(drawn);
    expect(second).toMatch(drawn);
    expect(first).not.toBe(second);
  });

  it('an empty todo list (everything journaled) yields start, the skipped units and the summary', async () => {
    const h = harness();
    for (const k of [1, 2]) h.journal.done.add(k);
    const { events, summary } = await drain(h.runner, blocks(1, 2), h.opts);
    expect(events.map((e) => e.type)).toEqual(['start', 'unit', 'unit', 'summary']);
    expect(summary).toMatchObject({
      skipped: 2,
      succeeded: 0,
      attempts: 0,
      remaining: 0,
      interrupted: false,
      seconds: 0,
    });
    expect(h.calls).toEqual([]);
  });

  it('rejects a concurrency below 1', async () => {
    const h = harness();
    await expect(drain(h.runner, blocks(1, 2), { ...h.opts, concurrency: 0 })).rejects.toThrow(RangeError);
  });
});
