// `blockx ingest … --follow` (docs/ingest.md § Following the head): the range up to the node's head minus
// the finality, then the head followed for as long as the command runs — new blocks ingested, reorgs healed,
// a reorg deeper than the finality refused.
//
// 1. The job id: the chain id, the storage (docs/backfill.md § Resuming: its identity) and the blocks
//    table, as `ig-…`: one follower per chain per database, whatever the node URL or --from. Its state (the
//    cursor: every height below it is stored) lives in the storage database
//    (src/services/follow/adapters/job-store.ts), so the same command on any machine resumes it.
// 2. Take the job's lease (src/cli/job-lease.ts); a second follower says who holds it and exits 1, or with
//    --wait-for-lock waits.
// 3. From the cursor to head − finality: the range, as `blockx ingest` runs one (tasks in parallel, bundled
//    when it is long, the journal under --state-dir); the cursor moves past it.
// 4. The follower (src/client/ingest-follow/ingest-follow-loop.ts) from the canonical blocks the store holds
//    below the cursor, until Ctrl-C, `blockx jobs stop ID`, a lost lease, or a reorg deeper than the finality
//    (exit 1, naming the height and both hashes).
import type { HeadAnnouncements } from '../../client/ingest-follow/new-heads.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { SourceConfig } from '../../kernel/config-types.js';
import type { RpcSourceSettings } from '../../services/chain-rpc/adapters/rpc-client.js';
import type { BackfillTemplate } from '../../client/backfill/plan.js';
import type { IngestFollowEvent } from '../../client/ingest-follow/ingest-follow-loop.js';
import type { TaskRunResult } from '../../client/types.js';
import { ChainRpcErrorCode } from '../../services/chain-rpc/errors.js';
import { JobFencedError } from '../../services/follow/core/errors.js';
import { EXIT, type CliIo } from '../io.js';
import { holdJobLease, type HeldJobLease } from '../job-lease.js';
import { WALL_CLOCK } from '../stop-signals.js';
import { connectJobClient, runBlockJob, type BlockJob, type BlockJobRunOptions } from './backfill.js';
import { oneLine } from './submit.js';

export interface IngestFollowCommandOptions {
  readonly kernel: Kernel;
  /** The RPC client's settings of the source (its URLs unmasked). */
  readonly settings: RpcSourceSettings;
  readonly source: SourceConfig;
  readonly maskedUrl: string;
  readonly chainId: number;
  readonly from: number;
  /** The node's head when the command started. */
  readonly head: number;
  /** The range's task template (`blockx ingest`'s, per block). */
  readonly template: BackfillTemplate;
  /** The range's bundles, when it runs bundled (docs/ingest.md § Bundles by default). */
  readonly split?: BlockJob['split'];
  readonly run: BlockJobRunOptions;
  readonly waitForLock: boolean;
}

/**
 * The range's reason to stop at a block whose Worker does not declare the task's source
 * (SOURCE_NOT_DECLARED, docs/ingest.md § Where the URL lives): every other block placed on that Worker
 * would fail the same way, so `blockx ingest` stops at the first with this one error (runBlockJob's stopOn).
 */
export function sourceMissing(result: TaskRunResult): string | undefined {
  const failure = result.pluginResults.find((r) => r.failureCode === ChainRpcErrorCode.SOURCE_NOT_DECLARED);
  if (failure === undefined) return undefined;
  const where = result.workerAddr === '' ? 'a Worker' : `the Worker at ${result.workerAddr}`;
  return `${where} cannot ingest: ${failure.failureMessage} (${ChainRpcErrorCode.SOURCE_NOT_DECLARED})`;
}

