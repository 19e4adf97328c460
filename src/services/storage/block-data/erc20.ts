// ERC-20 Transfer events: encoding (for the generator) and decoding (for the demo and the tests that
// compute expected token_transfers rows). An ERC-20 Transfer is
//   topics [keccak("Transfer(address,address,uint256)"), from as a 32-byte word, to as a 32-byte word]
//   data   the amount as one 32-byte word.
// ERC-721 uses the same selector with the token id as a fourth topic and empty data; it is not an ERC-20
// transfer and decodes to undefined.

import type { TokenTransferRow } from './block-rows.js';

export const ERC20_TRANSFER_SELECTOR = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const ERC20_APPROVAL_SELECTOR = '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c8f7b2291e5b200ac8c7c3b925';

const WORD = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS_WORD = /^0x0{24}([0-9a-fA-F]{40})$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const ADDRESS_PAD = `0x${'0'.repeat(24)}`;

/** An address left-padded to a 32-byte topic word. */
export function addressWord(address: string): string {
  // A shape check only (no regex): the generator calls this millions of times with its own addresses.
  if (address.length !== 42 || !address.startsWith('0x')) throw new RangeError(`not an address: ${address}`);
  return `${ADDRESS_PAD}${address.slice(2).toLowerCase()}`;
}

/** An unsigned integer as a 32-byte word. */
export function uintWord(value: bigint): string {
  if (value < 0n || value >= 1n << 256n) throw new RangeError(`not a uint256: ${value}`);
  return `0x${value.toString(16).padStart(64, '0')}`;
}

/** The decoded fields of an ERC-20 Transfer event. */
export interface Erc20Transfer {
  readonly token: string;
  readonly from: string;
  readonly to: string;
  /** Token units as a decimal string (uint256 does not fit a number). */
  readonly amount: string;
}

/**
 * Decodes an event row (`{contract_id, topics, data}`, as generated or as read back from storage) as an
 * ERC-20 Transfer, or undefined when it is anything else (another selector, an ERC-721 Transfer, malformed
 * words). Addresses come back lowercase.
 */
export function decodeErc20Transfer(event: Readonly<Record<string, unknown>>): Erc20Transfer | undefined {
  const { contract_id: token, topics, data } = event;
  if (typeof token !== 'string' || !ADDRESS.test(token)) return undefined;
  if (!Array.isArray(topics) || topics.length !== 3) return undefined;
  const [selector, fromWord, toWord] = topics as unknown[];
  if (typeof selector !== 'string' || selector.toLowerCase() !== ERC20_TRANSFER_SELECTOR) return undefined;
  const from = typeof fromWord === 'string' ? ADDRESS_WORD.exec(fromWord)?.[1] : undefined;
  const to = typeof toWord === 'string' ? ADDRESS_WORD.exec(toWord)?.[1] : undefined;
  if (from === undefined || to === undefined) return undefined;
  if (typeof data !== 'string' || !WORD.test(data)) return undefined;
  return {
    token: token.toLowerCase(),
    from: `0x${from.toLowerCase()}`,
    to: `0x${to.toLowerCase()}`,
    amount: BigInt(data).toString(10),
  };
}

/**
 * The token_transfers rows of a block's events: one per ERC-20 Transfer, in log order, keyed by the
 * event's block-wide log index. Events of other kinds are skipped.
 */
export function tokenTransfersOf(events: readonly Readonly<Record<string, unknown>>[]): TokenTransferRow[] {
  const out: TokenTransferRow[] = [];
  for (const event of events) {
    const t = decodeErc20Transfer(event);
    if (t === undefined) continue;
    const { chain_id, block_number, idx } = event;
    if (typeof chain_id !== 'number' || typeof block_number !== 'number' || typeof idx !== 'number') continue;
    out.push({
      chain_id,
      block_number,
      log_idx: idx,
      token: t.token,
      from_address: t.from,
      to_address: t.to,
      amount: t.amount,
    });
  }
  return out;
}
