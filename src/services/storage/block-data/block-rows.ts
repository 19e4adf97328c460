// Row shapes of the block tables as blockx.config.yaml declares them (tables blocks, transactions, events,
// traces, token_transfers), in the storage port's JSON representation: integer/bigint → number, text →
// string, boolean → boolean, json → JSON value, nullable → null. Hashes are 0x + 64 hex digits, addresses
// 0x + 40, both lowercase. They are `type` aliases (not interfaces) so they are assignable to the port's
// `Row` (a string-keyed record).

export type BlockRow = {
  chain_id: number;
  number: number;
  hash: string;
  parent_hash: string;
  timestamp: number;
  miner: string;
  gas_used: number;
  gas_limit: number;
  tx_count: number;
  canonical: boolean;
};

/** A transaction with its receipt fields (gas_used, status) merged, as Chaintable publishes it. */
export type TransactionRow = {
  chain_id: number;
  block_number: number;
  block_hash: string;
  idx: number;
  hash: string;
  from_address: string;
  /** null for a contract creation. */
  to_address: string | null;
  /** Wei, as a decimal string (values exceed 2^53). */
  value: string;
  gas_used: number;
  /** 1 success, 0 reverted. */
  status: number;
  input: string;
};

/** An event (log). `idx` is the log index within the block; `selector` is topics[0]. */
export type EventRow = {
  chain_id: number;
  block_number: number;
  block_hash: string;
  idx: number;
  tx_hash: string;
  contract_id: string;
  selector: string;
  topics: string[];
  data: string;
};

/** One frame of a transaction's call tree, flattened: trace_address "" is the root, "0,1" a grandchild. */
export type TraceRow = {
  chain_id: number;
  block_number: number;
  block_hash: string;
  tx_idx: number;
  trace_address: string;
  call_type: 'call' | 'delegatecall' | 'staticcall' | 'create';
  from_address: string;
  /** The callee, or the created contract for `create`. */
  to_address: string | null;
  value: string;
  gas_used: number;
  input: string;
  output: string | null;
  error: string | null;
};

/** A row of the demo's output table: one ERC-20 Transfer event. */
export type TokenTransferRow = {
  chain_id: number;
  block_number: number;
  log_idx: number;
  token: string;
  from_address: string;
  to_address: string;
  /** Token units, as a decimal string. */
  amount: string;
};

/** Everything one block contributes to the block tables. */
export interface SyntheticBlock {
  readonly block: BlockRow;
  readonly transactions: readonly TransactionRow[];
  readonly events: readonly EventRow[];
  readonly traces: readonly TraceRow[];
}

/** The config tables a synthetic block fills, in insertion order. */
export const BLOCK_TABLE_NAMES = ['blocks', 'transactions', 'events', 'traces'] as const;
export type BlockTableName = (typeof BLOCK_TABLE_NAMES)[number];

/** The rows of `table` in one synthetic block. */
export function rowsOf(block: SyntheticBlock, table: BlockTableName): readonly Record<string, unknown>[] {
  switch (table) {
    case 'blocks':
      return [block.block];
    case 'transactions':
      return block.transactions;
    case 'events':
      return block.events;
    case 'traces':
      return block.traces;
    default: {
      const unreachable: never = table;
      throw new RangeError(`unknown block table ${String(unreachable)}`);
    }
  }
}
