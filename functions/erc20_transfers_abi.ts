// erc20_transfers with a real ABI (docs/functions.md § Decoding with a contract's ABI): the same rows as the
// demo erc20_transfers, decoded by viem's decodeEventLog from the event's ABI instead of by hand. A function
// may import any package of the project's node_modules; this one runs over the `events` that `blockx ingest`
// fills (docs/ingest.md), one call per event row, and returns a token_transfers row or null.
import { decodeEventLog, parseAbi, type Hex } from 'viem';
import type { CallContext } from 'blockx/function';
import type { EventRow, TokenTransferRow } from './erc20_transfers.js';

const ERC20 = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)']);

export default async function erc20TransfersAbi(
  _ctx: CallContext,
  event: EventRow,
): Promise<TokenTransferRow | null> {
  const topics = event.topics as Hex[];
  // ERC-721 shares the Transfer signature with a third indexed argument: four topics, not this ABI's event.
  if (!Array.isArray(topics) || topics.length !== 3) return null;
  let decoded;
  try {
    decoded = decodeEventLog({ abi: ERC20, topics: topics as [Hex, ...Hex[]], data: event.data as Hex });
  } catch {
    return null; // another event, or a malformed one
  }
  return {
    chain_id: event.chain_id,
    block_number: event.block_number,
    log_idx: event.idx,
    token: event.contract_id.toLowerCase(),
    from_address: decoded.args.from.toLowerCase(),
    to_address: decoded.args.to.toLowerCase(),
    amount: decoded.args.value.toString(),
  };
}
