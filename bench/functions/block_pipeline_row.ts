// The function of bench/block-pipeline: a BlockTableCallConfig task over `events` calls it once per event
// row; it reads the event's block through `ctx.io.get` (the one extra read per call the bench measures,
// served by the task's read cache) and returns the event's `token_transfers` row, which
// BlockWriteResultHandler writes. The bench's events are all ERC-20 Transfers: topics [selector, from,
// to] with the addresses left-padded to 32-byte words, and the amount as one 32-byte word in `data`.
import type { CallContext } from '../../src/executor/sdk.js';

interface EventRow {
  readonly chain_id: number;
  readonly block_number: number;
  readonly block_hash: string;
  readonly idx: number;
  readonly contract_id: string;
  readonly topics: unknown;
  readonly data: unknown;
}

interface BlockRow {
  readonly hash: string;
}

const ADDRESS_WORD = /^0x0{24}([0-9a-fA-F]{40})$/;

function addressOf(word: unknown, what: string, idx: number): string {
  const match = typeof word === 'string' ? ADDRESS_WORD.exec(word) : null;
  if (match === null) throw new Error(`event ${idx}: ${what} topic is not an address word`);
  return `0x${(match[1] as string).toLowerCase()}`;
}

export default async function blockPipelineRow(ctx: CallContext, event: EventRow) {
  const key = { chain_id: event.chain_id, number: event.block_number, hash: event.block_hash };
  const block = await ctx.io.get<BlockRow>('blocks', key);
  // The read is part of the work measured: a missing or different block fails the call (and the task).
  if (block === null || block.hash !== event.block_hash) {
    throw new Error(`event ${event.idx}: block ${JSON.stringify(key)} is not in "blocks"`);
  }
  const topics = Array.isArray(event.topics) ? (event.topics as unknown[]) : [];
  if (typeof event.data !== 'string') throw new Error(`event ${event.idx}: data is not a hex word`);
  return {
    chain_id: event.chain_id,
    block_number: event.block_number,
    log_idx: event.idx,
    token: event.contract_id.toLowerCase(),
    from_address: addressOf(topics[1], 'from', event.idx),
    to_address: addressOf(topics[2], 'to', event.idx),
    amount: BigInt(event.data).toString(),
  };
}
