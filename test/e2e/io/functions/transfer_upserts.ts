// For the TableUpsertsResultHandler test: returns `count` upserts of token_transfers rows of one block,
// log indexes `fromIdx ..`, as one array output. `bad` appends one more upsert that is malformed:
//   'shape'  — no `values` field: the writer rejects the outputs before opening its transaction;
//   'column' — a well-formed upsert naming a column the table does not have: storage rejects it inside
//              the transaction, after the valid upserts before it were applied.
import type { CallContext } from '../../../../src/executor/sdk.js';

interface Upsert {
  readonly table: string;
  readonly key: Record<string, unknown>;
  readonly values?: Record<string, unknown>;
}

export function transferValues(blockNumber: number, idx: number): Record<string, unknown> {
  const hex = (n: number) => n.toString(16).padStart(40, '0');
  return {
    token: `0x${hex(0x1000 + idx)}`,
    from_address: `0x${hex(blockNumber)}`,
    to_address: `0x${hex(idx + 1)}`,
    amount: String(BigInt(blockNumber) * 1_000_000_000_000_000_000n + BigInt(idx)),
  };
}

export default function transferUpserts(
  _ctx: CallContext,
  chainId: number,
  blockNumber: number,
  fromIdx: number,
  count: number,
  bad?: 'shape' | 'column',
): Upsert[] {
  const out: Upsert[] = [];
  for (let idx = fromIdx; idx < fromIdx + count; idx++) {
    out.push({
      table: 'token_transfers',
      key: { chain_id: chainId, block_number: blockNumber, log_idx: idx },
      values: transferValues(blockNumber, idx),
    });
  }
  const key = { chain_id: chainId, block_number: blockNumber, log_idx: fromIdx + count };
  if (bad === 'shape') out.push({ table: 'token_transfers', key });
  if (bad === 'column')
    out.push({ table: 'token_transfers', key, values: { ...transferValues(blockNumber, 0), nope: 1 } });
  return out;
}
