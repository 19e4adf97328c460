// The scan behind both forms of BlockBundleCallConfig: one call per row of `table` in the bundle's block
// range, keeping only rows of canonical blocks.
//
// Memory stays bounded whatever the table size: the canonical hashes of the range (at most bundleSize
// entries) are collected first, then the table is scanned page by page and each row becomes a call as it
// arrives. The generator stops (returns) as soon as the task signal is aborted; closing it early closes
// the underlying scan.
import { encodedRowArgs, type CallSpec, type RowFilter, type TaskIo } from 'blockx/plugin';
import { bundleRange } from './bundle-range.js';
import { BlockBundleError, BlockBundleErrorCode } from './errors.js';

/**
 * BlockBundleCallConfig as a task writes it: ../schema.json spelled in TypeScript, by hand (the
 * repository has no generator for plugin schemas). The defaults named here are the schema's.
 */
export interface BlockBundleCallConfigInput {
  readonly function: string;
  readonly table: string;
  readonly chainId: number;
  readonly bundle: number;
  /** Blocks per bundle (default 1000). */
  readonly bundleSize?: number;
  readonly columns?: readonly string[];
  /** Equality filters (an array means "any of"); chain_id is always the config's chainId. */
  readonly where?: RowFilter;
  /** Appended after the row: each call is `function(ctx, row, ...extraArgs)`. */
  readonly extraArgs?: readonly unknown[];
  /** `enabled`: calls are produced by stream() during the Calls phase (default off). */
  readonly stream?: { readonly enabled: boolean };
  /** Default "blocks"; must have the columns chain_id, number, hash, canonical. */
  readonly blocksTable?: string;
  /** The table's block number column (default "block_number"). */
  readonly numberColumn?: string;
  /** The table's block hash column (default "block_hash"); null: the table has none, keep every row. */
  readonly hashColumn?: string | null;
}

/**
 * What the builder receives: the config validated against ../schema.json with every schema default
 * filled in (the kernel validates with ajv's useDefaults; docs/plugins.md § Config and defaults).
 */
export type BlockBundleCallConfig = BlockBundleCallConfigInput &
  Required<
    Pick<
      BlockBundleCallConfigInput,
      'bundleSize' | 'where' | 'extraArgs' | 'stream' | 'blocksTable' | 'numberColumn' | 'hashColumn'
    >
  >;

/** What a call of this builder sees as `ctx.block`. */
export interface BundleCallBlock {
  readonly chain_id: number;
  readonly number: number;
  /** The canonical hash at that height; null when the blocks table has none (hashless tables only). */
  readonly hash: string | null;
}

/** Yields the bundle's calls in the table's primary key order; returns early once `signal` aborts. */
export async function* bundleCalls(
  signal: AbortSignal,
  config: BlockBundleCallConfig,
  io: TaskIo,
): AsyncGenerator<CallSpec, void, undefined> {
  const range = bundleRange(config.bundle, config.bundleSize);
  const { numberColumn, hashColumn } = config;
  const argsOf = encodedRowArgs(config.extraArgs);

  const canonical = new Map<number, string>();
  const blocks = io.scan(config.blocksTable, {
    blockRange: range,
    where: { chain_id: config.chainId, canonical: true },
    columns: ['number', 'hash'],
  });
  for await (const block of blocks) {
    if (signal.aborted) return;
    const number = block.number as number;
    if (canonical.has(number)) {
      throw new BlockBundleError(
        BlockBundleErrorCode.AMBIGUOUS_BLOCK,
        `blocks table holds more than one canonical block ${number} of chain ${config.chainId}`,
        { chainId: config.chainId, bundle: config.bundle, blockNumber: number },
      );
    }
    canonical.set(number, block.hash as string);
  }
  // No canonical block in the range: no row can qualify, so skip the scan.
  if (canonical.size === 0 && hashColumn !== null) return;

  // Rows as JSON text, passed on untouched (docs/plugins.md § Rows as JSON text); the block's number and
  // hash are read beside each as values.
  const rows = io.scanJson(
    config.table,
    {
      blockRange: range,
      // The chain filter comes last: a `where` cannot widen the scan to another chain.
      where: { ...config.where, chain_id: config.chainId },
      ...(config.columns ? { columns: withColumns(config.columns, numberColumn, hashColumn) } : {}),
    },
    hashColumn === null ? [numberColumn] : [numberColumn, hashColumn],
  );
  // The calls of one block share one frozen block object: the frames then take its JSON once
  // (docs/performance.md § Rows as bytes), and a page's block runs are found by identity.
  let block: BundleCallBlock | undefined;
  for await (const row of rows) {
    if (signal.aborted) return;
    const number = row.fields[numberColumn] as number;
    const hash = canonical.get(number);
    if (hashColumn !== null && (hash === undefined || row.fields[hashColumn] !== hash)) continue;
    if (block?.number !== number)
      block = Object.freeze({ chain_id: config.chainId, number, hash: hash ?? null });
    yield { function: config.function, args: argsOf(row), block };
    // Checked again before the loop pulls the next row, so an abort reads nothing more.
    if (signal.aborted) return;
  }
}

/** The projection plus the columns the canonical check needs (kept in each row). */
function withColumns(columns: readonly string[], numberColumn: string, hashColumn: string | null): string[] {
  const out = [...columns];
  for (const c of [numberColumn, hashColumn]) if (c !== null && !out.includes(c)) out.push(c);
  return out;
}
