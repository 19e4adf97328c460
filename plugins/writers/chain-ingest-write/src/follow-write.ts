// The follow write of ChainIngestResultHandler (`follow: true`): what `blockx ingest --follow` asks for each
// block of the node's chain and each reorg (docs/ingest.md § Following the head). In one transaction:
//
//  - the node's block at `block.number` is fetched; if `parentHash` is given and the block's parent is
//    another hash, the chain moved since the follower looked: CHAIN_MOVED, not retryable (the follower
//    walks back instead), and nothing is written;
//  - every other block stored at that height, and every block of `orphans`, is marked `canonical = false`
//    in the blocks table; their rows in every table stay (a block's rows carry its hash);
//  - the block's rows in the four tables are replaced by its hash: rows of the same hash go, the new ones
//    come, so a retried task writes the same rows once.
//
// With `orphans` and no block, only the marking happens (the node's chain got shorter). With `fence`, the
// transaction first checks that the follower's term is still the job's newest (docs/follow.md § Fencing):
// a follower that lost its job commits nothing.
import type { Row, TaskCtx, TaskIo, WriterResult } from 'blockx/plugin';
import { sharedBlockFetcher } from 'blockx/ingest';
import { ChainIngestError, ChainIngestErrorCode } from './errors.js';
import type { ChainIngestResultHandlerConfig } from './index.js';
import { rowsOfBlock } from './rpc-rows.js';

export interface OrphanBlock {
  readonly number: number;
  readonly hash: string;
}

/** The column that names a row's block hash, per chain table (what rpc-rows.ts writes). */
const HASH_COLUMN = {
  blocks: 'hash',
  transactions: 'block_hash',
  events: 'block_hash',
  traces: 'block_hash',
};

export async function followWrite(
  taskCtx: TaskCtx,
  config: ChainIngestResultHandlerConfig,
  io: TaskIo,
): Promise<WriterResult> {
  const { chainId, tables } = config;
  const orphans = config.orphans ?? [];
  const number = config.block?.number;
  let rows: ReturnType<typeof rowsOfBlock> | undefined;
  const fetcher = sharedBlockFetcher(config.source);
  const noticesBefore = fetcher.notices.length;
  if (number !== undefined) {
    rows = rowsOfBlock(await fetcher.fetch(number, { traces: config.traces, chainId }), chainId);
    const block = rows.blocks[0];
    if (block === undefined) throw new Error(`no block row for ${number}`);
    if (config.parentHash !== undefined && block.parent_hash !== config.parentHash) {
      throw new ChainIngestError(
        ChainIngestErrorCode.CHAIN_MOVED,
        `block ${number} on the node is ${block.hash} with parent ${block.parent_hash}, not a child of the ` +
          `stored ${config.parentHash}: the chain moved; nothing written`,
        { retryable: false },
      );
    }
  }
  taskCtx.signal.throwIfAborted();
  const written = rows?.blocks[0];
  const demote = await blocksToDemote(io, tables.blocks, chainId, orphans, written);
  await io.transaction(async (tx) => {
    if (config.fence !== undefined) await tx.checkFence(config.fence);
    if (demote.length > 0) await tx.insertRows(tables.blocks, demote);
    if (rows === undefined || written === undefined) return;
    const at = { from: written.number, to: written.number };
    for (const t of ['blocks', 'transactions', 'events', 'traces'] as const) {
      const list = rows[t];
      if (list === undefined) continue; // traces skipped: the table is left as it is
      await tx.deleteWhere(tables[t], { chain_id: chainId, [HASH_COLUMN[t]]: written.hash }, at);
      await tx.insertRows(tables[t], list);
    }
  });
  const result: Record<string, unknown> = {
    rows: rows === undefined ? 0 : rowCount(rows),
    orphaned: demote.length,
    ...(written !== undefined
      ? { written: { number: written.number, hash: written.hash, parentHash: written.parent_hash } }
      : {}),
    ...(fetcher.notices.length > noticesBefore ? { notices: fetcher.notices.slice(noticesBefore) } : {}),
  };
  return { pluginName: 'ChainIngestResultHandler', success: true, result };
}

/** The stored blocks rows to mark non-canonical: the orphans, and other canonical blocks at the new height. */
async function blocksToDemote(
  io: TaskIo,
  table: string,
  chainId: number,
  orphans: readonly OrphanBlock[],
  written: { number: number; hash: string } | undefined,
): Promise<Row[]> {
  const heights = [...orphans.map((o) => o.number), ...(written ? [written.number] : [])];
  if (heights.length === 0) return [];
  const orphanHashes = new Set(orphans.map((o) => o.hash));
  const range = { from: Math.min(...heights), to: Math.max(...heights) };
  const out: Row[] = [];
  for await (const row of io.scan(table, { blockRange: range, where: { chain_id: chainId } })) {
    const hash = String(row.hash);
    const isCanonical = row.canonical === true || row.canonical === 1 || row.canonical === '1';
    const orphaned = orphanHashes.has(hash);
    const displaced = written !== undefined && Number(row.number) === written.number && hash !== written.hash;
    if (isCanonical && (orphaned || displaced)) out.push({ ...row, canonical: false });
  }
  return out;
}

function rowCount(rows: ReturnType<typeof rowsOfBlock>): number {
  return rows.blocks.length + rows.transactions.length + rows.events.length + (rows.traces?.length ?? 0);
}
