// The hand-written floor of bench/backfill: one process, no cluster, doing what a per-block
// BlockTableCallConfig → erc20_transfers → BlockWriteResultHandler task does, block after block, on the
// repository's storage backend (the same SQL path the Workers use):
//
//   1. the canonical block at the height (the builder's block lookup: chain_id, number, canonical = true);
//   2. the block's events by hash and height, with the template's `where` (its selector filter);
//   3. the template's function (functions/erc20_transfers.ts, its default export) on every row, called
//      as the Executor calls it, fn(ctx, row), with a minimal ctx; null outputs write nothing;
//   4. one transaction per block: delete the block's token_transfers rows, insert the new ones (the
//      writer's replaceBlockRows).
import type { CallContext } from '../../src/executor/sdk.js';
import type { Row, StorageBackend } from '../../src/services/storage/types.js';
import erc20Transfers from '../../functions/erc20_transfers.js';
import type { EventRow } from '../../functions/erc20_transfers.js';

export interface FloorJob {
  readonly chainId: number;
  readonly from: number;
  /** Inclusive. */
  readonly to: number;
  /** The template's functionCallConfig.config.where. */
  readonly where: Readonly<Record<string, unknown>>;
  readonly sourceTable: string;
  readonly outputTable: string;
}

export interface FloorResult {
  readonly blocks: number;
  readonly rows: number;
  readonly seconds: number;
}

const noIo = (): never => {
  throw new Error('the floor gives functions no ctx.io or ctx.call (erc20_transfers uses neither)');
};
const quiet = (): void => undefined;
const NEVER_ABORTED = new AbortController().signal;

/** The ctx the Executor would pass, minus IO and subcalls. */
function callContext(taskId: string, idx: number, block: Row): CallContext {
  return {
    taskId,
    callId: `${taskId}:${idx}`,
    attempt: 1,
    block: block as unknown as CallContext['block'],
    signal: NEVER_ABORTED,
    log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
    io: { get: noIo, getMany: noIo, scan: noIo },
    call: noIo,
  };
}

async function all(pages: AsyncIterable<readonly Row[]>): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const page of pages) rows.push(...page);
  return rows;
}

/** Runs the job block by block; resolves with the rows written. */
export async function runFloor(backend: StorageBackend, job: FloorJob): Promise<FloorResult> {
  const started = performance.now();
  let rows = 0;
  for (let number = job.from; number <= job.to; number++) {
    const found = await all(
      backend.scan('blocks', { where: { chain_id: job.chainId, number, canonical: true }, limit: 2 }),
    );
    const block = found[0];
    if (found.length !== 1 || block === undefined)
      throw new Error(`floor: ${found.length} canonical blocks at height ${number} of chain ${job.chainId}`);
    const events = await all(
      backend.scan(job.sourceTable, {
        where: { ...job.where, block_hash: block.hash, chain_id: job.chainId },
        blockRange: { from: number, to: number },
      }),
    );
    const taskId = `floor-${job.chainId}-${number}`;
    const out: Row[] = [];
    for (const [idx, event] of events.entries()) {
      const row = await erc20Transfers(callContext(taskId, idx, block), event as unknown as EventRow);
      if (row !== null) out.push(row as unknown as Row);
    }
    await backend.transaction(async (tx) => {
      await tx.deleteWhere(job.outputTable, { chain_id: job.chainId, block_number: number });
      if (out.length > 0) await tx.insertRows(job.outputTable, out);
    });
    rows += out.length;
  }
  return { blocks: job.to - job.from + 1, rows, seconds: (performance.now() - started) / 1000 };
}

/** Rows of `table` (a keyset scan of one narrow column: the same count whatever the backend). */
export async function countRows(backend: StorageBackend, table: string, column: string): Promise<number> {
  let n = 0;
  for await (const page of backend.scan(table, { columns: [column], batchSize: 10_000 })) n += page.length;
  return n;
}
