// ChainIngestResultHandler: the writer of `blockx ingest` (docs/ingest.md). It reads one block (or every block
// of one bundle, as many at once as the source's limits allow) from an Ethereum JSON-RPC node (the task names
// the source; its URL is this Worker's own) — the block, its
// receipts and its traces, in one batch when the node allows — maps the answers to rows (./rpc-rows.ts) and
// replaces those heights' rows in the four chain tables in one transaction: a block is written whole or not
// at all, and running the same task again leaves the same rows. With `follow` it writes as the head
// follower needs (./follow-write.ts): one block by hash, orphans marked non-canonical. Its builder
// (ChainIngestCallConfig) calls no function: the work of an ingestion task is IO, so it lives here, where the
// write is. The config was validated against ../schema.json (defaults filled) before it gets here.
import { defineWriter, type WriteFence, type WriterResult } from 'blockx/plugin';
import { bundleRange, declareProcessSources, sharedBlockFetcher, type TaskSource } from 'blockx/ingest';
import { rowsOfBlock } from './rpc-rows.js';
import { followWrite, type OrphanBlock } from './follow-write.js';

export { ChainIngestError, ChainIngestErrorCode } from './errors.js';
export { rowsOfBlock, type BlockTableRows } from './rpc-rows.js';

export interface ChainIngestResultHandlerConfig {
  /**
   * The source's name and request limits; the URL is this Worker's (its config's `sources.<name>` or
   * BLOCKX_SOURCE_<NAME>_RPC_URL), unless the task carries keyless `urls` (`blockx ingest --rpc URL`).
   */
  readonly source: TaskSource;
  readonly chainId: number;
  /** One block, or `bundle` with `bundleSize` (the schema allows exactly one of the two). */
  readonly block?: { readonly number: number };
  readonly bundle?: number;
  readonly bundleSize?: number;
  readonly traces: boolean;
  /** Write as the head follower does (./follow-write.ts): replace by hash, keep other blocks' rows. */
  readonly follow?: boolean;
  /** With follow and block: the block's parent must be this hash, else CHAIN_MOVED and nothing written. */
  readonly parentHash?: string;
  /** With follow: blocks that left the node's chain, marked non-canonical in the same transaction. */
  readonly orphans?: readonly OrphanBlock[];
  /** A job's runner and term: the write commits only while the term is the job's newest (follow sets it). */
  readonly fence?: WriteFence;
  readonly tables: {
    readonly blocks: string;
    readonly transactions: string;
    readonly events: string;
    readonly traces: string;
  };
}

export const PLUGIN_NAME = 'ChainIngestResultHandler';

const chainIngestWriter = defineWriter<ChainIngestResultHandlerConfig>({
  name: PLUGIN_NAME,
  // The process's own sources: where a task's source name finds its URL (docs/ingest.md § Where the URL
  // lives). Sources are not reloaded with the config; a change waits for a restart.
  apply(hooks) {
    hooks.configLoaded.tap(PLUGIN_NAME, (config) => {
      const { sources } = config as { sources?: Parameters<typeof declareProcessSources>[0] };
      declareProcessSources(sources ?? {});
    });
  },
  async execute(taskCtx, config, _outputs, io): Promise<WriterResult[]> {
    const { chainId, tables } = config;
    if (config.follow === true) return [await followWrite(taskCtx, config, io)];
    const range = rangeOf(config);
    const fetcher = sharedBlockFetcher(config.source);
    const noticesBefore = fetcher.notices.length;
    const heights = Array.from({ length: range.to - range.from + 1 }, (_, i) => range.from + i);
    // All at once: the shared client's scheduler bounds what is in flight. Errors of the access layer carry
    // their own code and `retryable`; they fail the task before any write.
    const raws = await Promise.all(heights.map((n) => fetcher.fetch(n, { traces: config.traces, chainId })));
    taskCtx.signal.throwIfAborted();
    const perBlock = raws.map((raw) => rowsOfBlock(raw, chainId));
    const rows = {
      blocks: perBlock.flatMap((r) => r.blocks),
      transactions: perBlock.flatMap((r) => r.transactions),
      events: perBlock.flatMap((r) => r.events),
    };
    // Traces are written only when every block has them (a node that serves none is skipped whole).
    const traces = perBlock.every((r) => r.traces !== undefined)
      ? perBlock.flatMap((r) => r.traces ?? [])
      : undefined;
    const at = { ...range, chainId };
    await io.transaction(async (tx) => {
      if (config.fence !== undefined) await tx.checkFence(config.fence);
      await tx.replaceBlockRangeRows(tables.blocks, at, rows.blocks);
      await tx.replaceBlockRangeRows(tables.transactions, at, rows.transactions);
      await tx.replaceBlockRangeRows(tables.events, at, rows.events);
      if (traces !== undefined) await tx.replaceBlockRangeRows(tables.traces, at, traces);
    });
    const counts = {
      blocks: rows.blocks.length,
      transactions: rows.transactions.length,
      events: rows.events.length,
      traces: traces?.length ?? null,
    };
    return [
      {
        pluginName: PLUGIN_NAME,
        success: true,
        result: {
          blocks: { chainId, from: range.from, to: range.to },
          // The total, as every block writer reports it (blockx backfill and ingest sum it); then per table.
          rows: counts.blocks + counts.transactions + counts.events + (counts.traces ?? 0),
          tables: counts,
          ...(fetcher.notices.length > noticesBefore
            ? { notices: fetcher.notices.slice(noticesBefore) }
            : {}),
        },
      },
    ];
  },
});

/** The heights a task covers: its block, or its bundle (docs/backfill.md: bundle 0 is genesis alone). */
function rangeOf(config: ChainIngestResultHandlerConfig): { from: number; to: number } {
  if (config.block !== undefined) return { from: config.block.number, to: config.block.number };
  const { first, last } = bundleRange(config.bundle as number, config.bundleSize as number);
  return { from: first, to: last };
}

export default chainIngestWriter;
