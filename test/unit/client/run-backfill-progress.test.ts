// runBackfill's progress reports (src/client/backfill/run-backfill.ts, `progress`): the counts in units
// as the job goes, the last report marked finished with the final counts, and skipped units counted.
import { describe, expect, it } from 'vitest';
import { planBackfill, type BackfillTemplate } from '../../../src/client/backfill/plan.js';
import type {
  BackfillProgress,
  BackfillProgressSink,
} from '../../../src/client/backfill/progress-reporter.js';
import { runBackfill } from '../../../src/client/backfill/run-backfill.js';
import type { RunnableTask, TaskRunner } from '../../../src/client/run-with-retries.js';
import type { TaskRunResult } from '../../../src/client/types.js';
import type { TaskUpdate } from '../../../src/grpc/domain-types.js';

const TEMPLATE: BackfillTemplate = {
  functionCallConfig: {
    type: 'BlockTableCallConfig',
    config: { function: 'f', table: 'events', chainId: 1, block: { number: 1 } },
  },
};

/** Units whose block number is in `failing` fail (not retryable); the rest succeed. */
function runner(failing: ReadonlySet<number>): TaskRunner {
  return {
    async run(task: RunnableTask): Promise<TaskRunResult> {
      await new Promise<void>((r) => setImmediate(r));
      const key = Number(/-b(\d+)-\d+$/.exec(task.taskId)?.[1]);
      const ok = !failing.has(key);
      return {
        taskId: task.taskId,
        workerAddr: 'w:1',
        state: ok ? 'SUCCEEDED' : 'FAILED',
        success: ok,
        failureCode: ok ? '' : 'CALL_FAILED',
        failureMessage: ok ? '' : 'boom',
        retryable: false,
        pluginResults: [],
        update: { taskId: task.taskId } as unknown as TaskUpdate,
        attempts: 1,
        durationMs: 1,
      };
    },
  };
}

function recordingSink(): BackfillProgressSink & { updates: BackfillProgress[]; final: BackfillProgress[] } {
  const updates: BackfillProgress[] = [];
  const final: BackfillProgress[] = [];
  return {
    updates,
    final,
    update: (p) => updates.push(p),
    finish: async (p) => {
      final.push(p);
    },
  };
}

describe('runBackfill progress', () => {
  it.each([
    ['all succeed', new Set<number>(), new Set<number>(), { succeeded: 10, failed: 0, skipped: 0 }],
    ['some fail', new Set([3, 4]), new Set<number>(), { succeeded: 8, failed: 2, skipped: 0 }],
    ['some were done before', new Set([9]), new Set([1, 2, 3]), { succeeded: 6, failed: 1, skipped: 3 }],
  ])('%s', async (_name, failing, done, want) => {
    const plan = planBackfill({ template: TEMPLATE, from: 1, to: 10, per: 'block' });
    const sink = recordingSink();
    let now = 5_000;
    const events = runBackfill(runner(failing), plan, {
      concurrency: 3,
      policy: { retries: 0, initialBackoffMs: 1, maxBackoffMs: 1, slotTtlMs: 1_000 },
      journal: { runId: 'r1', done, record: () => undefined } as never,
      sleep: async () => undefined,
      random: () => 0.5,
      clock: () => now++,
      progress: sink,
    });
    for await (const e of events) void e;

    expect(sink.final).toEqual([
      {
        jobId: plan.jobId,
        run: 'r1',
        per: 'block',
        fromBlock: 1,
        toBlock: 10,
        units: 10,
        ...want,
        inFlight: 0,
        startedAtMs: 5_000,
        finished: true,
      },
    ]);
    // Every report is consistent and the counts never go back.
    let last = { succeeded: 0, failed: 0 };
    for (const u of sink.updates) {
      expect(u.finished).toBe(false);
      expect(u.succeeded + u.failed + u.skipped + u.inFlight).toBeLessThanOrEqual(u.units);
      expect(u.inFlight).toBeLessThanOrEqual(3);
      expect(u.succeeded).toBeGreaterThanOrEqual(last.succeeded);
      expect(u.failed).toBeGreaterThanOrEqual(last.failed);
      last = u;
    }
    expect(sink.updates.some((u) => u.inFlight > 0)).toBe(true);
  });
});
