// The ingest-follow driver (docs/ingest.md § Following the head): runs the ingest-follow core
// (src/services/ingest-follow/core/) against real IO — the node's head and headers through the RPC access
// layer, each write as an ingestion task on the cluster (builder ChainIngestCallConfig, writer
// ChainIngestResultHandler with `follow`) with task-level retries, the job's cursor in its store — and
// reports what happens as an async iterable of events.
//
// The core has one command outstanding at a time; the driver performs it, feeds the answer back, and
// sleeps until the core's next deadline when nothing is outstanding. A write's outcome is recorded in the
// store (cursor = the tip + 1) before the core hears of it; a driver that dies between the two leaves a
// cursor one write behind, and the next one reads the stored chain from the blocks table and redoes at
// most that write (idempotent).
//
// Stopping: `stop` (Ctrl-C, `blockx jobs stop`, a lost lease) lets the command in flight finish and stops
// before the next; `signal` cancels a task in flight. A reorg deeper than finality stops with the core's
// error; nothing is written for it.
import {
  IngestFollowCore,
  type ChainBlock,
  type IngestFollowCommand,
  type IngestFollowInput,
} from '../../services/ingest-follow/core/ingest-follow-core.js';
import type { IngestReorgBeyondFinalityError } from '../../services/ingest-follow/core/errors.js';
import { JobFencedError } from '../../services/follow/core/errors.js';
import { failedWith, runWithRetries, type TaskRunner } from '../run-with-retries.js';
import type { TaskRetryPolicy } from '../task-retry.js';
import type { HeadAnnouncements } from './new-heads.js';
import { FENCED_CODE, type WriteFence } from '../../contracts/write-fence.js';
import type { ClientTaskInput, TaskRunResult } from '../types.js';

/** The failure code of a follow write whose block has another parent than the one named. */
export const CHAIN_MOVED = 'CHAIN_MOVED';

/** Wait before a failed poll, header or write is tried again (docs/ingest.md § Following the head). */
export const INGEST_FOLLOW_RETRY_DELAY_MS = 2000;

export interface IngestFollowNodePort {
  /** The node's latest block. */
  head(): Promise<ChainBlock>;
  /** The node's block at `number`, or null when it has none. */
  header(number: number): Promise<ChainBlock | null>;
  /** New heads the node announces (./new-heads.ts): a wait between polls ends at an announcement. */
  readonly announcements?: Pick<HeadAnnouncements, 'wait'>;
}

export interface IngestFollowStatePort {
  /** Records where the job is: every height below `cursor` is stored; the head and reorgs seen. */
  setProgress(progress: IngestFollowProgress): Promise<void>;
  /** Whether someone asked the job to stop (`blockx jobs stop`); asked once per poll. */
  stopRequested(): Promise<boolean>;
}

export interface IngestFollowProgress {
  readonly cursor: number;
  readonly head: number | null;
  readonly reorgs: number;
  readonly deepestReorg: number;
}

/** What a write task carries besides its heights: the writer's source, chain and tables. */
export interface IngestWriteTemplate {
  readonly chainId: number;
  /** The writer's config without block, follow, parentHash and orphans (source, traces, tables). */
  readonly writer: Readonly<Record<string, unknown>>;
  readonly taskTimeoutMs?: number;
}

export interface IngestFollowLoopOptions {
  readonly jobId: string;
  /** A tag drawn per driver: task ids of this driver never meet a Worker's retained result of another. */
  readonly runId: string;
  readonly template: IngestWriteTemplate;
  /** The follower's job and term, carried by each write task (docs/follow.md § Fencing). */
  readonly fence?: WriteFence;
  readonly from: number;
  readonly finality: number;
  readonly pollIntervalMs: number;
  readonly retryDelayMs: number;
  /** The canonical blocks the store holds below the job's cursor (the window the core resumes from). */
  readonly stored: readonly ChainBlock[];
  /** What the job's earlier runners saw (added to, for the store). */
  readonly seen: { readonly reorgs: number; readonly deepestReorg: number };
  readonly policy: TaskRetryPolicy;
  /**
   * A write failure that is the job's, not the block's (`blockx ingest`'s source missing on a Worker): the
   * reason to stop, or undefined. The follower then stops with it (`job-failure`) instead of trying again
   * every retryDelayMs. Default: none.
   */
  readonly stopOn?: (result: TaskRunResult) => string | undefined;
  readonly stop?: AbortSignal;
  readonly signal?: AbortSignal;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
  readonly clock: () => number;
}

