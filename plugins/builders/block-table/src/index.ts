// BlockTableCallConfig (dbScan): one call of `function` per row of `table` in one block.
//
// The block is first resolved in the blocks table (a height → its canonical block; a hash → that exact
// block, canonical or not). The table is then scanned by the resolved block's hash, so the rows of a
// non-canonical sibling at the same height never mix in; `byNumber` scans by height instead, for tables
// without a hash column (which then must hold one block per height, e.g. derived canonical-only tables).
// The config has already been validated against ../schema.json, its defaults filled in by the kernel.
//
// The rows are read as JSON text (TaskIo.scanJson) and handed to the calls as such: the builder passes
// each row on untouched, so nothing on the Worker decodes it or encodes it again (docs/plugins.md § Rows
// as JSON text); the function gets the same row either way.
import {
  defineBuilder,
  encodedRowArgs,
  type CallList,
  type CallSpec,
  type Row,
  type RowFilter,
  type TaskCtx,
  type TaskIo,
} from 'blockx/plugin';
import { BlockTableError, BlockTableErrorCode } from './errors.js';

export { BlockTableError, BlockTableErrorCode } from './errors.js';

export type BlockSelectorConfig = { readonly number: number } | { readonly hash: string };

/**
 * BlockTableCallConfig as a task writes it: ../schema.json spelled in TypeScript, by hand (the
 * repository has no generator for plugin schemas). The defaults named here are the schema's.
 */
export interface BlockTableCallConfigInput {
  readonly function: string;
  readonly table: string;
  readonly chainId: number;
  readonly block: BlockSelectorConfig;
  /** Default "blocks"; must have the columns chain_id, number, hash, canonical. */
  readonly blocksTable?: string;
  /** Equality filters on `table` (an array means "any of"); chain_id is always the config's chainId. */
  readonly where?: RowFilter;
  readonly columns?: readonly string[];
  /** Appended after the row: each call is `function(ctx, row, ...extraArgs)`. */
  readonly extraArgs?: readonly unknown[];
  readonly limit?: number;
  /** Scan `table` by block number instead of block hash (default false). */
  readonly byNumber?: boolean;
}

/**
 * What the builder receives: the config validated against ../schema.json with every schema default
 * filled in (the kernel validates with ajv's useDefaults; docs/plugins.md § Config and defaults).
 */
export type BlockTableCallConfig = BlockTableCallConfigInput &
  Required<Pick<BlockTableCallConfigInput, 'blocksTable' | 'where' | 'extraArgs' | 'byNumber'>>;

/** The one row of the blocks table the selector names; BLOCK_NOT_FOUND / AMBIGUOUS_BLOCK otherwise. */
async function resolveBlock(config: BlockTableCallConfig, io: TaskIo, signal: AbortSignal): Promise<Row> {
  const { blocksTable } = config;
  const where =
    'number' in config.block
      ? { chain_id: config.chainId, number: config.block.number, canonical: true }
      : { chain_id: config.chainId, hash: config.block.hash };
  const found: Row[] = [];
  // Two rows are enough to tell "exactly one" from "ambiguous".
  for await (const row of io.scan(blocksTable, { where, limit: 2 })) {
    signal.throwIfAborted();
    found.push(row);
  }
  const details = { blocksTable, chainId: config.chainId, block: config.block };
  const selector =
    'number' in config.block ? `canonical block ${config.block.number}` : `block ${config.block.hash}`;
  if (found.length === 0) {
    throw new BlockTableError(
      BlockTableErrorCode.BLOCK_NOT_FOUND,
      `${selector} of chain ${config.chainId} is not in table "${blocksTable}"`,
      details,
    );
  }
  if (found.length > 1) {
    throw new BlockTableError(
      BlockTableErrorCode.AMBIGUOUS_BLOCK,
      `table "${blocksTable}" holds more than one ${selector} of chain ${config.chainId}`,
      details,
    );
  }
  // Frozen: every call carries this one object, so nothing may change it between calls (and the
  // Worker may send its JSON text once).
  return Object.freeze(found[0] as Row);
}

async function build(taskCtx: TaskCtx, config: BlockTableCallConfig, io: TaskIo): Promise<CallList> {
  const block = await resolveBlock(config, io, taskCtx.signal);
  const argsOf = encodedRowArgs(config.extraArgs);
  const calls: CallSpec[] = [];
  const rows = io.scanJson(config.table, {
    block: config.byNumber ? (block.number as number) : (block.hash as string),
    // By hash, the height too: it lets storage use the (chain, block number, ...) key instead of
    // filtering the whole chain for the hash.
    ...(config.byNumber ? {} : { blockRange: { from: block.number as number, to: block.number as number } }),
    // The chain filter comes last: a `where` cannot widen the scan to another chain.
    where: { ...config.where, chain_id: config.chainId },
    ...(config.columns ? { columns: config.columns } : {}),
    ...(config.limit !== undefined ? { limit: config.limit } : {}),
  });
  for await (const row of rows) {
    taskCtx.signal.throwIfAborted();
    calls.push({ function: config.function, args: argsOf(row), block });
  }
  return { calls };
}

const blockTableBuilder = defineBuilder<BlockTableCallConfig>({
  name: 'BlockTableCallConfig',
  build,
});

export default blockTableBuilder;
