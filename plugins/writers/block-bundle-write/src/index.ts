// BlockBundleWriteResultHandler: replaces every row of one bundle of blocks (of one chain) in an output
// table with the rows the calls returned, in one transaction. Running the same task twice leaves the same
// table state; rows of other bundles and other chains are never touched. The config has already been
// validated against ../schema.json; defaults are applied here.
import { defineWriter, type PluginResult } from '../../../../src/plugin.js';
import { bundleRows } from './bundle-rows.js';

export { BlockBundleWriteError, BlockBundleWriteErrorCode } from './errors.js';

export interface BlockBundleWriteResultHandlerConfig {
  readonly table: string;
  readonly chainId: number;
  readonly bundle: number;
  /** Blocks per bundle (default 1000). */
  readonly bundleSize?: number;
  /** Where rows carry their chain and block number (defaults chain_id, block_number). */
  readonly columns?: { readonly chainColumn?: string; readonly blockColumn?: string };
}

const PLUGIN_NAME = 'BlockBundleWriteResultHandler';
const DEFAULT_BUNDLE_SIZE = 1000;

/**
 * The bundle's inclusive block range: bundle 0 is genesis only, bundle b ≥ 1 is (b − 1)·size + 1 … b·size
 * (the same arithmetic as BlockBundleCallConfig; packages stay independent, so it is repeated here).
 */
export function bundleRange(
  bundle: number,
  size: number = DEFAULT_BUNDLE_SIZE,
): { from: number; to: number } {
  return bundle === 0 ? { from: 0, to: 0 } : { from: (bundle - 1) * size + 1, to: bundle * size };
}

const bundleWriter = defineWriter<BlockBundleWriteResultHandlerConfig>({
  name: PLUGIN_NAME,
  async execute(_taskCtx, config, outputs, io): Promise<PluginResult[]> {
    const { chainId, table, bundle } = config;
    // The kernel fills bundleSize and columns in from ../schema.json (docs/plugins.md § Config and
    // defaults); the fallbacks below stay only for callers that run this writer without the kernel
    // (test/e2e/storage/concurrent-writers.ts, test/e2e/io/writable-tables.test.ts).
    const range = bundleRange(bundle, config.bundleSize ?? DEFAULT_BUNDLE_SIZE);
    // Every output is checked before the transaction opens: a bad one writes nothing.
    const rows = bundleRows(outputs, {
      chainId,
      ...range,
      chainColumn: config.columns?.chainColumn ?? 'chain_id',
      blockColumn: config.columns?.blockColumn ?? 'block_number',
    });
    // IO errors propagate unchanged: the IO scope has classified them (`retryable`) and retried already.
    await io.transaction((tx) => tx.replaceBlockRangeRows(table, { ...range, chainId }, rows));
    return [
      {
        pluginName: PLUGIN_NAME,
        success: true,
        result: { table, chainId, bundle, range, rows: rows.length },
      },
    ];
  },
});

export default bundleWriter;
