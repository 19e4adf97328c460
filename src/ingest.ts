// `blockx/ingest`: what the built-in writer of `blockx ingest` (plugins/writers/chain-ingest-write/) takes from
// BlockX besides `blockx/plugin`: the sources this process declares (its config's `sources`, URLs from its
// own config and environment: a task names a source, never carries its key), the process-wide JSON-RPC block
// fetcher of a source (shared by every task of the process, so the source's request limits hold across
// them), the node's block as it is read, the rows of the chain tables it becomes, and the bounds of an
// aligned bundle (docs/ingest.md). A plugin that reads a chain from a node may use it too; it pulls the RPC
// client into the module graph, so it is a subpath of its own rather than a part of `blockx/plugin`.
export {
  declareProcessSources,
  sharedBlockFetcher,
  type TaskSource,
} from './services/chain-rpc/adapters/shared-clients.js';
export type { RpcSourceSettings } from './services/chain-rpc/adapters/rpc-client.js';
export type { RawBlock } from './services/chain-rpc/adapters/block-fetcher.js';
export type {
  BlockRow,
  EventRow,
  TraceRow,
  TransactionRow,
} from './services/storage/block-data/block-rows.js';
export { bundleRange } from './client/backfill/plan.js';
