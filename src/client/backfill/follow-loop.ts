// The follow driver (docs/follow.md): runs the follow core (src/services/follow/core/) against real IO —
// reads of the chain tables, tasks through a TaskRunner (BlockxClient) with task-level retries, and the
// job's state in its store — and reports what happens as an async iterable of events.
//
// Ordering, which the guarantee rests on:
//  - before a height's task starts, the store marks the height unknown (''), so a driver that dies with
//    the task in flight leaves a mark that makes the next one run (or remove) the height again;
//  - a task's outcome is stored before the core hears of it, and the cursor (`final`) is stored after,
//    so the store never says a height is final and applied before its hash is recorded;
//  - store writes go one at a time, in the order they were asked for.
//
// Stopping: `stop` (first Ctrl-C, a `blockx jobs stop`, a lost lease) starts nothing new and lets the
// tasks in flight finish; `signal` (second Ctrl-C) cancels them. A reorg deeper than finality stops the
// loop with the core's error, and nothing is run for it.
import {
  FollowCore,
  UNKNOWN_HASH,
  type CanonicalBlock,
  type FollowCommand,
  type FollowInput,
  type FollowResume,
} from '../../services/follow/core/follow-core.js';
import { JobFencedError, type ReorgBeyondFinalityError } from '../../services/follow/core/errors.js';
import { failedWith, runWithRetries, type TaskRunner } from '../run-with-retries.js';
import type { TaskRetryPolicy } from '../task-retry.js';
import { FENCED_CODE, type WriteFence } from '../../contracts/write-fence.js';
import type { ClientTaskInput } from '../types.js';
import type { TerminalTaskState } from '../../contracts/task.js';
import type { BackfillTemplate } from './plan.js';
import { rowsOf } from './run-backfill.js';

/** Defaults of a follow job (docs/follow.md § Settings). */
export const FOLLOW_DEFAULTS = Object.freeze({
  /** How often the `blocks` table is read once the job is caught up. */
  pollIntervalMs: 1000,
  /** Blocks at or below head − finality are final. */
  finality: 64,
  /** Wait before a height whose task failed (after its retries) is tried again. */
  retryDelayMs: 5000,
  /** Heights one read of the `blocks` table covers. */
  pageSize: 1000,
});

export interface FollowChainPort {
  /** The head, then the canonical blocks of [lo, hi] (docs/follow.md § Reading the chain). */
  read(
    lo: number,
    hi: number,
    signal?: AbortSignal,
  ): Promise<{ head: number | null; blocks: readonly CanonicalBlock[] }>;
}

export interface FollowStatePort {
  /** Records what `height`'s output was computed on: a hash, UNKNOWN_HASH while in flight, null for none. */
  setApplied(height: number, hash: string | null): Promise<void>;
  /** Records the cursor (every height below it final and applied) and what the job saw. */
  setFinal(cursor: number, hash: string | null, seen: FollowProgress): Promise<void>;
  /** Records the head and the reorgs the job saw (called when they change), for `blockx jobs list`. */
  setSeen(seen: FollowProgress): Promise<void>;
  /** Whether someone asked the job to stop (`blockx jobs stop`); asked once per read. */
  stopRequested(): Promise<boolean>;
}

export interface FollowProgress {
  readonly head: number | null;
  readonly reorgs: number;
  readonly deepestReorg: number;
}

export interface FollowLoopOptions {
  readonly jobId: string;
  /** A tag drawn per driver: task ids of this driver never meet a Worker's retained result of another. */
  readonly runId: string;
  readonly template: BackfillTemplate;
  readonly from: number;
  readonly finality: number;
  readonly pollIntervalMs: number;
  readonly retryDelayMs: number;
  readonly pageSize: number;
  readonly concurrency: number;
  readonly policy: TaskRetryPolicy;
  readonly resume?: FollowResume;
  /** The runner's job and term, carried by each task's writer (docs/follow.md § Fencing). */
  readonly fence?: WriteFence;
  /** Graceful stop: nothing new starts; tasks in flight finish. */
  readonly stop?: AbortSignal;
  /** Hard stop: tasks in flight are cancelled. */
  readonly signal?: AbortSignal;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  readonly clock: () => number;
}

