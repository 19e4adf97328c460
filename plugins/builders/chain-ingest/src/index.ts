// ChainIngestCallConfig: the builder of a `blockx ingest` task (docs/ingest.md). An ingestion task calls no
// user function — its work is reading the node and writing rows, which its writer ChainIngestResultHandler
// does in one place so that a block is written whole or not at all — so it builds an empty call list. It
// exists so that ingestion is an ordinary BlockX task: the backfill machinery fills its `block` selector,
// and the task gets placement, retries, progress and the journal like any other.
import { defineBuilder, type CallList } from 'blockx/plugin';

export interface ChainIngestCallConfig {
  readonly chainId: number;
  /** One block, or `bundle` with `bundleSize` (the schema allows exactly one of the two). */
  readonly block?: { readonly number: number };
  readonly bundle?: number;
  readonly bundleSize?: number;
}

const EMPTY: CallList = Object.freeze({ calls: Object.freeze([]) });

const chainIngestBuilder = defineBuilder<ChainIngestCallConfig>({
  name: 'ChainIngestCallConfig',
  build: () => EMPTY,
});

export default chainIngestBuilder;
