// `blockx backfill TEMPLATE --from N [--to M] --follow` (docs/follow.md): the range, then the output kept
// equal to the function over the canonical chain of the chain tables, for as long as the command runs.
//
// 1. The job id: the backfill's (template, mode, storage) with the first block, as `fl-…`; its state lives
//    in the storage database (src/services/follow/adapters/job-store.ts), so the same command on any
//    machine that reaches the database resumes it.
// 2. Take the job's lease (one runner per job); a second runner says who holds it and exits 1, or with
//    --wait-for-lock waits until it is free.
// 3. Drive the follow core (src/client/backfill/follow-loop.ts) until Ctrl-C, `blockx jobs stop ID`, or a
//    reorg deeper than finality (exit 1, naming the height and both hashes).
import { setMaxListeners } from 'node:events';
import type { BlockxConfig } from '../../kernel/config-types.js';
import type { BlockxClient } from '../../client/client.js';
import type { BackfillTemplate } from '../../client/backfill/plan.js';
import type { FollowEvent } from '../../client/backfill/follow-loop.js';
import { JobFencedError } from '../../services/follow/core/errors.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import type { FollowObserver, RunHooks, RunSignals } from '../job-supervisor.js';
import { holdJobLease, type HeldJobLease } from '../job-lease.js';
import { WALL_CLOCK, type StopSignals } from '../stop-signals.js';
import { oneLine } from './submit.js';

export interface FollowCommandOptions {
  readonly template: BackfillTemplate;
  /** The backfill job id (template, mode, storage): the follow job's id derives from it. */
  readonly backfillJobId: string;
  readonly from: number;
  readonly concurrency: number;
  readonly retries: number;
  readonly json: boolean;
  readonly finality?: string;
  readonly pollInterval?: string;
  readonly waitForLock: boolean;
  readonly config: BlockxConfig;
  /** A supervisor's stop signals and observer (src/cli/job-supervisor.ts); without them, SIGINT / SIGTERM. */
  readonly hooks?: RunHooks;
}

export async function followJobIdOf(backfillJobId: string, from: number): Promise<string> {
  const { createHash } = await import('node:crypto');
  return `fl-${createHash('sha256').update(`follow/1 ${backfillJobId} ${from}`).digest('hex').slice(0, 12)}`;
}

function nonNegative(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (text.trim() === '' || !Number.isSafeInteger(n) || n < 0) {
    throw new UsageError(`${name} must be an integer ≥ 0, got ${text}`);
  }
  return n;
}

/** The chain the template reads: its builder's chainId and blocksTable (BlockTableCallConfig's fields). */
function chainOf(template: BackfillTemplate): { chainId: number; blocksTable: string } {
  const config = template.functionCallConfig.config as Record<string, unknown>;
  if (typeof config.chainId !== 'number') {
    throw new UsageError(
      `--follow needs a builder that names its chain (chainId), such as BlockTableCallConfig; ` +
        `${template.functionCallConfig.type} has none`,
    );
  }
  if (template.resultHandler == null) {
    throw new UsageError('--follow needs a template with a block writer (resultHandler) to keep current');
  }
  return {
    chainId: config.chainId,
    blocksTable: typeof config.blocksTable === 'string' ? config.blocksTable : 'blocks',
  };
}