export type IngestFollowEvent =
  | {
      readonly type: 'block';
      readonly height: number;
      readonly hash: string;
      readonly parentHash: string;
      /** Blocks this write marked non-canonical. */
      readonly orphaned: number;
      readonly rows: number;
      readonly taskId: string;
      readonly attempts: number;
      readonly durationMs: number;
    }
  /** The node's chain got shorter: these stored blocks were marked non-canonical, nothing written. */
  | { readonly type: 'orphaned'; readonly blocks: readonly ChainBlock[]; readonly taskId: string }
  | {
      readonly type: 'reorg';
      /** The common ancestor: the highest height where the store and the node agree. */
      readonly ancestor: number;
      /** The first height replaced. */
      readonly height: number;
      readonly depth: number;
      readonly oldTip: string;
      readonly newTip: string;
      readonly orphans: readonly ChainBlock[];
    }
  | { readonly type: 'caught-up'; readonly head: number; readonly hash: string }
  /** A poll, header or write failed after its retries; the core polls again after retryDelayMs. */
  | { readonly type: 'failed'; readonly command: string; readonly code: string; readonly message: string }
  | {
      readonly type: 'stopped';
      readonly reason: 'stop' | 'requested' | 'cancelled' | 'reorg-beyond-finality' | 'job-failure';
      readonly error?: IngestReorgBeyondFinalityError;
      /** With `job-failure`: stopOn's reason. */
      readonly failure?: string;
    };

type WriteCommand = Extract<IngestFollowCommand, { type: 'ingest' | 'orphan' }>;

/** The ingestion task of a follow write. */
export function ingestFollowTaskOf(
  template: IngestWriteTemplate,
  c: WriteCommand,
  fence?: WriteFence,
): ClientTaskInput {
  const orphans = c.orphans.map((b) => ({ number: b.number, hash: b.hash }));
  const height = c.type === 'ingest' ? c.height : (orphans[0]?.number ?? 0);
  return {
    functionCallConfig: {
      type: 'ChainIngestCallConfig',
      config: { chainId: template.chainId, block: { number: height } },
    },
    resultHandler: {
      type: 'ChainIngestResultHandler',
      config: {
        ...template.writer,
        chainId: template.chainId,
        follow: true,
        ...(c.type === 'ingest' ? { block: { number: c.height } } : {}),
        ...(c.type === 'ingest' && c.parentHash !== null ? { parentHash: c.parentHash } : {}),
        ...(orphans.length > 0 ? { orphans } : {}),
        ...(fence !== undefined ? { fence } : {}),
      },
    },
    ...(template.taskTimeoutMs ? { taskTimeoutMs: template.taskTimeoutMs } : {}),
  };
}

/** What a follow write reported: the block it wrote, the rows, the blocks it marked. */
function writtenOf(result: TaskRunResult): { block?: ChainBlock; rows: number; orphaned: number } {
  for (const r of result.pluginResults) {
    const reported = r.result as { written?: ChainBlock; rows?: unknown; orphaned?: unknown } | undefined;
    if (reported === undefined || typeof reported.rows !== 'number') continue;
    return {
      ...(reported.written !== undefined ? { block: reported.written } : {}),
      rows: reported.rows,
      orphaned: typeof reported.orphaned === 'number' ? reported.orphaned : 0,
    };
  }
  throw new Error(`task ${result.taskId}: the writer reported no follow write`);
}

