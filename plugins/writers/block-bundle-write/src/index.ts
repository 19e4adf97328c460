// BlockBundleWriteResultHandler: replaces every row of one bundle of blocks (of one chain) in an output
// table with the rows the calls returned, in one transaction. Running the same task twice leaves the same
// table state; rows of other bundles and other chains are never touched. The config has already been
// validated against ../schema.json, which fills in its defaults (docs/plugins.md § Config and defaults):
// the schema is the only place they live.
import { defineWriter, type WriterResult } from 'blockx/plugin';
import { bundleRows } from './bundle-rows.js';

export { BlockBundleWriteError, BlockBundleWriteErrorCode } from './errors.js';

export interface BlockBundleWriteResultHandlerConfig {
  readonly table: string;
  readonly chainId: number;
  readonly bundle: number;
  /** Blocks per bundle (schema default 1000). */
  readonly bundleSize: number;
  /** Where rows carry their chain and block number (schema defaults chain_id, block_number). */
  readonly columns: { readonly chainColumn: string; readonly blockColumn: string };
}

const PLUGIN_NAME = 'BlockBundleWriteResultHandler';

/**
 * The bundle's inclusive block range: bundle 0 is genesis only, bundle b ≥ 1 is (b − 1)·size + 1 … b·size
 * (the same arithmetic as BlockBundleCallConfig; packages stay independent, so it is repeated here).
 */
export function bundleRange(bundle: number, size: number): { from: number; to: number } {
  return bundle === 0 ? { from: 0, to: 0 } : { from: (bundle - 1) * size + 1, to: bundle * size };
}

const bundleWriter = defineWriter<BlockBundleWriteResultHandlerConfig>({
  name: PLUGIN_NAME,
  async execute(_taskCtx, config, outputs, io): Promise<WriterResult[]> {
    const { chainId, table, bundle } = config;
    const range = bundleRange(bundle, config.bundleSize);
    // Every output is checked before the transaction opens: a bad one writes nothing.
    const rows = bundleRows(outputs, {
      chainId,
      ...range,
      chainColumn: config.columns.chainColumn,
      blockColumn: config.columns.blockColumn,
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