export async function followJob(client: BlockxClient, o: FollowCommandOptions, io: CliIo): Promise<number> {
  const [
    { FOLLOW_DEFAULTS, runFollow },
    { JobStore, reorgView },
    { StorageChainReader },
    { openStorage, maskStorageUrl },
    { newRunId },
    { checkTaskRetryPolicy, DEFAULT_TASK_RETRY_BACKOFF },
  ] = await Promise.all([
    import('../../client/backfill/follow-loop.js'),
    import('../../services/follow/adapters/job-store.js'),
    import('../../services/follow/adapters/chain-reader.js'),
    import('../../services/storage/open-storage.js'),
    import('../../client/backfill/journal.js'),
    import('../../client/task-retry.js'),
  ]);
  const finality = nonNegative('--finality', o.finality, FOLLOW_DEFAULTS.finality);
  const pollIntervalMs = nonNegative('--poll-interval', o.pollInterval, FOLLOW_DEFAULTS.pollIntervalMs);
  const { chainId, blocksTable } = chainOf(o.template);
  const jobId = await followJobIdOf(o.backfillJobId, o.from);
  const { config } = o;
  const runId = newRunId();

  const store = await JobStore.open(config.storage, config.baseDir);
  const chainDb = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  let held: HeldJobLease | undefined;
  try {
    const { hooks } = o;
    held = await holdJobLease({
      config,
      store,
      jobId,
      runId,
      command: 'backfill',
      waitForLock: o.waitForLock,
      io,
      onHeld: (by) => hooks?.observer?.leaseHeld?.(jobId, by),
      ...(hooks ? { signals: () => followSignals(hooks.signals) } : {}),
    });
    if (held === undefined) return EXIT.FAILED;
    const lease = held;
    const { stop, cancel } = lease.signals;
    const observer: FollowObserver = o.hooks?.observer ?? {};
    observer.following?.(jobId);
    const spec = {
      kind: 'follow' as const,
      template: o.template,
      from: o.from,
      chainId,
      blocksTable,
      storage: maskStorageUrl(config.storage.url),
      finality,
      pollIntervalMs,
    };
    const record = await store.ensure(jobId, spec);
    await store.update(jobId, { state: 'running', lastError: null });
    await store.clearStop(jobId);
    // For every Coordinator's dashboard, with etcd (docs/follow.md § Watching a job).
    lease.publishStatus(chainDb, o.hooks?.restarts ?? null);
    const applied = await store.applied(jobId);
    const resumed = record.cursor > o.from;
    const reader = new StorageChainReader(chainDb, { chainId, blocksTable });
    const slotTtlMs = config.deployments[config.up.deployment]?.coordinator.slotTtlMs ?? 5_000;
    const policy = checkTaskRetryPolicy({ retries: o.retries, slotTtlMs, ...DEFAULT_TASK_RETRY_BACKOFF });
    io.stderr(
      `blockx backfill: following as job ${jobId} from block ${resumed ? record.cursor : o.from}` +
        ` (chain ${chainId}, finality ${finality}, poll every ${pollIntervalMs} ms)\n`,
    );
    // What this runner saw, added to what the job's earlier runners recorded.
    const totals = (seen: { head: number | null; reorgs: number; deepestReorg: number }) => ({
      head: seen.head,
      reorgs: record.reorgs + seen.reorgs,
      deepestReorg: Math.max(record.deepestReorg, seen.deepestReorg),
    });
    const counts = { succeeded: 0, failed: 0, removed: 0, reorgs: 0, rows: 0 };
    let last: Extract<FollowEvent, { type: 'stopped' }> | undefined;
    try {
      const events = runFollow(
        { read: (lo, hi, signal) => reader.read(lo, hi, signal) },
        {
          setApplied: (h, hash) => store.setApplied(jobId, h, hash),
          setFinal: (cursor, hash, seen) => store.setFinal(jobId, cursor, hash, totals(seen)),
          setSeen: (seen) => store.update(jobId, totals(seen)).then(() => undefined),
          stopRequested: () => store.stopRequested(jobId),
        },
        client.batched,
        {
          jobId,
          runId,
          template: o.template,
          fence: lease.fence,
          from: o.from,
          finality,
          pollIntervalMs,
          retryDelayMs: FOLLOW_DEFAULTS.retryDelayMs,
          pageSize: FOLLOW_DEFAULTS.pageSize,
          concurrency: o.concurrency,
          policy,
          ...(resumed
            ? { resume: { cursor: record.cursor, finalHash: record.finalHash, applied } }
            : { resume: { cursor: o.from, applied } }),
          stop: stop.signal,
          signal: cancel.signal,
          ...WALL_CLOCK,
        },
      );
      for await (const e of events) {
        if (e.type === 'stopped') last = e;
        else count(e, counts);
        if (e.type === 'reorg') await store.recordReorg(jobId, reorgView(e, Date.now()));
        observer.event?.(jobId, e);
        io.stdout(o.json ? `${JSON.stringify(e)}\n` : eventText(e));
      }
    } catch (err) {
      if (!(err instanceof JobFencedError)) throw err;
      // A newer runner claimed the job: its state refused our write; our tasks in flight are cancelled.
      lease.markLost();
      io.stderr(`blockx backfill: ${err.message}; stopping\n`);
    } finally {
      lease.signals.release();
    }
    const lostLease = lease.lost();
    const failed = last?.reason === 'reorg-beyond-finality';
    const error = last?.error?.message ?? null;
    if (!lostLease) {
      await store.update(jobId, {
        state: failed ? 'failed' : 'stopped',
        lastError: error,
        reorgs: record.reorgs + counts.reorgs,
      });
    }
    if (last?.reason === 'requested') await store.clearStop(jobId);
    const summary = { jobId, reason: lostLease ? 'lease-lost' : (last?.reason ?? 'stop'), ...counts, error };
    io.stdout(
      o.json
        ? `${JSON.stringify({ summary })}\n`
        : `follow ${jobId} stopped (${summary.reason}): ${counts.succeeded} block(s) run, ` +
            `${counts.removed} removed, ${counts.failed} failed, ${counts.reorgs} reorg(s), ${counts.rows} rows\n`,
    );
    if (error !== null) io.stderr(`blockx backfill: ${error}\n`);
    return failed || lostLease ? EXIT.FAILED : EXIT.OK;
  } finally {
    await held?.release();
    await chainDb.close();
    await store.close();
  }
}

