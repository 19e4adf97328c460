// Transaction kinds of the synthetic chain: each builds one transaction with its receipt, its events (logs)
// and its flattened call frames, the way a real EVM chain would record them. The mix (see TX_KIND_WEIGHTS)
// gives 0 events (ETH transfers, reverts), 1 (token transfers, approvals, NFTs), or several (swaps,
// multi-sends) per transaction, and call trees from one frame to three levels deep.

import { addressWord, ERC20_APPROVAL_SELECTOR, ERC20_TRANSFER_SELECTOR, uintWord } from './erc20.js';
import type { ChainWorld } from './chain-world.js';
import type { Prng } from './prng.js';
import type { EventRow, TraceRow, TransactionRow } from './block-rows.js';

/** Function selectors and event topics (keccak of the signatures, as on mainnet). */
const FN = {
  transfer: '0xa9059cbb',
  transferFrom: '0x23b872dd',
  approve: '0x095ea7b3',
  balanceOf: '0x70a08231',
  swapExactTokens: '0x38ed1739',
  pairSwap: '0x022c0d9f',
  disperseToken: '0xc73a2d60',
} as const;
const SWAP_TOPIC = '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822';
const SYNC_TOPIC = '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1';
const OWNERSHIP_TOPIC = '0x8be0079c531659141344cd1fd0a4f28419497f9722a3daafe3b4186f6b6457e0';
const ZERO_WORD = uintWord(0n);
const TRUE_WORD = uintWord(1n);
const MAX_UINT = (1n << 256n) - 1n;

export const TX_KIND_WEIGHTS = {
  ethTransfer: 28,
  erc20Transfer: 32,
  swap: 12,
  multiSend: 3,
  approval: 8,
  nftTransfer: 5,
  create: 2,
  reverted: 10,
} as const;
export type TxKind = keyof typeof TX_KIND_WEIGHTS;

export interface BlockBase {
  readonly chain_id: number;
  readonly block_number: number;
  readonly block_hash: string;
}

export interface BuiltTx {
  readonly tx: TransactionRow;
  readonly events: EventRow[];
  readonly traces: TraceRow[];
}

// Rows are object literals with every field spelled out: on Node 20 `{ ...base, more }` builds slow
// dictionary-mode objects (measured ~30x slower), and the generator makes millions of rows.
const words = (...ws: string[]) => ws.map((w) => w.slice(2)).join('');

/** Builds the transactions of one block; `rng` is the block's own stream. */
export class TxBuilder {
  constructor(
    private readonly world: ChainWorld,
    private readonly rng: Prng,
    private readonly base: BlockBase,
  ) {}

  /** Transaction `idx` of the block; its events take log indexes from `firstLogIdx` on. */
  build(idx: number, firstLogIdx: number): BuiltTx {
    const kind = this.rng.weighted(TX_KIND_WEIGHTS);
    const from = this.account();
    const out: BuiltTx = {
      tx: {
        chain_id: this.base.chain_id,
        block_number: this.base.block_number,
        block_hash: this.base.block_hash,
        idx,
        hash: this.rng.hex(32),
        from_address: from,
        to_address: null,
        value: '0',
        gas_used: 0,
        status: 1,
        input: '0x',
      },
      events: [],
      traces: [],
    };
    const ctx: TxContext = { out, from, nextLog: firstLogIdx };
    this.fill(kind, ctx);
    return out;
  }

