// BlockWriteResultHandler: replaces every row of one block (of one chain) in an output table with the
// rows the calls returned, in one transaction. Running the same task twice leaves the same table state:
// the second run deletes what the first wrote and writes the same rows again. Rows of other blocks and
// other chains are never touched. The config has already been validated against ../schema.json, which
// fills in its defaults (docs/plugins.md § Config and defaults): the schema is the only place they live.
import { defineWriter, type FusedWrite, type Row, type WriteFence, type WriterResult } from 'blockx/plugin';
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
    return written(config, rows.length);
  },
  // Task fusion (docs/task-fusion.md): the blocks of tasks that write one table of one chain with the same
  // columns and fence go in one transaction — each block's rows deleted as `execute` deletes them, then
  // the rows of every block in one insert. A task whose outputs are refused gets its BAD_OUTPUT and
  // writes nothing; if the transaction fails, the Worker writes each task alone with `execute`.
  fusion: {
    key: (config) =>
      JSON.stringify([
        config.table,
        config.chainId,
        config.columns.chainColumn,
        config.columns.blockColumn,
        config.fence ?? null,
      ]),
    async executeMany(tasks, io): Promise<(WriterResult[] | Error)[]> {
      const results: (WriterResult[] | Error)[] = [];
      const accepted: { index: number; write: FusedWrite<BlockWriteResultHandlerConfig>; rows: Row[] }[] = [];
      tasks.forEach((write, index) => {
        const { config } = write;
        try {
          const target = { chainId: config.chainId, number: config.block.number };
          accepted.push({ index, write, rows: blockRows(write.outputs, target, config.columns) });
        } catch (err) {
          results[index] = err instanceof Error ? err : new Error(String(err));
        }
      });
      const first = accepted[0]?.write.config;
      if (first !== undefined) {
        // Every task of the group has this table, chain and fence (the key says so).
        const { table, chainId, fence } = first;
        // Two tasks of one block (a retry beside its first attempt): the later one's rows are the block's,
        // as when the two run one after the other.
        const byBlock = new Map<number, Row[]>();
        for (const { write, rows } of accepted) byBlock.set(write.config.block.number, rows);
        await io.transaction(async (tx) => {
          if (fence !== undefined) await tx.checkFence(fence);
          const all: Row[] = [];
          for (const [number, rows] of byBlock) {
            await tx.replaceBlockRows(table, { number, chainId }, []);
            for (const row of rows) all.push(row);
          }
          if (all.length > 0) await tx.insertRows(table, all);
        });
      }
      for (const { index, write, rows } of accepted) results[index] = written(write.config, rows.length);
      return results;
    },
  },
});

/** What a block write reports: the table, the block and how many rows it holds now. */
function written(config: BlockWriteResultHandlerConfig, rows: number): WriterResult[] {
  const { table, chainId } = config;
  return [
    {
      pluginName: PLUGIN_NAME,
      success: true,
      result: { table, block: { chainId, number: config.block.number }, rows },
    },
  ];
}

export default blockWriter;