/** The job id of following `chainId` into the storage `storage` (its identity) and `blocksTable`. */
export async function ingestJobIdOf(storage: string, chainId: number, blocksTable: string): Promise<string> {
  const { createHash } = await import('node:crypto');
  const key = `ingest-follow/1 ${storage} ${chainId} ${blocksTable}`;
  return `ig-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
}

export async function ingestFollow(o: IngestFollowCommandOptions, io: CliIo): Promise<number> {
  const [
    { runIngestFollow, INGEST_FOLLOW_RETRY_DELAY_MS },
    { JobStore, reorgView },
    { StorageChainReader },
    { openStorage, maskStorageUrl, storageIdentity },
    { newRunId },
    { checkTaskRetryPolicy, DEFAULT_TASK_RETRY_BACKOFF },
    { RpcClient },
    { BlockFetcher },
  ] = await Promise.all([
    import('../../client/ingest-follow/ingest-follow-loop.js'),
    import('../../services/follow/adapters/job-store.js'),
    import('../../services/follow/adapters/chain-reader.js'),
    import('../../services/storage/open-storage.js'),
    import('../../client/backfill/journal.js'),
    import('../../client/task-retry.js'),
    import('../../services/chain-rpc/adapters/rpc-client.js'),
    import('../../services/chain-rpc/adapters/block-fetcher.js'),
  ]);
  const { kernel, chainId, source } = o;
  const config = kernel.config;
  const { finality, pollIntervalMs } = source;
  const writer = (o.template.resultHandler?.config ?? {}) as Record<string, unknown>;
  const tables = (writer.tables ?? {}) as { blocks?: string };
  const blocksTable = tables.blocks ?? 'blocks';
  const jobId = await ingestJobIdOf(
    storageIdentity(config.storage.url, config.baseDir),
    chainId,
    blocksTable,
  );
  const runId = newRunId();

  const client = await connectJobClient(kernel, o.run, 'ingest', io);
  if (typeof client === 'number') return client;
  const rpc = new RpcClient(o.settings);
  const fetcher = new BlockFetcher(rpc);
  const store = await JobStore.open(config.storage, config.baseDir);
  const chainDb = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  let lease: HeldJobLease | undefined;
  try {
    lease = await holdJobLease({
      config,
      store,
      jobId,
      runId,
      command: 'ingest',
      waitForLock: o.waitForLock,
      io,
    });
    if (lease === undefined) return EXIT.FAILED;
    // What the job row shows: the writer's config, which names its source and holds no key.
    const record = await store.ensure(jobId, {
      kind: 'ingest',
      template: writer,
      from: o.from,
      chainId,
      blocksTable,
      storage: maskStorageUrl(config.storage.url),
      finality,
      pollIntervalMs,
    });
    await store.update(jobId, { state: 'running', lastError: null });
    await store.clearStop(jobId);
    // For every Coordinator's dashboard, with etcd (docs/follow.md § Watching a job); not supervised.
    lease.publishStatus(chainDb, null);
    let cursor = Math.max(record.cursor, o.from);
    if (record.cursor > o.from) {
      io.stderr(`blockx ingest: job ${jobId} resumes at block ${record.cursor} (stored below it)\n`);
    }

    // 3. The range up to head − finality, in parallel; the follower takes over above it.
    const rangeTo = o.head - finality;
    if (cursor <= rangeTo) {
      const code = await runBlockJob({
        command: 'ingest',
        where: `ingest from ${o.maskedUrl}`,
        template: o.template,
        range: { from: cursor, to: rangeTo },
        per: 'block',
        ...(o.split !== undefined ? { split: o.split } : {}),
        run: o.run,
        kernel,
        io,
        stopOn: sourceMissing,
      });
      if (code !== EXIT.OK) {
        await store.update(jobId, { state: 'failed', lastError: `the range ${cursor}..${rangeTo} failed` });
        return code;
      }
      cursor = rangeTo + 1;
      await store.update(jobId, { cursor });
    }

    // 4. The follower, from the stored canonical chain below the cursor.
    const reader = new StorageChainReader(chainDb, { chainId, blocksTable });
    const lo = Math.max(o.from, cursor - 1 - finality);
    const stored = cursor - 1 >= lo ? (await reader.read(lo, cursor - 1)).blocks : [];
    const slotTtlMs = config.deployments[config.up.deployment]?.coordinator.slotTtlMs ?? 5_000;
    const policy = checkTaskRetryPolicy({ retries: o.run.retries, slotTtlMs, ...DEFAULT_TASK_RETRY_BACKOFF });
    io.stderr(
      `blockx ingest: following the head of chain ${chainId} as job ${jobId} from block ${cursor}` +
        ` (finality ${finality}, poll every ${pollIntervalMs} ms)\n`,
    );
    const { stop, cancel } = lease.signals;
    const counts = { blocks: 0, orphaned: 0, reorgs: 0, failed: 0, rows: 0 };
    let last: Extract<IngestFollowEvent, { type: 'stopped' }> | undefined;
    // New heads announced over the node's WebSocket, when the source has one: polling goes on beside it.
    const announcements =
      source.wsUrl === undefined ? undefined : await announcedHeads(source.wsUrl, pollIntervalMs, io);
    try {
      const events = runIngestFollow(
        {
          ...(announcements ? { announcements } : {}),
          head: async () => {
            const h = await fetcher.header('latest');
            if (h === null) throw new Error(`source ${o.settings.name}: the node has no latest block`);
            return h;
          },
          header: (n) => fetcher.header(n),
        },
        {
          setProgress: (p) =>
            store
              .update(jobId, {
                cursor: p.cursor,
                head: p.head,
                reorgs: p.reorgs,
                deepestReorg: p.deepestReorg,
              })
              .then(() => undefined),
          stopRequested: () => store.stopRequested(jobId),
        },
        client.batched,
        {
          jobId,
          runId,
          template: { chainId, writer: stripUnit(writer) },
          fence: lease.fence,
          from: o.from,
          finality,
          pollIntervalMs,
          retryDelayMs: INGEST_FOLLOW_RETRY_DELAY_MS,
          stored,
          seen: { reorgs: record.reorgs, deepestReorg: record.deepestReorg },
          policy,
          stopOn: sourceMissing,
          stop: stop.signal,
          signal: cancel.signal,
          ...WALL_CLOCK,
        },
      );
      for await (const e of events) {
        if (e.type === 'stopped') last = e;
        else count(e, counts);
        if (e.type === 'reorg') await store.recordReorg(jobId, reorgView(e, Date.now()));
        io.stdout(o.run.json === true ? `${JSON.stringify(e)}\n` : eventText(e, pollIntervalMs));
      }
    } catch (err) {
      if (!(err instanceof JobFencedError)) throw err;
      // A newer follower claimed the job: the store refused our write; a task in flight is cancelled.
      lease.markLost();
      io.stderr(`blockx ingest: ${err.message}; stopping\n`);
    } finally {
      announcements?.close();
      lease.signals.release();
    }
    // A reorg deeper than finality, or a failure of the job's (the source missing on a Worker).
    const failed = last?.reason === 'reorg-beyond-finality' || last?.reason === 'job-failure';
    const error = last?.error?.message ?? last?.failure ?? null;
    const lost = lease.lost();
    if (!lost) await store.update(jobId, { state: failed ? 'failed' : 'stopped', lastError: error });
    if (last?.reason === 'requested') await store.clearStop(jobId);
    const summary = { jobId, reason: lost ? 'lease-lost' : (last?.reason ?? 'stop'), ...counts, error };
    io.stdout(
      o.run.json === true
        ? `${JSON.stringify({ summary })}\n`
        : `ingest follow ${jobId} stopped (${summary.reason}): ${counts.blocks} block(s) ingested, ` +
            `${counts.orphaned} orphaned, ${counts.reorgs} reorg(s), ${counts.failed} failed attempt(s)\n`,
    );
    if (error !== null) io.stderr(`blockx ingest: ${error}\n`);
    return failed || lost ? EXIT.FAILED : EXIT.OK;
  } finally {
    await lease?.release();
    rpc.close();
    client.close();
    await chainDb.close();
    await store.close();
  }
}

/** The writer's config without the unit the range filled (block, bundle): the follower names its own. */
function stripUnit(writer: Record<string, unknown>): Record<string, unknown> {
  const { block: _b, bundle: _u, bundleSize: _s, ...rest } = writer;
  return rest;
}

function count(
  e: Exclude<IngestFollowEvent, { type: 'stopped' }>,
  c: { blocks: number; orphaned: number; reorgs: number; failed: number; rows: number },
): void {
  if (e.type === 'block') {
    c.blocks++;
    c.rows += e.rows;
    c.orphaned += e.orphaned;
  } else if (e.type === 'orphaned') c.orphaned += e.blocks.length;
  else if (e.type === 'reorg') c.reorgs++;
  else if (e.type === 'failed') c.failed++;
}

function eventText(e: IngestFollowEvent, pollIntervalMs: number): string {
  switch (e.type) {
    case 'block':
      return (
        `block ${e.height} SUCCEEDED ${e.hash} ${e.rows} rows` +
        (e.orphaned > 0 ? ` (${e.orphaned} block(s) marked non-canonical)` : '') +
        '\n'
      );
    case 'orphaned':
      return `orphaned ${e.blocks.map((b) => `${b.number}:${b.hash}`).join(', ')} (the chain got shorter)\n`;
    case 'reorg':
      return (
        `reorg: ${e.depth} block(s) above ${e.ancestor} replaced (tip ${e.oldTip} → ${e.newTip}); ` +
        `orphaned: ${e.orphans.map((b) => `${b.number}:${b.hash}`).join(', ')}\n`
      );
    case 'caught-up':
      return `caught up: head ${e.head} ${e.hash}; polling every ${pollIntervalMs} ms\n`;
    case 'failed':
      return `${e.command} FAILED ${e.code} ${oneLine(e.message) || '-'} (tried again after a pause)\n`;
    case 'stopped':
      return '';
    default: {
      const _exhaustive: never = e;
      throw new Error(`unknown ingest-follow event ${JSON.stringify(_exhaustive)}`);
    }
  }
}

/** The node's new heads over `wsUrl`, its state said on stderr (the URL masked: it may hold a key). */
async function announcedHeads(wsUrl: string, pollIntervalMs: number, io: CliIo): Promise<HeadAnnouncements> {
  const [{ subscribeNewHeads }, { maskRpcUrl }] = await Promise.all([
    import('../../client/ingest-follow/new-heads.js'),
    import('../../services/chain-rpc/url-mask.js'),
  ]);
  const shown = maskRpcUrl(wsUrl);
  // Said when it goes live and when it is lost, not at every try of a socket that stays down.
  let down = false;
  return subscribeNewHeads(wsUrl, {
    onState: (s) => {
      if (s.state === 'live') {
        down = false;
        io.stderr(`blockx ingest: new heads announced over ${shown} (eth_subscribe newHeads)\n`);
      } else if (!down) {
        down = true;
        io.stderr(
          `blockx ingest: no new heads over ${shown}: ${s.reason}; polling every ${pollIntervalMs} ms ` +
            `while the socket is tried again (after ${s.retryInMs} ms, then less often)\n`,
        );
      }
    },
  });
}
