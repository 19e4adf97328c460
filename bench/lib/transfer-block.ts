// One synthetic block of ERC-20 Transfer events for bench/block-pipeline, shaped like the `blocks` and
// `events` tables of blockx.config.yaml, and the plain-SQL floor that turns them into the same
// `token_transfers` rows bench/functions/block_pipeline_row.ts returns.
//
// Amounts stay below 2^48, so SQL can decode them from the last 12 hex digits of `data` (SQLite has no
// hex-to-integer function, PostgreSQL has `bit(48)::bigint`); the bench checks that the floor and the
// pipeline leave the very same rows.
import type { Row } from '../../src/kernel/plugin-types.js';

export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface TransferBlock {
  readonly chainId: number;
  readonly number: number;
  readonly hash: string;
  readonly block: Row;
  readonly events: readonly Row[];
}

const hex = (n: number, digits: number): string => n.toString(16).padStart(digits, '0');
const address = (n: number): string => `0x${hex(n, 40)}`;
const addressTopic = (addr: string): string => `0x${addr.slice(2).padStart(64, '0')}`;

/** Block `number` of chain `chainId`, canonical, holding `rows` Transfer events (idx 0..rows-1). */
export function transferBlock(chainId: number, number: number, rows: number): TransferBlock {
  const hash = `0x${hex(chainId, 8)}${hex(number, 56)}`;
  const block: Row = {
    chain_id: chainId,
    number,
    hash,
    parent_hash: `0x${hex(number - 1, 64)}`,
    timestamp: 1_700_000_000 + number * 12,
    miner: address(0x1111),
    gas_used: rows * 50_000,
    gas_limit: 30_000_000,
    tx_count: rows,
    canonical: true,
  };
  const events = Array.from({ length: rows }, (_, idx): Row => {
    // Upper-case hex in the token address: the function and the floor both lower-case it.
    const token = `0x${hex(0xc0ffee00 + (idx % 16), 40).toUpperCase()}`;
    return {
      chain_id: chainId,
      block_number: number,
      block_hash: hash,
      idx,
      tx_hash: `0x${hex(idx, 64)}`,
      contract_id: token,
      selector: TRANSFER_TOPIC,
      topics: [TRANSFER_TOPIC, addressTopic(address(0xa0000 + idx)), addressTopic(address(0xb0000 + idx))],
      data: `0x${hex(1_000_000 + idx * 7_919, 64)}`,
    };
  });
  return { chainId, number, hash, block, events };
}

const TARGET_COLUMNS = 'chain_id, block_number, log_idx, token, from_address, to_address, amount';

/** `data`'s last 12 hex digits as a decimal string, in SQLite (digit by digit: no hex parser). */
function sqliteAmount(): string {
  const digits = Array.from(
    { length: 12 },
    (_, k) => `(instr('0123456789abcdef', substr(lower(data), ${55 + k}, 1)) - 1) * ${16 ** (11 - k)}`,
  );
  return `CAST(${digits.join(' + ')} AS TEXT)`;
}

/** The floor's statements, in order, in one transaction; parameters: chain id, number, block hash. */
export function floorStatements(kind: 'sqlite' | 'postgres'): {
  readonly delete: string;
  readonly insert: string;
} {
  if (kind === 'sqlite') {
    return {
      delete: 'DELETE FROM token_transfers WHERE chain_id = ? AND block_number = ?',
      insert:
        `INSERT INTO token_transfers (${TARGET_COLUMNS}) ` +
        `SELECT chain_id, block_number, idx, lower(contract_id), ` +
        `'0x' || lower(substr(json_extract(topics, '$[1]'), 27)), ` +
        `'0x' || lower(substr(json_extract(topics, '$[2]'), 27)), ${sqliteAmount()} ` +
        'FROM events WHERE chain_id = ? AND block_number = ? AND block_hash = ?',
    };
  }
  return {
    delete: 'DELETE FROM token_transfers WHERE chain_id = $1 AND block_number = $2',
    insert:
      `INSERT INTO token_transfers (${TARGET_COLUMNS}) ` +
      `SELECT chain_id, block_number, idx, lower(contract_id), ` +
      `'0x' || lower(substr(topics->>1, 27)), '0x' || lower(substr(topics->>2, 27)), ` +
      `(('x' || right(data, 12))::bit(48)::bigint)::text ` +
      'FROM events WHERE chain_id = $1 AND block_number = $2 AND block_hash = $3',
  };
}
