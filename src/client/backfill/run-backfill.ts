// The backfill engine (docs/backfill.md): runs every unit of a plan through a TaskRunner (BlockxClient)
// with at most `concurrency` units in flight, each to a final outcome with task-level retries
// (../run-with-retries.ts), records each success in the journal, and reports progress as an async
// iterable of events — one `unit` event per unit (skipped ones first), then one `summary`.
//
// Stopping: `stop` (a graceful stop, the CLI's first Ctrl-C) starts no new unit and no new retry and lets
// the attempts in flight finish, so they are journaled; `signal` (the second Ctrl-C) cancels them too.
// Units never started are counted as `remaining`; a rerun does them. A failure the job's other units would
// meet too (`stopOn` names it: `blockx ingest`'s source missing on a Worker) stops the run the same
// graceful way, once, and the summary says why (`stoppedBy`).
//
// Resuming after a crash: units are journaled only when they succeed, so a crash leaves the units in
// flight unrecorded, and a rerun submits them again under their first attempt's id. The Coordinator sends
// an id back to the Worker it placed it on, but a unit sent without it (slot reuse) would be placed anew
// and run a second time. So the engine writes a `started` watermark ahead of the units it starts (one
// journal line per `concurrency` units), and a rerun first asks the Workers (`runner.resume`) for every
// unit not done up to the earlier watermark: one that a Worker holds is followed there, not run again
// (docs/backfill.md § Resuming).
import { BlockxClientError } from '../errors.js';
import { runWithRetries, type RetriedOutcome, type TaskRunner } from '../run-with-retries.js';
import type { GiveUpReason, RetryReason, TaskRetryPolicy } from '../task-retry.js';
import type { TaskRunResult } from '../types.js';
import { newRunId, type BackfillJournal } from './journal.js';
import type { BackfillPlan, BackfillUnit } from './plan.js';
import type { BackfillProgress, BackfillProgressSink } from './progress-reporter.js';

export interface BackfillRunOptions {
  readonly concurrency: number;
  readonly policy: TaskRetryPolicy;
  /** Units already done are skipped; successes are recorded. Default: none (nothing is skipped). */
  readonly journal?: BackfillJournal;
  /** Graceful stop: no new units or retries; attempts in flight finish. */
  readonly stop?: AbortSignal;
  /** Hard stop: attempts in flight are cancelled. */
  readonly signal?: AbortSignal;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  /** UTC ms, for durations. */
  readonly clock: () => number;
  /**
   * Told the job's counts as they change and once at the end (the Coordinator's dashboard,
   * ./progress-reporter.ts). Advisory: it never throws and bounds its own wait.
   */
  readonly progress?: BackfillProgressSink;
  /**
   * A failure that is the job's, not the unit's: given a failed unit's last result, the reason to stop the
   * whole run (as `stop` does: no new units or retries; attempts in flight finish), or undefined.
   * Default: none, every unit runs to its own outcome.
   */
  readonly stopOn?: (result: TaskRunResult) => string | undefined;
}

export type UnitState = 'SUCCEEDED' | 'FAILED' | 'SKIPPED';

export interface UnitReport {
  readonly type: 'unit';
  readonly unit: BackfillUnit;
  readonly state: UnitState;
  /** The task id of the last attempt ('' when skipped). */
  readonly taskId: string;
  readonly attempts: number;
  /** Rows the writer reported (BlockWrite / BundleWrite / TableUpserts), when it did. */
  readonly rows: number | undefined;
  readonly workerAddr: string;
  readonly failureCode: string;
  readonly failureMessage: string;
  /** Why a FAILED unit was not retried further. */
  readonly gaveUp: GiveUpReason | undefined;
  readonly durationMs: number;
  /** A FAILED unit whose failure `stopOn` named: the job's reason to stop. */
  readonly jobFailure?: string;
}

export interface RetryReport {
  readonly type: 'retry';
  readonly unit: BackfillUnit;
  readonly attempt: number;
  readonly taskId: string;
  readonly reason: RetryReason;
  readonly delayMs: number;
  readonly failure: string;
}

export interface BackfillSummary {
  readonly jobId: string;
  readonly per: 'block' | 'bundle';
  /** Blocks the range covers; succeeded/failed/skipped/remaining count blocks too (a bundle counts its size). */
  readonly blocks: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly skipped: number;
  /** Blocks not run because the job was stopped. */
  readonly remaining: number;
  readonly units: number;
  /** Task attempts submitted (a unit that succeeded at once is one). */
  readonly attempts: number;
  /** Rows written, summed over the writers' reports. */
  readonly rows: number;
  readonly seconds: number;
  readonly interrupted: boolean;
  /** Why the run stopped before its end (`stopOn`'s reason for the first unit that met it). */
  readonly stoppedBy?: string;
}