/**
 * This run's stop and cancel, aborted when the supervisor's are. Controllers of its own: a lost lease
 * stops the run, not the supervisor, which starts it again.
 */
function followSignals(outer: RunSignals): StopSignals {
  const stop = new AbortController();
  const cancel = new AbortController();
  setMaxListeners(0, stop.signal, cancel.signal); // every task in flight listens (listenForStop says why)
  const onStop = (): void => stop.abort();
  const onCancel = (): void => cancel.abort();
  if (outer.stop.aborted) stop.abort();
  if (outer.cancel.aborted) cancel.abort();
  outer.stop.addEventListener('abort', onStop, { once: true });
  outer.cancel.addEventListener('abort', onCancel, { once: true });
  return {
    stop,
    cancel,
    release: () => {
      outer.stop.removeEventListener('abort', onStop);
      outer.cancel.removeEventListener('abort', onCancel);
    },
  };
}

function count(
  e: Exclude<FollowEvent, { type: 'stopped' }>,
  c: { succeeded: number; failed: number; removed: number; reorgs: number; rows: number },
): void {
  if (e.type === 'reorg') c.reorgs++;
  if (e.type !== 'block') return;
  if (e.state === 'FAILED') c.failed++;
  else if (e.hash === null) c.removed++;
  else c.succeeded++;
  c.rows += e.rows ?? 0;
}

function eventText(e: FollowEvent): string {
  switch (e.type) {
    case 'block':
      if (e.state === 'FAILED') {
        return `block ${e.height} FAILED ${e.failureCode} ${oneLine(e.failureMessage) || '-'} (${e.attempts} attempt(s); tried again later)\n`;
      }
      return e.hash === null
        ? `block ${e.height} REMOVED (no canonical block any more)\n`
        : `block ${e.height} SUCCEEDED ${e.hash}${e.rows === undefined ? '' : ` ${e.rows} rows`}\n`;
    case 'reorg':
      return `reorg: ${e.depth} block(s) above ${e.ancestor} replaced (tip ${e.oldTip} → ${e.newTip ?? 'none'})\n`;
    case 'caught-up':
      return `caught up: head ${e.head ?? '-'}, final below ${e.cursor}; polling\n`;
    case 'stopped':
      return '';
    default: {
      const _exhaustive: never = e;
      throw new Error(`unknown follow event ${JSON.stringify(_exhaustive)}`);
    }
  }
}