export type FollowEvent =
  | {
      readonly type: 'block';
      readonly height: number;
      /** The block the output now reflects; null when the height's outputs were removed. */
      readonly hash: string | null;
      readonly state: TerminalTaskState;
      readonly taskId: string;
      readonly attempts: number;
      readonly rows: number | undefined;
      readonly failureCode: string;
      readonly failureMessage: string;
      readonly durationMs: number;
    }
  /** The core's report of a reorg: the common ancestor and the depth. */
  | Extract<FollowCommand, { type: 'reorg' }>
  /** The job caught up with the head (once per time it does, after having been behind). */
  | { readonly type: 'caught-up'; readonly head: number | null; readonly cursor: number }
  | {
      readonly type: 'stopped';
      readonly reason: 'stop' | 'requested' | 'cancelled' | 'reorg-beyond-finality';
      readonly error?: ReorgBeyondFinalityError;
    };

/**
 * The task that computes `height` on exactly block `hash`, or (hash null) empties its outputs; with
 * `fence` (the runner's job and term), the writer commits it only while the term is the newest. The
 * writer must accept a fence (`blockx backfill --follow` refuses one that does not: docs/follow.md § Writers).
 */
export function followTaskOf(
  template: BackfillTemplate,
  height: number,
  hash: string | null,
  fence?: WriteFence,
): ClientTaskInput {
  const builder = template.functionCallConfig;
  const writer = template.resultHandler;
  if (writer == null) throw new Error('a follow template needs a writer (resultHandler)');
  const writerConfig = {
    ...(writer.config as Record<string, unknown>),
    block: { number: height },
    ...(fence !== undefined ? { fence } : {}),
  };
  const builderConfig = builder.config as Record<string, unknown>;
  // Removing: no calls, so the block writer replaces the block's rows with none (docs/follow.md § Writers).
  const functionCallConfig =
    hash === null
      ? {
          type: 'CallListCallConfig',
          config: { function: String(builderConfig.function ?? 'noop'), callList: [] },
        }
      : { type: builder.type, config: { ...builderConfig, block: { hash } } };
  return {
    functionCallConfig,
    resultHandler: { type: writer.type, config: writerConfig },
    ...(template.taskTimeoutMs ? { taskTimeoutMs: template.taskTimeoutMs } : {}),
  };
}