export async function* runIngestFollow(
  node: IngestFollowNodePort,
  state: IngestFollowStatePort,
  runner: TaskRunner,
  opts: IngestFollowLoopOptions,
): AsyncGenerator<IngestFollowEvent> {
  const core = new IngestFollowCore({
    from: opts.from,
    finality: opts.finality,
    pollIntervalMs: opts.pollIntervalMs,
    retryDelayMs: opts.retryDelayMs,
    now: opts.clock(),
    stored: opts.stored,
  });
  const progress = {
    head: null as number | null,
    reorgs: opts.seen.reorgs,
    deepestReorg: opts.seen.deepestReorg,
  };
  const cursor = (): number => (core.snapshot().tip?.number ?? opts.from - 1) + 1;
  let seq = 0;
  let outstanding: IngestFollowCommand | undefined;
  let stopReason: Extract<IngestFollowEvent, { type: 'stopped' }>['reason'] | undefined;
  let deep: IngestReorgBeyondFinalityError | undefined;
  let failure: string | undefined;
  const events: IngestFollowEvent[] = [];

  const take = (cmds: readonly IngestFollowCommand[]): void => {
    for (const c of cmds) {
      switch (c.type) {
        case 'poll-head':
        case 'fetch-header':
        case 'ingest':
        case 'orphan':
          outstanding = c;
          break;
        case 'reorg':
          progress.reorgs++;
          progress.deepestReorg = Math.max(progress.deepestReorg, c.depth);
          events.push({
            type: 'reorg',
            ancestor: c.ancestor,
            height: c.ancestor + 1,
            depth: c.depth,
            oldTip: c.oldTip,
            newTip: c.newTip,
            orphans: c.orphans,
          });
          break;
        case 'caught-up':
          events.push({ type: 'caught-up', head: c.head, hash: c.hash });
          break;
        case 'stop':
          deep = c.error;
          stopReason = 'reorg-beyond-finality';
          break;
        default: {
          const _exhaustive: never = c;
          throw new Error(`unknown ingest-follow command ${JSON.stringify(_exhaustive)}`);
        }
      }
    }
  };

  /** Performs one command; the answer for the core. */
  const perform = async (c: IngestFollowCommand): Promise<IngestFollowInput> => {
    const failed = (code: string, message: string): IngestFollowInput => {
      events.push({ type: 'failed', command: c.type, code, message });
      return { type: 'failed', now: opts.clock(), message };
    };
    try {
      switch (c.type) {
        case 'poll-head': {
          if (await state.stopRequested()) stopReason ??= 'requested';
          const block = await node.head();
          if (block.number !== progress.head) {
            progress.head = block.number;
            await state.setProgress({ cursor: cursor(), ...progress });
          }
          return { type: 'head', now: opts.clock(), block };
        }
        case 'fetch-header':
          return { type: 'header', now: opts.clock(), block: await node.header(c.number) };
        case 'ingest':
        case 'orphan':
          return await write(c);
        default:
          throw new Error(`${c.type} is not performed`);
      }
    } catch (err) {
      // The job store refused a write (a newer follower claimed the job): not a failure to retry.
      if (err instanceof JobFencedError) throw err;
      const e = err as { code?: unknown; message?: unknown };
      return failed(typeof e.code === 'string' ? e.code : 'ERROR', String(e.message ?? err));
    }
  };

  const write = async (c: WriteCommand): Promise<IngestFollowInput> => {
    const started = opts.clock();
    const n = ++seq;
    const label = c.type === 'ingest' ? `b${c.height}` : 'orphan';
    const outcome = await runWithRetries(runner, ingestFollowTaskOf(opts.template, c, opts.fence), {
      policy: opts.policy,
      taskIdOf: (attempt) => `${opts.jobId}-${opts.runId}-${label}-${n}-${attempt}`,
      sleep: opts.sleep,
      random: opts.random,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    if (!outcome.ok) {
      if (failedWith(outcome.result, CHAIN_MOVED)) return { type: 'moved', now: opts.clock() };
      // The writer refused the write: a newer follower claimed the job (docs/follow.md § Fencing).
      if (opts.fence !== undefined && failedWith(outcome.result, FENCED_CODE)) {
        throw new JobFencedError(opts.jobId, opts.fence.term);
      }
      const jobFailure = outcome.result === undefined ? undefined : opts.stopOn?.(outcome.result);
      if (jobFailure !== undefined) {
        failure ??= jobFailure;
        stopReason ??= 'job-failure';
      }
      const code = outcome.result?.failureCode || outcome.error?.code || 'FAILED';
      const message = outcome.result?.failureMessage ?? outcome.error?.message ?? '';
      events.push({ type: 'failed', command: c.type, code, message });
      return { type: 'failed', now: opts.clock(), message };
    }
    const w = writtenOf(outcome.result);
    const tip =
      w.block?.number ?? (c.type === 'orphan' ? Math.min(...c.orphans.map((o) => o.number)) - 1 : 0);
    await state.setProgress({ cursor: tip + 1, ...progress });
    if (w.block !== undefined) {
      events.push({
        type: 'block',
        height: w.block.number,
        hash: w.block.hash,
        parentHash: w.block.parentHash,
        orphaned: w.orphaned,
        rows: w.rows,
        taskId: outcome.result.taskId,
        attempts: outcome.attempts,
        durationMs: opts.clock() - started,
      });
    } else events.push({ type: 'orphaned', blocks: c.orphans, taskId: outcome.result.taskId });
    return w.block !== undefined
      ? { type: 'written', now: opts.clock(), block: w.block }
      : { type: 'written', now: opts.clock() };
  };

  take(core.handle({ type: 'tick', now: opts.clock() }));
  for (;;) {
    while (events.length > 0) yield events.shift() as IngestFollowEvent;
    if (opts.signal?.aborted) stopReason ??= 'cancelled';
    if (opts.stop?.aborted) stopReason ??= 'stop';
    if (stopReason !== undefined) break;
    const c = outstanding;
    if (c !== undefined) {
      outstanding = undefined;
      const answer = await perform(c);
      // A stop asked during a poll: the poll's answer is dropped, nothing more is started.
      if (stopReason === undefined || c.type === 'ingest' || c.type === 'orphan') take(core.handle(answer));
      continue;
    }
    const at = core.nextDeadline();
    if (at === undefined) throw new Error('the ingest-follow core awaits nothing and has no deadline');
    const wait = Math.max(0, at - opts.clock());
    // With announcements the wait ends at the first new head (or one announced during the last command).
    const announced = node.announcements ? await node.announcements.wait(wait, opts.stop) : false;
    if (!node.announcements && wait > 0) await opts.sleep(wait, opts.stop).catch(() => {});
    if (opts.stop?.aborted) continue;
    take(core.handle({ type: announced ? 'announced' : 'tick', now: opts.clock() }));
  }
  while (events.length > 0) yield events.shift() as IngestFollowEvent;
  yield {
    type: 'stopped',
    reason: stopReason,
    ...(deep ? { error: deep } : {}),
    ...(failure === undefined ? {} : { failure }),
  };
}
