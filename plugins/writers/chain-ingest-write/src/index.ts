// ChainIngestResultHandler: the writer of `blockx ingest` (docs/ingest.md). It reads one block from an Ethereum
// JSON-RPC node — the block, its receipts and its traces, in one batch when the node allows — maps the answers
// to rows (./rpc-rows.ts) and replaces that height's rows in the four chain tables in one transaction: a
// block is written whole or not at all, and running the same task again leaves the same rows. Its builder
// (ChainIngestCallConfig) calls no function: the work of an ingestion task is IO, so it lives here, where the
// write is. The config was validated against ../schema.json (defaults filled) before it gets here.
import { defineWriter, type WriterResult } from '../../../../src/plugin.js';
import type { RpcSourceSettings } from '../../../../src/services/chain-rpc/adapters/rpc-client.js';
import { sharedBlockFetcher } from '../../../../src/services/chain-rpc/adapters/shared-clients.js';
import { rowsOfBlock } from './rpc-rows.js';

export { ChainIngestError, ChainIngestErrorCode } from './errors.js';
export { rowsOfBlock, type BlockTableRows } from './rpc-rows.js';

interface SourceConfig extends Omit<RpcSourceSettings, 'urls'> {
  readonly urls: readonly string[];
}

export interface ChainIngestResultHandlerConfig {
  readonly source: SourceConfig;
  readonly chainId: number;
  readonly block: { readonly number: number };
  readonly traces: boolean;
  readonly tables: {
    readonly blocks: string;
    readonly transactions: string;
    readonly events: string;
    readonly traces: string;
  };
}

const PLUGIN_NAME = 'ChainIngestResultHandler';

const chainIngestWriter = defineWriter<ChainIngestResultHandlerConfig>({
  name: PLUGIN_NAME,
  async execute(taskCtx, config, _outputs, io): Promise<WriterResult[]> {
    const { chainId, tables } = config;
    const number = config.block.number;
    const fetcher = sharedBlockFetcher(config.source);
    const noticesBefore = fetcher.notices.length;
    // Errors of the access layer carry their own code and `retryable`; they fail the task before any write.
    const raw = await fetcher.fetch(number, { traces: config.traces, chainId });
    taskCtx.signal.throwIfAborted();
    const rows = rowsOfBlock(raw, chainId);
    const at = { number, chainId };
    await io.transaction(async (tx) => {
      await tx.replaceBlockRows(tables.blocks, at, rows.blocks);
      await tx.replaceBlockRows(tables.transactions, at, rows.transactions);
      await tx.replaceBlockRows(tables.events, at, rows.events);
      if (rows.traces !== undefined) await tx.replaceBlockRows(tables.traces, at, rows.traces);
    });
    return [
      {
        pluginName: PLUGIN_NAME,
        success: true,
        result: {
          block: { chainId, number, hash: rows.blocks[0]?.hash },
          // The total, as every block writer reports it (blockx backfill and ingest sum it); then per table.
          rows:
            rows.blocks.length + rows.transactions.length + rows.events.length + (rows.traces?.length ?? 0),
          tables: {
            blocks: rows.blocks.length,
            transactions: rows.transactions.length,
            events: rows.events.length,
            traces: rows.traces?.length ?? null,
          },
          ...(fetcher.notices.length > noticesBefore
            ? { notices: fetcher.notices.slice(noticesBefore) }
            : {}),
        },
      },
    ];
  },
});

export default chainIngestWriter;
