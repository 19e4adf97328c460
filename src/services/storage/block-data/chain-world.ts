// The fixed cast of a synthetic chain (accounts, tokens, NFTs, DEX pairs and routers, a multi-send
// contract, miners), derived from (seed, chainId) alone, and the tags that keep every derived PRNG stream
// of the chain apart.

import { Prng, seedOf } from './prng.js';

/** The fixed cast of a synthetic chain: accounts and contracts, derived from (seed, chainId). */
export interface ChainWorld {
  readonly chainId: number;
  readonly seed: number;
  readonly accounts: readonly string[];
  readonly tokens: readonly string[];
  /** Implementation behind token i when token i is a proxy (every fourth token), else undefined. */
  readonly tokenImpls: readonly (string | undefined)[];
  readonly nfts: readonly string[];
  readonly pairs: readonly { readonly address: string; readonly token0: string; readonly token1: string }[];
  readonly routers: readonly string[];
  readonly disperse: string;
  readonly miners: readonly string[];
}

/** Stream tags: each derived stream hashes (seed, chainId, tag, ...), so streams never overlap. */
export const STREAM_TAG = {
  blockHash: 1,
  blockBody: 2,
  sibling: 3,
  timestamp: 4,
  account: 10,
  token: 11,
  tokenImpl: 12,
  nft: 13,
  pair: 14,
  router: 15,
  disperse: 16,
  miner: 17,
} as const;

const POOL_SIZES = { accounts: 4_000, tokens: 24, nfts: 6, pairs: 12, routers: 2, miners: 8 } as const;

/** The accounts and contracts of the chain `(chainId, seed)`. */
export function chainWorld(chainId: number, seed: number): ChainWorld {
  const addr = (tag: number, i: number) => new Prng(seedOf(seed, chainId, tag, i)).hex(20);
  const pool = (tag: number, n: number) => Array.from({ length: n }, (_, i) => addr(tag, i));
  const tokens = pool(STREAM_TAG.token, POOL_SIZES.tokens);
  return {
    chainId,
    seed,
    accounts: pool(STREAM_TAG.account, POOL_SIZES.accounts),
    tokens,
    tokenImpls: tokens.map((_, i) => (i % 4 === 0 ? addr(STREAM_TAG.tokenImpl, i) : undefined)),
    nfts: pool(STREAM_TAG.nft, POOL_SIZES.nfts),
    pairs: Array.from({ length: POOL_SIZES.pairs }, (_, i) => {
      const r = new Prng(seedOf(seed, chainId, STREAM_TAG.pair, i, 1));
      const a = r.skewedIndex(tokens.length, 2);
      const b = (a + 1 + r.int(0, tokens.length - 2)) % tokens.length;
      return { address: addr(STREAM_TAG.pair, i), token0: tokens[a] as string, token1: tokens[b] as string };
    }),
    routers: pool(STREAM_TAG.router, POOL_SIZES.routers),
    disperse: addr(STREAM_TAG.disperse, 0),
    miners: pool(STREAM_TAG.miner, POOL_SIZES.miners),
  };
}
