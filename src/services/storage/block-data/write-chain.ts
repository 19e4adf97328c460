// Writes a synthetic chain into storage: per chunk of heights, one transaction that replaces the chain's
// rows at those heights in every block table (so a re-run, even with another seed, leaves exactly the
// generated chain: one canonical block per height, never a mix of two). Used by `blockx data generate`
// and by the demo chain of `blockx up`.

import type { BlockxConfig } from '../../../kernel/config-types.js';
import type { StorageBackend } from '../types.js';
import { BLOCK_TABLE_NAMES, rowsOf } from './block-rows.js';
import { syntheticChain, type SyntheticChainOptions } from './synthetic-chain.js';

export interface ChainTotals {
  blocks: number;
  /** Non-canonical siblings among `blocks`. */
  siblings: number;
  transactions: number;
  events: number;
  traces: number;
}

export async function writeSyntheticChain(
  backend: StorageBackend,
  tables: BlockxConfig['tables'],
  args: SyntheticChainOptions & { readonly chunk: number },
): Promise<ChainTotals> {
  const totals: ChainTotals = { blocks: 0, siblings: 0, transactions: 0, events: 0, traces: 0 };
  const end = args.fromBlock + args.blocks; // exclusive
  for (let from = args.fromBlock; from < end; from += args.chunk) {
    const to = Math.min(end, from + args.chunk) - 1;
    const blocks = [...syntheticChain({ ...args, fromBlock: from, blocks: to - from + 1 })];
    await backend.transaction(async (tx) => {
      for (const name of BLOCK_TABLE_NAMES) {
        const table = tables[name];
        if (table?.blockColumn !== undefined) {
          const where = table.chainColumn === undefined ? {} : { [table.chainColumn]: args.chainId };
          await tx.deleteWhere(name, where, { from, to });
        }
        await tx.insertRows(
          name,
          blocks.flatMap((b) => rowsOf(b, name)),
        );
      }
    });
    for (const b of blocks) {
      totals.blocks++;
      if (!b.block.canonical) totals.siblings++;
      totals.transactions += b.transactions.length;
      totals.events += b.events.length;
      totals.traces += b.traces.length;
    }
  }
  return totals;
}