export async function* runFollow(
  chain: FollowChainPort,
  state: FollowStatePort,
  runner: TaskRunner,
  opts: FollowLoopOptions,
): AsyncGenerator<FollowEvent> {
  const core = new FollowCore({
    from: opts.from,
    finality: opts.finality,
    maxInFlight: opts.concurrency,
    pollIntervalMs: opts.pollIntervalMs,
    retryDelayMs: opts.retryDelayMs,
    pageSize: opts.pageSize,
    now: opts.clock(),
    ...(opts.resume ? { resume: opts.resume } : {}),
  });
  const inputs: FollowInput[] = [];
  const events: FollowEvent[] = [];
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  const push = (input: FollowInput): void => {
    inputs.push(input);
    notify();
  };
  // Store writes, one at a time, in order; a failed write fails the loop.
  let storeChain: Promise<void> = Promise.resolve();
  let storeError: unknown;
  const store = (write: () => Promise<void>): Promise<void> => {
    storeChain = storeChain.then(write).catch((err: unknown) => {
      storeError ??= err;
      notify();
    });
    return storeChain;
  };
  const progress = { head: null as number | null, reorgs: 0, deepestReorg: 0 };
  let tasks = 0;
  let stopReason: Extract<FollowEvent, { type: 'stopped' }>['reason'] | undefined;
  let deep: ReorgBeyondFinalityError | undefined;
  let behind = true;
  const onStop = (): void => notify();
  opts.stop?.addEventListener('abort', onStop);
  opts.signal?.addEventListener('abort', onStop);

  const startTask = (c: Extract<FollowCommand, { type: 'run' | 'remove' }>): void => {
    const hash = c.type === 'run' ? c.hash : null;
    tasks++;
    void (async () => {
      const started = opts.clock();
      await store(() => state.setApplied(c.height, UNKNOWN_HASH));
      // A mark the store refused (a newer runner holds the job, or the database failed): the task must
      // not run unmarked; the loop ends with the store's error.
      if (storeError !== undefined) {
        tasks--;
        notify();
        return;
      }
      const outcome = await runWithRetries(runner, followTaskOf(opts.template, c.height, hash, opts.fence), {
        policy: opts.policy,
        taskIdOf: (attempt) => `${opts.jobId}-${opts.runId}-b${c.height}-${c.seq}-${attempt}`,
        sleep: opts.sleep,
        random: opts.random,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.stop ? { stopRetrying: opts.stop } : {}),
      });
      const result = outcome.result;
      const error = outcome.ok ? undefined : outcome.error;
      if (outcome.ok) await store(() => state.setApplied(c.height, hash));
      // The writer refused the write: a newer runner claimed the job (docs/follow.md § Fencing).
      else if (opts.fence !== undefined && failedWith(result, FENCED_CODE)) {
        storeError ??= new JobFencedError(opts.jobId, opts.fence.term);
      }
      events.push({
        type: 'block',
        height: c.height,
        hash,
        state: outcome.ok ? 'SUCCEEDED' : 'FAILED',
        taskId: result?.taskId ?? error?.taskId ?? '',
        attempts: outcome.attempts,
        rows: outcome.ok ? rowsOf(outcome.result) : undefined,
        failureCode: outcome.ok ? '' : (result?.failureCode ?? error?.code ?? ''),
        failureMessage: outcome.ok ? '' : (result?.failureMessage ?? error?.message ?? ''),
        durationMs: opts.clock() - started,
      });
      tasks--;
      push(
        outcome.ok
          ? { type: 'applied', now: opts.clock(), seq: c.seq }
          : {
              type: 'failed',
              now: opts.clock(),
              seq: c.seq,
              message: result?.failureMessage ?? error?.message ?? '',
            },
      );
    })();
  };

  let reading = false;
  const startRead = (lo: number, hi: number): void => {
    reading = true;
    void (async () => {
      try {
        if (await state.stopRequested()) stopReason ??= 'requested';
        const view = await chain.read(lo, hi, opts.signal);
        if (view.head !== progress.head) {
          progress.head = view.head;
          const seen = { ...progress };
          void store(() => state.setSeen(seen));
        }
        push({ type: 'chain', now: opts.clock(), lo, hi, head: view.head, blocks: view.blocks });
      } catch (err) {
        storeError ??= err;
        notify();
      } finally {
        reading = false;
      }
    })();
  };

  const perform = (cmds: readonly FollowCommand[]): void => {
    for (const c of cmds) {
      switch (c.type) {
        case 'read':
          startRead(c.lo, c.hi);
          break;
        case 'run':
        case 'remove':
          // Stopping: the core's work stays undone; the store was not told of it, so nothing is lost.
          if (stopReason === undefined) startTask(c);
          break;
        case 'final': {
          const seen = { ...progress };
          void store(() => state.setFinal(c.cursor, c.hash, seen));
          break;
        }
        case 'reorg':
          progress.reorgs++;
          progress.deepestReorg = Math.max(progress.deepestReorg, c.depth);
          events.push({ ...c });
          {
            const seen = { ...progress };
            void store(() => state.setSeen(seen));
          }
          break;
        case 'stop':
          deep = c.error;
          stopReason = 'reorg-beyond-finality';
          break;
        default: {
          const _exhaustive: never = c;
          throw new Error(`unknown follow command ${JSON.stringify(_exhaustive)}`);
        }
      }
    }
  };

  try {
    perform(core.handle({ type: 'tick', now: opts.clock() }));
    for (;;) {
      while (inputs.length > 0) perform(core.handle(inputs.shift() as FollowInput));
      const snap = core.snapshot();
      if (snap.behind === 0 && tasks === 0 && behind && snap.head !== null) {
        behind = false;
        events.push({ type: 'caught-up', head: snap.head, cursor: snap.cursor });
      } else if (snap.behind > 0) behind = true;
      while (events.length > 0) yield events.shift() as FollowEvent;
      if (storeError !== undefined) throw storeError;
      if (opts.signal?.aborted) stopReason ??= 'cancelled';
      if (opts.stop?.aborted) stopReason ??= 'stop';
      if (stopReason !== undefined && tasks === 0 && !reading) break;
      if (stopReason !== undefined && inputs.length === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (inputs.length > 0) continue;
      const at = core.nextDeadline();
      const wait = new AbortController();
      const woken = new Promise<void>((resolve) => (wake = resolve));
      const timer =
        at === undefined ? woken : opts.sleep(Math.max(0, at - opts.clock()), wait.signal).catch(() => {});
      await Promise.race([woken, timer]);
      wait.abort();
      wake = undefined;
      if (inputs.length === 0 && stopReason === undefined)
        perform(core.handle({ type: 'tick', now: opts.clock() }));
    }
    await storeChain;
    if (storeError !== undefined) throw storeError;
    while (events.length > 0) yield events.shift() as FollowEvent;
    yield { type: 'stopped', reason: stopReason ?? 'stop', ...(deep ? { error: deep } : {}) };
  } finally {
    opts.stop?.removeEventListener('abort', onStop);
    opts.signal?.removeEventListener('abort', onStop);
  }
}