  private fill(kind: TxKind, c: TxContext): void {
    const r = this.rng;
    switch (kind) {
      case 'ethTransfer': {
        const to = this.account();
        this.tx(c, to, r.bigAmount(15, 20).toString(), 21_000, '0x');
        this.frame(c, [], 'call', c.from, to, c.out.tx.value, 0, '0x', '0x');
        return;
      }
      case 'erc20Transfer': {
        const i = r.skewedIndex(this.world.tokens.length, 2);
        const token = this.world.tokens[i] as string;
        const to = this.account();
        const amount = r.bigAmount(1, 25);
        const input = FN.transfer + words(addressWord(to), uintWord(amount));
        const gas = r.int(34_000, 65_000);
        this.tx(c, token, '0', gas, input);
        this.transferEvent(c, token, c.from, to, amount);
        this.frame(c, [], 'call', c.from, token, '0', gas - 21_000, input, TRUE_WORD);
        const impl = this.world.tokenImpls[i];
        if (impl !== undefined)
          this.frame(c, [0], 'delegatecall', token, impl, '0', gas - 23_600, input, TRUE_WORD);
        return;
      }
      case 'swap': {
        const pair = this.world.pairs[r.skewedIndex(this.world.pairs.length, 1.5)];
        if (pair === undefined) throw new RangeError('no pairs');
        const router = r.pick(this.world.routers);
        const [tokenIn, tokenOut] = r.chance(0.5) ? [pair.token0, pair.token1] : [pair.token1, pair.token0];
        const amountIn = r.bigAmount(6, 24);
        const amountOut = r.bigAmount(6, 24);
        const input = FN.swapExactTokens + r.hexDigits(160);
        const gas = r.int(110_000, 180_000);
        this.tx(c, router, '0', gas, input);
        this.transferEvent(c, tokenIn, c.from, pair.address, amountIn);
        this.transferEvent(c, tokenOut, pair.address, c.from, amountOut);
        this.event(
          c,
          pair.address,
          [SYNC_TOPIC],
          `0x${words(uintWord(r.bigAmount(20, 26)), uintWord(r.bigAmount(20, 26)))}`,
        );
        const in0 = tokenIn === pair.token0;
        const swapData = in0 ? [amountIn, 0n, 0n, amountOut] : [0n, amountIn, amountOut, 0n];
        this.event(
          c,
          pair.address,
          [SWAP_TOPIC, addressWord(router), addressWord(c.from)],
          `0x${words(...swapData.map(uintWord))}`,
        );
        const pull =
          FN.transferFrom + words(addressWord(c.from), addressWord(pair.address), uintWord(amountIn));
        const push = FN.transfer + words(addressWord(c.from), uintWord(amountOut));
        this.frame(c, [], 'call', c.from, router, '0', gas - 21_000, input, `0x${r.hexDigits(96)}`);
        this.frame(c, [0], 'call', router, tokenIn, '0', r.int(9_000, 30_000), pull, TRUE_WORD);
        this.frame(
          c,
          [1],
          'call',
          router,
          pair.address,
          '0',
          r.int(40_000, 70_000),
          FN.pairSwap + r.hexDigits(128),
          '0x',
        );
        this.frame(c, [1, 0], 'call', pair.address, tokenOut, '0', r.int(9_000, 30_000), push, TRUE_WORD);
        for (const [k, token] of [tokenIn, tokenOut].entries()) {
          const q = FN.balanceOf + words(addressWord(pair.address));
          this.frame(
            c,
            [1, k + 1],
            'staticcall',
            pair.address,
            token,
            '0',
            r.int(500, 2_600),
            q,
            uintWord(r.bigAmount(20, 26)),
          );
        }
        return;
      }
      case 'multiSend': {
        const token = this.world.tokens[r.skewedIndex(this.world.tokens.length, 2)] as string;
        const n = r.int(2, 8);
        const gas = 40_000 + n * r.int(25_000, 30_000);
        const input = FN.disperseToken + r.hexDigits(32 * (3 + 2 * n));
        this.tx(c, this.world.disperse, '0', gas, input);
        this.frame(c, [], 'call', c.from, this.world.disperse, '0', gas - 21_000, input, '0x');
        for (let k = 0; k < n; k++) {
          const to = this.account();
          const amount = r.bigAmount(1, 22);
          this.transferEvent(c, token, c.from, to, amount);
          const pull = FN.transferFrom + words(addressWord(c.from), addressWord(to), uintWord(amount));
          this.frame(c, [k], 'call', this.world.disperse, token, '0', r.int(20_000, 28_000), pull, TRUE_WORD);
        }
        return;
      }
      case 'approval': {
        const token = this.world.tokens[r.skewedIndex(this.world.tokens.length, 2)] as string;
        const spender = r.chance(0.7) ? r.pick(this.world.routers) : this.world.disperse;
        const amount = r.chance(0.5) ? MAX_UINT : r.bigAmount(1, 25);
        const input = FN.approve + words(addressWord(spender), uintWord(amount));
        const gas = r.int(24_000, 46_000);
        this.tx(c, token, '0', gas, input);
        this.event(
          c,
          token,
          [ERC20_APPROVAL_SELECTOR, addressWord(c.from), addressWord(spender)],
          uintWord(amount),
        );
        this.frame(c, [], 'call', c.from, token, '0', gas - 21_000, input, TRUE_WORD);
        return;
      }
      case 'nftTransfer': {
        const nft = r.pick(this.world.nfts);
        const to = this.account();
        const id = uintWord(BigInt(r.int(1, 20_000)));
        const input = FN.transferFrom + words(addressWord(c.from), addressWord(to), id);
        const gas = r.int(50_000, 90_000);
        this.tx(c, nft, '0', gas, input);
        // ERC-721: same selector as ERC-20 Transfer, but the token id is a fourth topic and data is empty.
        this.event(c, nft, [ERC20_TRANSFER_SELECTOR, addressWord(c.from), addressWord(to), id], '0x');
        this.frame(c, [], 'call', c.from, nft, '0', gas - 21_000, input, '0x');
        return;
      }
      case 'create': {
        const created = r.hex(20);
        const input = `0x60806040${r.hexDigits(r.int(200, 1_200))}`;
        const gas = r.int(200_000, 1_500_000);
        this.tx(c, null, '0', gas, input);
        this.event(c, created, [OWNERSHIP_TOPIC, ZERO_WORD, addressWord(c.from)], '0x');
        this.frame(
          c,
          [],
          'create',
          c.from,
          created,
          '0',
          gas - 53_000,
          input,
          `0x6080${r.hexDigits(r.int(100, 800))}`,
        );
        return;
      }
      case 'reverted': {
        const to = r.chance(0.5) ? r.pick(this.world.routers) : r.pick(this.world.tokens);
        const input = FN.transfer + r.hexDigits(64);
        const gas = r.int(22_000, 60_000);
        this.tx(c, to, '0', gas, input);
        c.out.tx.status = 0;
        this.frame(c, [], 'call', c.from, to, '0', gas - 21_000, input, null, 'execution reverted');
        return;
      }
      default: {
        const unreachable: never = kind;
        throw new RangeError(`unknown tx kind ${String(unreachable)}`);
      }
    }
  }

