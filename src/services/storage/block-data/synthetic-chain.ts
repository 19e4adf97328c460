// A synthetic EVM-like chain for demos, tests and benchmarks. Pure and deterministic: the output is a
// function of (chainId, fromBlock, blocks, seed) alone, and block n's content depends only on (seed,
// chainId, n) — every block draws from its own derived PRNG stream (prng.ts), so generating 1..100 and
// 51..100 agree on 51..100, and the generator never holds more than one block in memory.
//
// Shape of the chain:
//   - one canonical block per height, parent_hash = the canonical hash of the height below (genesis: zero);
//   - ~1% of heights also carry a non-canonical sibling (canonical = false, same parent, its own hash,
//     timestamp and transactions), yielded right after the canonical block;
//   - timestamps grow by 8..16 s (12 s on average) per height;
//   - a block stops taking transactions at its 30M gas limit;
//   - 0..~200 transactions per block, skewed towards few (see txCountTarget), of the kinds in
//     synthetic-txs.ts; events carry block-wide log indexes; traces are flattened call frames.

import { Prng, seedOf } from './prng.js';
import { chainWorld, STREAM_TAG as TAG, type ChainWorld } from './chain-world.js';
import { TxBuilder, type BlockBase } from './synthetic-txs.js';
import type { EventRow, SyntheticBlock, TraceRow, TransactionRow } from './block-rows.js';

export interface SyntheticChainOptions {
  readonly chainId: number;
  /** First height (0 = genesis, which has no transactions). */
  readonly fromBlock: number;
  /** How many heights; siblings come on top. */
  readonly blocks: number;
  readonly seed: number;
}

export const CHAIN_SHAPE = {
  genesisTimestamp: 1_700_000_000,
  blockTimeS: 12,
  gasLimit: 30_000_000,
  siblingRate: 0.01,
  emptyBlockRate: 0.04,
  maxTxsPerBlock: 200,
} as const;

export const ZERO_HASH = `0x${'0'.repeat(64)}`;

/** The hash of block `number` (variant 0 = canonical, 1 = its sibling) of the chain `(chainId, seed)`. */
export function blockHashOf(
  chain: Pick<SyntheticChainOptions, 'chainId' | 'seed'>,
  number: number,
  variant: 0 | 1 = 0,
): string {
  return new Prng(seedOf(chain.seed, chain.chainId, TAG.blockHash, number, variant)).hex(32);
}

/** Whether height `number` carries a non-canonical sibling block. */
export function hasSibling(chain: Pick<SyntheticChainOptions, 'chainId' | 'seed'>, number: number): boolean {
  if (number === 0) return false;
  return new Prng(seedOf(chain.seed, chain.chainId, TAG.sibling, number)).next() < CHAIN_SHAPE.siblingRate;
}

function timestampOf(chain: Pick<SyntheticChainOptions, 'chainId' | 'seed'>, number: number): number {
  const jitter = seedOf(chain.seed, chain.chainId, TAG.timestamp, number) % 5; // 0..4 → gaps of 8..16 s
  return CHAIN_SHAPE.genesisTimestamp + number * CHAIN_SHAPE.blockTimeS + jitter - 2;
}

/** How many transactions a block aims for: a few empty blocks, most small, a tail up to the maximum. */
function txCountTarget(rng: Prng): number {
  if (rng.chance(CHAIN_SHAPE.emptyBlockRate)) return 0;
  return 1 + Math.floor((CHAIN_SHAPE.maxTxsPerBlock - 1) * Math.pow(rng.next(), 3));
}

/** One block (canonical or its sibling) with its transactions, events and traces. */
export function syntheticBlock(world: ChainWorld, number: number, canonical: boolean): SyntheticBlock {
  const variant = canonical ? 0 : 1;
  const rng = new Prng(seedOf(world.seed, world.chainId, TAG.blockBody, number, variant));
  const base: BlockBase = {
    chain_id: world.chainId,
    block_number: number,
    block_hash: blockHashOf(world, number, variant),
  };
  const transactions: TransactionRow[] = [];
  const events: EventRow[] = [];
  const traces: TraceRow[] = [];
  const builder = new TxBuilder(world, rng, base);
  const target = number === 0 ? 0 : txCountTarget(rng);
  let gasUsed = 0;
  for (let i = 0; i < target; i++) {
    const built = builder.build(transactions.length, events.length);
    if (gasUsed + built.tx.gas_used > CHAIN_SHAPE.gasLimit) break; // the block is full
    gasUsed += built.tx.gas_used;
    transactions.push(built.tx);
    events.push(...built.events);
    traces.push(...built.traces);
  }
  return {
    block: {
      chain_id: world.chainId,
      number,
      hash: base.block_hash,
      parent_hash: number === 0 ? ZERO_HASH : blockHashOf(world, number - 1, 0),
      timestamp: timestampOf(world, number) + variant,
      miner: world.miners[rng.skewedIndex(world.miners.length, 2)] as string,
      gas_used: gasUsed,
      gas_limit: CHAIN_SHAPE.gasLimit,
      tx_count: transactions.length,
      canonical,
    },
    transactions,
    events,
    traces,
  };
}

function checkOptions(opts: SyntheticChainOptions): void {
  const bad = (name: string, v: number) => {
    throw new RangeError(`synthetic chain: ${name} must be a non-negative safe integer, got ${v}`);
  };
  if (!Number.isSafeInteger(opts.chainId) || opts.chainId < 0) bad('chainId', opts.chainId);
  if (!Number.isSafeInteger(opts.fromBlock) || opts.fromBlock < 0) bad('fromBlock', opts.fromBlock);
  if (!Number.isSafeInteger(opts.blocks) || opts.blocks < 0) bad('blocks', opts.blocks);
  if (!Number.isSafeInteger(opts.seed) || opts.seed < 0) bad('seed', opts.seed);
  if (!Number.isSafeInteger(opts.fromBlock + opts.blocks))
    bad('fromBlock + blocks', opts.fromBlock + opts.blocks);
}

/**
 * The blocks of heights fromBlock .. fromBlock + blocks − 1, in order; a height's sibling (if any) right
 * after its canonical block. Lazy: one block at a time, so 100k+ blocks stream in constant memory.
 */
export function* syntheticChain(opts: SyntheticChainOptions): Generator<SyntheticBlock, void, undefined> {
  checkOptions(opts);
  const world = chainWorld(opts.chainId, opts.seed);
  for (let n = opts.fromBlock; n < opts.fromBlock + opts.blocks; n++) {
    yield syntheticBlock(world, n, true);
    if (hasSibling(world, n)) yield syntheticBlock(world, n, false);
  }
}
