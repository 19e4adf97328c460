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
  type EncodedRow,
  type FusedTask,
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
  return theBlock(config, found);
}

/** The block the selector names, from the rows of the blocks table it matched; or the error it fails with. */
function theBlock(config: BlockTableCallConfig, found: readonly Row[]): Row {
  const { blocksTable } = config;
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

/**
 * Task fusion (docs/task-fusion.md): tasks of one job — the same config but for the block number —
 * built together. One scan of the blocks table resolves every block, one scan of `table` reads the rows
 * of all of them (by hash, or by number with `byNumber`), and each task gets exactly the calls `build`
 * would give it: the rows of its block in key order, at most `limit`, with its block row as `ctx.block`;
 * a block that is missing or ambiguous fails its task alone, with the same error. Declines (each task is
 * then built alone) where the rows cannot be told apart: the table has no such block column, or the
 * `columns` projection leaves it out.
 */
async function buildMany(
  tasks: readonly FusedTask<BlockTableCallConfig>[],
  io: TaskIo,
): Promise<(CallList | Error)[] | null> {
  const first = tasks[0]?.config;
  if (first === undefined || io.blockColumns === undefined) return null;
  const numbers = tasks.map((t) => ('number' in t.config.block ? t.config.block.number : NaN));
  if (numbers.some((n) => !Number.isSafeInteger(n))) return null;
  const columns = io.blockColumns(first.table);
  const groupColumn = first.byNumber ? columns.block : columns.hash;
  if (groupColumn === undefined || columns.block === undefined) return null;
  if (first.columns !== undefined && !first.columns.includes(groupColumn)) return null;
  if (Object.hasOwn(first.where, groupColumn) || Object.hasOwn(first.where, columns.block)) return null;

  // Every block at once: the canonical rows of the tasks' heights.
  const distinct = [...new Set(numbers)];
  const byNumber = new Map<number, Row[]>();
  const blockRows = io.scan(first.blocksTable, {
    where: { chain_id: first.chainId, number: distinct, canonical: true },
  });
  for await (const row of blockRows) {
    const list = byNumber.get(row.number as number);
    if (list === undefined) byNumber.set(row.number as number, [row]);
    else list.push(row);
  }
  const blocks = tasks.map((t, i): Row | Error => {
    try {
      return theBlock(t.config, byNumber.get(numbers[i] as number) ?? []);
    } catch (err) {
      return err as Error;
    }
  });

  // Every block's rows in one scan, told apart by the block column (hash, or number with byNumber).
  const keyOf = (block: Row): unknown => (first.byNumber ? block.number : block.hash);
  const rowsByKey = new Map<unknown, EncodedRow[]>();
  const resolved = blocks.filter((b): b is Row => !(b instanceof Error));
  if (resolved.length > 0) {
    for (const block of resolved) rowsByKey.set(keyOf(block), []);
    // The heights as a list, not a range: the tasks' blocks need not be consecutive (the other Workers
    // hold the blocks between), and the table's key finds each height's rows without reading the gaps.
    const heights = [...new Set(resolved.map((b) => b.number as number))];
    const rows = io.scanJson(
      first.table,
      {
        where: {
          ...first.where,
          // By height only: a second list (of hashes) would make the database sort the rows again; a
          // row of another block at one of these heights (a fork's) is dropped below, by its hash.
          [columns.block]: heights,
          // The chain filter comes last: a `where` cannot widen the scan to another chain.
          chain_id: first.chainId,
        },
        ...(first.columns ? { columns: first.columns } : {}),
      },
      [groupColumn],
    );
    for await (const row of rows) rowsByKey.get(row.fields[groupColumn])?.push(row);
  }

  const argsOf = encodedRowArgs(first.extraArgs);
  return tasks.map((t, i) => {
    const block = blocks[i] as Row | Error;
    if (block instanceof Error) return block;
    const rows = rowsByKey.get(keyOf(block)) ?? [];
    const limit = t.config.limit ?? rows.length;
    const calls: CallSpec[] = [];
    for (let r = 0; r < rows.length && r < limit; r++)
      calls.push({ function: t.config.function, args: argsOf(rows[r] as EncodedRow), block });
    return { calls };
  });
}

const blockTableBuilder = defineBuilder<BlockTableCallConfig>({
  name: 'BlockTableCallConfig',
  build,
  fusion: {
    // Tasks of one job: everything but the block number is the same (a hash selector is built alone).
    key: (config) => {
      if (!('number' in config.block)) return undefined;
      const { block: _block, ...rest } = config;
      return canonicalKey(rest);
    },
    buildMany,
  },
});

/** A config's JSON with its object keys in order, so equal configs give equal keys. */
function canonicalKey(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export default blockTableBuilder;
