// BlockWriteResultHandler: replaces every row of one block (of one chain) in an output table with the
// rows the calls returned, in one transaction. Running the same task twice leaves the same table state:
// the second run deletes what the first wrote and writes the same rows again. Rows of other blocks and
// other chains are never touched. The config has already been validated against ../schema.json, which
// fills in its defaults (docs/plugins.md § Config and defaults): the schema is the only place they live.
import { defineWriter, type WriteFence, type WriterResult } from 'blockx/plugin';
import { blockRows } from './block-rows.js';

export { BlockWriteError, BlockWriteErrorCode } from './errors.js';

export interface BlockWriteResultHandlerConfig {
  readonly table: string;
  readonly chainId: number;
  readonly block: { readonly number: number };
  /** Where rows carry their chain and block number (schema defaults chain_id, block_number). */
  readonly columns: { readonly chainColumn: string; readonly blockColumn: string };
  /** A follow job's runner and term: the write commits only while the term is the job's newest. */
  readonly fence?: WriteFence;
}

const PLUGIN_NAME = 'BlockWriteResultHandler';

const blockWriter = defineWriter<BlockWriteResultHandlerConfig>({
  name: PLUGIN_NAME,
  async execute(_taskCtx, config, outputs, io): Promise<WriterResult[]> {
    const { chainId, table } = config;
    const number = config.block.number;
    // Every output is checked before the transaction opens: a bad one writes nothing.
    const rows = blockRows(outputs, { chainId, number }, config.columns);
    // IO errors propagate unchanged: the IO scope has classified them (`retryable`) and retried already.
    // A follow job's write checks its runner's term first, in the same transaction (docs/follow.md § Fencing).
    const { fence } = config;
    await io.transaction(async (tx) => {
      if (fence !== undefined) await tx.checkFence(fence);
      await tx.replaceBlockRows(table, { number, chainId }, rows);
    });
    return [
      {
        pluginName: PLUGIN_NAME,
        success: true,
        result: { table, block: { chainId, number }, rows: rows.length },
      },
    ];
  },
});

export default blockWriter;
