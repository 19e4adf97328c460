// One RpcClient and BlockFetcher per source settings per process: every ingestion task a Worker runs for one
// source shares its limits (concurrency, requests per second, a 429's pause) and what it learnt about the
// node (docs/ingest.md § The RPC access layer: the limits hold per process).
import { canonicalJson } from '../../../kernel/canonical-json.js';
import { BlockFetcher } from './block-fetcher.js';
import { RpcClient, type RpcSourceSettings } from './rpc-client.js';

const fetchers = new Map<string, BlockFetcher>();

export function sharedBlockFetcher(settings: RpcSourceSettings): BlockFetcher {
  const key = canonicalJson(settings);
  let fetcher = fetchers.get(key);
  if (fetcher === undefined) {
    fetcher = new BlockFetcher(new RpcClient(settings));
    fetchers.set(key, fetcher);
  }
  return fetcher;
}