export type BackfillEvent =
  | { readonly type: 'start'; readonly units: number; readonly skipped: number }
  | RetryReport
  | UnitReport
  | { readonly type: 'summary'; readonly summary: BackfillSummary };

export async function* runBackfill(
  runner: TaskRunner,
  plan: BackfillPlan,
  opts: BackfillRunOptions,
): AsyncGenerator<BackfillEvent, BackfillSummary, undefined> {
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${opts.concurrency}`);
  }
  const started = opts.clock();
  const done = opts.journal?.done ?? new Set<number>();
  // Without a journal nothing is resumed, so every call is a run of its own.
  const run = opts.journal?.runId ?? newRunId();
  const todo = plan.units.filter((u) => !done.has(u.key));
  const skippedUnits = plan.units.filter((u) => done.has(u.key));
  const size = (u: BackfillUnit): number => u.lastBlock - u.firstBlock + 1;
  const counts = { succeeded: 0, failed: 0, skipped: 0, attempts: 0, rows: 0, ran: 0 };
  // The same counts in units (what a progress report says), and units that ended.
  const unitCounts = { succeeded: 0, failed: 0, ended: 0 };
  const progressOf = (finished: boolean): BackfillProgress => ({
    jobId: plan.jobId,
    run,
    per: plan.per,
    fromBlock: plan.units[0]?.firstBlock ?? 0,
    toBlock: plan.units[plan.units.length - 1]?.lastBlock ?? 0,
    units: plan.units.length,
    succeeded: unitCounts.succeeded,
    failed: unitCounts.failed,
    skipped: skippedUnits.length,
    inFlight: counts.ran - unitCounts.ended,
    startedAtMs: started,
    finished,
  });
  opts.progress?.update(progressOf(false));

  yield { type: 'start', units: plan.units.length, skipped: skippedUnits.length };
  for (const unit of skippedUnits) {
    counts.skipped += size(unit);
    yield skippedReport(unit);
  }

  // Lanes push events; the generator drains them as they come.
  const queue: BackfillEvent[] = [];
  let wake: (() => void) | undefined;
  const push = (e: BackfillEvent): void => {
    queue.push(e);
    wake?.();
  };
  let next = 0;
  // Units up to this key have a `started` line; the earlier run's line says which units may have run.
  let startedMark = -Infinity;
  const earlier = opts.journal?.startedThrough;
  // Aborted by the first unit whose failure is the job's (`stopOn`): it stops the run as `stop` does.
  const halt = new AbortController();
  let stoppedBy: string | undefined;
  const runOpts: BackfillRunOptions = {
    ...opts,
    stop: opts.stop === undefined ? halt.signal : AbortSignal.any([opts.stop, halt.signal]),
  };
  const stopped = (): boolean => Boolean(runOpts.stop?.aborted || opts.signal?.aborted);
  const lane = async (): Promise<void> => {
    for (;;) {
      if (stopped()) return;
      const unit = todo[next++];
      if (unit === undefined) return;
      if (opts.journal?.recordStarted !== undefined && unit.key > startedMark) {
        startedMark = maxKey(todo, next - 1, opts.concurrency);
        opts.journal.recordStarted(startedMark);
      }
      counts.ran++;
      opts.progress?.update(progressOf(false));
      const mayHaveRun = earlier !== undefined && unit.key <= earlier;
      const report = await runUnit(runner, plan, unit, run, runOpts, push, mayHaveRun);
      if (report.jobFailure !== undefined && stoppedBy === undefined) {
        stoppedBy = report.jobFailure;
        halt.abort();
      }
      unitCounts.ended++;
      if (report.state === 'SUCCEEDED') unitCounts.succeeded++;
      else unitCounts.failed++;
      opts.progress?.update(progressOf(false));
      push(report);
    }
  };
  let lanesDone = false;
  const lanes = Promise.all(Array.from({ length: Math.min(opts.concurrency, todo.length) }, lane)).finally(
    () => {
      lanesDone = true;
      wake?.();
    },
  );
  for (;;) {
    const e = queue.shift();
    if (e !== undefined) {
      if (e.type === 'unit') {
        counts.attempts += e.attempts;
        counts.rows += e.rows ?? 0;
        if (e.state === 'SUCCEEDED') counts.succeeded += size(e.unit);
        else counts.failed += size(e.unit);
      }
      yield e;
      continue;
    }
    if (lanesDone) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  await lanes;

  const remaining = todo.slice(counts.ran).reduce((n, u) => n + size(u), 0);
  const summary: BackfillSummary = {
    jobId: plan.jobId,
    per: plan.per,
    blocks: plan.blocks,
    succeeded: counts.succeeded,
    failed: counts.failed,
    skipped: counts.skipped,
    remaining,
    units: plan.units.length,
    attempts: counts.attempts,
    rows: counts.rows,
    seconds: Math.round(opts.clock() - started) / 1000,
    interrupted: remaining > 0 || (stopped() && counts.failed > 0),
    ...(stoppedBy === undefined ? {} : { stoppedBy }),
  };
  await opts.progress?.finish(progressOf(true));
  yield { type: 'summary', summary };
  return summary;
}

async function runUnit(
  runner: TaskRunner,
  plan: BackfillPlan,
  unit: BackfillUnit,
  run: string,
  opts: BackfillRunOptions,
  push: (e: BackfillEvent) => void,
  mayHaveRun: boolean,
): Promise<UnitReport> {
  const started = opts.clock();
  // A unit an earlier run may have started: the Worker holding its first attempt answers for it. A
  // success is the unit's outcome; a failure counts as its first attempt, and the retries go on from the
  // next attempt's id (the Worker answers the retained FAILED for the first one).
  const earlier =
    mayHaveRun && runner.resume !== undefined
      ? await runner
          .resume(plan.taskIdOf(unit, 1, run), opts.signal ? { signal: opts.signal } : {})
          .catch(() => undefined)
      : undefined;
  const shift = earlier === undefined ? 0 : 1;
  const outcome: RetriedOutcome = earlier?.success
    ? { ok: true, result: earlier, attempts: 1 }
    : await runWithRetries(runner, plan.taskOf(unit), {
        policy: opts.policy,
        taskIdOf: (attempt) => plan.taskIdOf(unit, attempt + shift, run),
        sleep: opts.sleep,
        random: opts.random,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.stop ? { stopRetrying: opts.stop } : {}),
        onAttempt: (r) => {
          if (r.decision.type !== 'retry') return;
          push({
            type: 'retry',
            unit,
            attempt: r.attempt,
            taskId: r.taskId,
            reason: r.decision.reason,
            delayMs: r.decision.delayMs,
            failure: failureOf(r.outcome),
          });
        },
      });
  const attempts = outcome.attempts + (earlier?.success === false ? 1 : 0);
  return unitReport(unit, outcome, attempts, opts, started);
}

function unitReport(
  unit: BackfillUnit,
  outcome: RetriedOutcome,
  attempts: number,
  opts: BackfillRunOptions,
  started: number,
): UnitReport {
  const last = outcome.ok ? outcome.result : (outcome.result ?? outcome.error);
  const taskId =
    last instanceof BlockxClientError ? (last.taskId ?? '') : last !== undefined ? last.taskId : '';
  const base = {
    type: 'unit' as const,
    unit,
    taskId,
    attempts,
    durationMs: opts.clock() - started,
  };
  if (outcome.ok) {
    const rows = rowsOf(outcome.result);
    opts.journal?.record({ key: unit.key, taskId: outcome.result.taskId, rows });
    return {
      ...base,
      state: 'SUCCEEDED',
      rows,
      workerAddr: outcome.result.workerAddr,
      failureCode: '',
      failureMessage: '',
      gaveUp: undefined,
    };
  }
  const result = outcome.result;
  const error = outcome.error;
  const jobFailure = result === undefined ? undefined : opts.stopOn?.(result);
  return {
    ...base,
    state: 'FAILED',
    rows: undefined,
    workerAddr: result?.workerAddr ?? error?.address ?? '',
    failureCode: result?.failureCode ?? error?.code ?? 'UNKNOWN',
    failureMessage: result?.failureMessage ?? error?.message ?? '',
    gaveUp: outcome.reason,
    ...(jobFailure === undefined ? {} : { jobFailure }),
  };
}

/** The largest key of `units[from .. from + count)` (the units the lanes start next). */
function maxKey(units: readonly BackfillUnit[], from: number, count: number): number {
  let max = -Infinity;
  for (let i = from; i < Math.min(units.length, from + count); i++) max = Math.max(max, units[i]!.key);
  return max;
}

function skippedReport(unit: BackfillUnit): UnitReport {
  return {
    type: 'unit',
    unit,
    state: 'SKIPPED',
    taskId: '',
    attempts: 0,
    rows: undefined,
    workerAddr: '',
    failureCode: '',
    failureMessage: '',
    gaveUp: undefined,
    durationMs: 0,
  };
}

/** Sum of the `rows` (or TableUpserts' `upserts`) counts the writers reported; undefined when none did. */
export function rowsOf(result: TaskRunResult): number | undefined {
  let rows: number | undefined;
  for (const r of result.pluginResults) {
    const reported = r.result as { rows?: unknown; upserts?: unknown } | undefined;
    const n = reported?.rows ?? reported?.upserts;
    if (typeof n === 'number' && Number.isFinite(n)) rows = (rows ?? 0) + n;
  }
  return rows;
}

function failureOf(outcome: TaskRunResult | BlockxClientError): string {
  if (outcome instanceof BlockxClientError) return `${outcome.code} ${outcome.message}`;
  return `${outcome.failureCode} ${outcome.failureMessage}`.trim();
}