  private account(): string {
    return this.world.accounts[this.rng.skewedIndex(this.world.accounts.length, 2)] as string;
  }

  private tx(c: TxContext, to: string | null, value: string, gas: number, input: string): void {
    Object.assign(c.out.tx, { to_address: to, value, gas_used: gas, input });
  }

  private event(c: TxContext, contract: string, topics: string[], data: string): void {
    const selector = topics[0] as string;
    c.out.events.push({
      chain_id: this.base.chain_id,
      block_number: this.base.block_number,
      block_hash: this.base.block_hash,
      idx: c.nextLog++,
      tx_hash: c.out.tx.hash,
      contract_id: contract,
      selector,
      topics,
      data,
    });
  }

  private transferEvent(c: TxContext, token: string, from: string, to: string, amount: bigint): void {
    this.event(c, token, [ERC20_TRANSFER_SELECTOR, addressWord(from), addressWord(to)], uintWord(amount));
  }

  private frame(
    c: TxContext,
    address: number[],
    callType: TraceRow['call_type'],
    from: string,
    to: string | null,
    value: string,
    gas: number,
    input: string,
    output: string | null,
    error: string | null = null,
  ): void {
    c.out.traces.push({
      chain_id: this.base.chain_id,
      block_number: this.base.block_number,
      block_hash: this.base.block_hash,
      tx_idx: c.out.tx.idx,
      trace_address: address.join(','),
      call_type: callType,
      from_address: from,
      to_address: to,
      value,
      gas_used: Math.max(0, gas),
      input,
      output,
      error,
    });
  }
}

interface TxContext {
  readonly out: { tx: TransactionRow; events: EventRow[]; traces: TraceRow[] };
  readonly from: string;
  nextLog: number;
}
