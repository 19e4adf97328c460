// Block data: the synthetic chain generator and the JSON-lines loader behind `blockx data generate` and
// `blockx data load`, plus the ERC-20 helpers the demo uses to compute token_transfers.
export {
  BLOCK_TABLE_NAMES,
  rowsOf,
  type BlockRow,
  type BlockTableName,
  type EventRow,
  type SyntheticBlock,
  type TokenTransferRow,
  type TraceRow,
  type TransactionRow,
} from './block-rows.js';
export {
  addressWord,
  decodeErc20Transfer,
  ERC20_APPROVAL_SELECTOR,
  ERC20_TRANSFER_SELECTOR,
  tokenTransfersOf,
  uintWord,
  type Erc20Transfer,
} from './erc20.js';
export {
  BadLines,
  checkJsonlLine,
  checkJsonlLines,
  declaredTable,
  loadJsonl,
  type JsonlLine,
  type LoadJsonlOptions,
  type LoadJsonlReport,
} from './jsonl-loader.js';
export { Prng, seedOf } from './prng.js';
export {
  blockHashOf,
  CHAIN_SHAPE,
  hasSibling,
  syntheticBlock,
  syntheticChain,
  ZERO_HASH,
  type SyntheticChainOptions,
} from './synthetic-chain.js';
export { TX_KIND_WEIGHTS, type TxKind } from './synthetic-txs.js';
export { chainWorld, type ChainWorld } from './chain-world.js';
export { writeSyntheticChain, type ChainTotals } from './write-chain.js';
