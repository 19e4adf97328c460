// The demo function (of `blockx up`'s demo, examples/tasks/block-table-transfers.json, and the
// tasks/transfers.json of a project `blockx init` makes): a BlockTableCallConfig task over the `events`
// table calls it once per event row, and BlockWriteResultHandler writes what it returns into
// `token_transfers`. It returns the token_transfers row of an ERC-20 Transfer event, or null for any other
// event (null outputs write nothing).
//
// An ERC-20 Transfer has topics [keccak("Transfer(address,address,uint256)"), from, to], the addresses
// left-padded to 32-byte words, and the amount as one 32-byte word in data. ERC-721 shares the selector
// but indexes the token id as a fourth topic with empty data: not an ERC-20 transfer, so null.
import type { CallContext } from 'blockx/function';

export const TRANSFER_SELECTOR = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

const WORD = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_WORD = /^0x0{24}([0-9a-fA-F]{40})$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** An event row as the `events` table holds it (blockx.config.yaml). */
export interface EventRow {
  readonly chain_id: number;
  readonly block_number: number;
  readonly idx: number;
  readonly contract_id: string;
  readonly selector?: string;
  readonly topics: unknown;
  readonly data: unknown;
}

/** A row of the `token_transfers` table. */
export interface TokenTransferRow {
  readonly chain_id: number;
  readonly block_number: number;
  readonly log_idx: number;
  readonly token: string;
  readonly from_address: string;
  readonly to_address: string;
  /** Token units as a decimal string: a uint256 does not fit a number. */
  readonly amount: string;
}

export default async function erc20Transfers(
  _ctx: CallContext,
  event: EventRow,
): Promise<TokenTransferRow | null> {
  const { topics, data, contract_id: token } = event;
  if (!Array.isArray(topics) || topics.length !== 3) return null;
  const [selector, fromWord, toWord] = topics as unknown[];
  if (typeof selector !== 'string' || selector.toLowerCase() !== TRANSFER_SELECTOR) return null;
  if (event.selector !== undefined && event.selector.toLowerCase() !== TRANSFER_SELECTOR) return null;
  const from = typeof fromWord === 'string' ? ADDRESS_WORD.exec(fromWord)?.[1] : undefined;
  const to = typeof toWord === 'string' ? ADDRESS_WORD.exec(toWord)?.[1] : undefined;
  if (from === undefined || to === undefined) return null;
  if (typeof token !== 'string' || !ADDRESS.test(token)) return null;
  if (typeof data !== 'string' || !WORD.test(data)) return null;
  return {
    chain_id: event.chain_id,
    block_number: event.block_number,
    log_idx: event.idx,
    token: token.toLowerCase(),
    from_address: `0x${from.toLowerCase()}`,
    to_address: `0x${to.toLowerCase()}`,
    amount: BigInt(data).toString(),
  };
}
