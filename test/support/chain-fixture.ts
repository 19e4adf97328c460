// Rows of a small synthetic chain for plugin tests, shaped like the `blocks` and `events` tables of
// blockx.config.yaml: every non-nullable column present, hashes 0x + 64 hex. A height may have a
// non-canonical sibling (fork 'b') whose rows must never mix with the canonical block's.
import type { Row } from '../../src/kernel/plugin-types.js';

export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** A deterministic block hash for (chain, height, fork). */
export function blockHash(number: number, fork = 'a', chainId = 1): string {
  const tag = `${chainId.toString(16)}${fork === 'a' ? 'a' : 'b'}${number.toString(16)}`;
  return `0x${tag.padStart(64, '0')}`;
}

export function blockRow(
  number: number,
  opts: { fork?: string; canonical?: boolean; chainId?: number } = {},
): Row {
  const { fork = 'a', canonical = fork === 'a', chainId = 1 } = opts;
  return {
    chain_id: chainId,
    number,
    hash: blockHash(number, fork, chainId),
    parent_hash: number === 0 ? `0x${'0'.repeat(64)}` : blockHash(number - 1, 'a', chainId),
    timestamp: 1_700_000_000 + number * 12,
    miner: `0x${'1'.repeat(40)}`,
    gas_used: 21_000,
    gas_limit: 30_000_000,
    tx_count: 1,
    canonical,
  };
}

/** A 32-byte topic holding an address (left-padded). */
export function addressTopic(address: string): string {
  return `0x${address.slice(2).toLowerCase().padStart(64, '0')}`;
}

export function eventRow(block: Row, idx: number, overrides: Partial<Record<string, unknown>> = {}): Row {
  return {
    chain_id: block.chain_id,
    block_number: block.number,
    block_hash: block.hash,
    idx,
    tx_hash: `0x${idx.toString(16).padStart(64, 'f')}`,
    contract_id: `0x${'c'.repeat(40)}`,
    selector: TRANSFER_TOPIC,
    topics: [TRANSFER_TOPIC, addressTopic(`0x${'a'.repeat(40)}`), addressTopic(`0x${'b'.repeat(40)}`)],
    data: `0x${(1000 + idx).toString(16).padStart(64, '0')}`,
    ...overrides,
  };
}
