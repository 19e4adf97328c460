// BlockFetcher: the node's data for one block, in as few HTTP requests as the node allows (docs/ingest.md
// § Requests per block). One JSON-RPC batch asks for the block with its transactions, its receipts
// (eth_getBlockReceipts), its traces (trace_block, or debug_traceBlockByNumber with the call tracer) and, when
// the source names a chain, eth_chainId. What the node does not serve is learnt from its answers and
// remembered for the fetcher's life: no eth_getBlockReceipts → one eth_getTransactionReceipt per transaction
// (batched); no trace_block → the call tracer; neither → no traces, said once (`notices`).
//
// It returns the node's JSON as it came; mapping it to rows, and checking it, is the writer's business
// (plugins/writers/chain-ingest/). The fetcher checks only what decides which request to make next.
import { ChainRpcError, ChainRpcErrorCode } from '../errors.js';
import type { RpcAnswer, RpcCall, RpcClient } from './rpc-client.js';

export type TraceSource = 'trace_block' | 'debug_traceBlockByNumber';

export interface RawBlock {
  readonly number: number;
  /** eth_getBlockByNumber(n, true): the block with full transaction objects. */
  readonly block: Record<string, unknown>;
  /** One receipt per transaction, in block order. */
  readonly receipts: readonly Record<string, unknown>[];
  /** The traces as the node served them, or undefined when skipped. */
  readonly traces?: { readonly source: TraceSource; readonly data: unknown };
}

/** A block's place in the chain. */
export interface BlockHeader {
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
}

export interface FetchBlockOptions {
  /** Fetch traces (a source's `traces: false` skips them). */
  readonly traces: boolean;
  /** When set, every batch also asks eth_chainId and a different answer fails as WRONG_CHAIN. */
  readonly chainId?: number;
}

/** Receipts fetched per batch when the node lacks eth_getBlockReceipts. */
export const RECEIPTS_PER_BATCH = 100;

export class BlockFetcher {
  /** Learnt from the node: undefined until its first answer says. */
  private blockReceipts: boolean | undefined;
  private traceSource: TraceSource | 'none' | undefined;
  /** Things said once (a missing method and what is done instead). */
  readonly notices: string[] = [];

  constructor(readonly client: RpcClient) {}

  /** The node's chain id (eth_chainId). */
  async chainId(): Promise<number> {
    return this.parseChainId(await this.client.call('eth_chainId'));
  }

  /** The node's latest block number (eth_blockNumber). */
  async head(): Promise<number> {
    const hex = await this.client.call('eth_blockNumber');
    return this.quantity(hex, 'eth_blockNumber');
  }

  /**
   * The node's block at `at` (a height, or 'latest' for its head) without transactions: its number, hash
   * and parent hash, lower-case; null when the node has no block there. What the head follower polls
   * (docs/ingest.md § Following the head).
   */
  async header(at: number | 'latest'): Promise<BlockHeader | null> {
    const tag = at === 'latest' ? 'latest' : `0x${at.toString(16)}`;
    const block = await this.client.call('eth_getBlockByNumber', [tag, false]);
    if (block === null) return null;
    const b = (typeof block === 'object' ? block : {}) as Record<string, unknown>;
    const hash = (field: string): string => {
      const v = b[field];
      if (typeof v === 'string' && /^0x[0-9a-fA-F]{64}$/.test(v)) return v.toLowerCase();
      throw new ChainRpcError(
        ChainRpcErrorCode.BAD_RESPONSE,
        `block ${tag}: ${field} is ${JSON.stringify(v)}, not a 32-byte hash`,
        { ...this.where('eth_getBlockByNumber'), retryable: false },
      );
    };
    return {
      number: this.quantity(b['number'], 'eth_getBlockByNumber'),
      hash: hash('hash'),
      parentHash: hash('parentHash'),
    };
  }

  async fetch(number: number, opts: FetchBlockOptions): Promise<RawBlock> {
    const tag = `0x${number.toString(16)}`;
    const calls: RpcCall[] = [{ method: 'eth_getBlockByNumber', params: [tag, true] }];
    const at = { receipts: -1, traces: -1, chainId: -1 };
    if (this.blockReceipts !== false)
      at.receipts = calls.push({ method: 'eth_getBlockReceipts', params: [tag] }) - 1;
    const traceSource = opts.traces ? (this.traceSource ?? 'trace_block') : 'none';
    if (traceSource !== 'none') at.traces = calls.push(traceCall(traceSource, tag)) - 1;
    if (opts.chainId !== undefined) at.chainId = calls.push({ method: 'eth_chainId', params: [] }) - 1;

    const answers = await this.client.batch(calls);
    if (at.chainId >= 0) this.checkChain(answers[at.chainId] as RpcAnswer, opts.chainId as number);
    const block = resultOf(answers[0] as RpcAnswer);
    if (block === null || typeof block !== 'object') {
      throw new ChainRpcError(ChainRpcErrorCode.BLOCK_NOT_FOUND, `the node has no block ${number}`, {
        ...this.where('eth_getBlockByNumber'),
        // A block past the head may exist a moment later.
        retryable: true,
      });
    }
    const txs = (block as { transactions?: unknown }).transactions;
    const receipts = await this.receipts(tag, at.receipts >= 0 ? answers[at.receipts] : undefined, txs);
    const traces = await this.traces(tag, traceSource, at.traces >= 0 ? answers[at.traces] : undefined);
    return {
      number,
      block: block as Record<string, unknown>,
      receipts,
      ...(traces !== undefined ? { traces } : {}),
    };
  }

  private async receipts(
    tag: string,
    answer: RpcAnswer | undefined,
    txs: unknown,
  ): Promise<Record<string, unknown>[]> {
    if (answer !== undefined) {
      if (answer.ok) {
        this.blockReceipts = true;
        return asList(answer.result, this.where('eth_getBlockReceipts'));
      }
      if (answer.error.code !== ChainRpcErrorCode.METHOD_NOT_SUPPORTED) throw answer.error;
      this.blockReceipts = false;
      this.notices.push(
        `source ${this.client.settings.name} does not serve eth_getBlockReceipts: one eth_getTransactionReceipt per transaction instead`,
      );
    }
    const hashes = asList(txs, this.where('eth_getBlockByNumber')).map((tx) =>
      typeof tx === 'object' && tx !== null ? (tx as { hash?: unknown }).hash : tx,
    );
    const out: Record<string, unknown>[] = [];
    for (let i = 0; i < hashes.length; i += RECEIPTS_PER_BATCH) {
      const chunk = hashes.slice(i, i + RECEIPTS_PER_BATCH);
      const answers = await this.client.batch(
        chunk.map((h) => ({ method: 'eth_getTransactionReceipt', params: [h] })),
      );
      for (const a of answers) {
        const r = resultOf(a);
        if (r === null || typeof r !== 'object') {
          throw new ChainRpcError(
            ChainRpcErrorCode.BAD_RESPONSE,
            `no receipt for a transaction of block ${tag}`,
            {
              ...this.where('eth_getTransactionReceipt'),
              retryable: true,
            },
          );
        }
        out.push(r as Record<string, unknown>);
      }
    }
    return out;
  }

  private async traces(
    tag: string,
    source: TraceSource | 'none',
    answer: RpcAnswer | undefined,
  ): Promise<RawBlock['traces']> {
    let current = source;
    let a = answer;
    while (current !== 'none' && a !== undefined) {
      if (a.ok) {
        this.traceSource = current;
        return { source: current, data: a.result };
      }
      if (a.error.code !== ChainRpcErrorCode.METHOD_NOT_SUPPORTED) throw a.error;
      if (current === 'trace_block') {
        current = 'debug_traceBlockByNumber';
        const [next] = await this.client.batch([traceCall(current, tag)]);
        a = next;
      } else {
        current = 'none';
      }
    }
    if (this.traceSource !== 'none') {
      this.traceSource = 'none';
      this.notices.push(
        `source ${this.client.settings.name} serves neither trace_block nor debug_traceBlockByNumber: the traces table is skipped`,
      );
    }
    return undefined;
  }

  private checkChain(answer: RpcAnswer, expected: number): void {
    const actual = this.parseChainId(resultOf(answer));
    if (actual !== expected) {
      throw new ChainRpcError(
        ChainRpcErrorCode.WRONG_CHAIN,
        `the node is on chain ${actual}, the source is configured for chain ${expected}`,
        { ...this.where('eth_chainId'), retryable: false },
      );
    }
  }

  private parseChainId(value: unknown): number {
    return this.quantity(value, 'eth_chainId');
  }

  private quantity(value: unknown, method: string): number {
    if (typeof value === 'string' && /^0x[0-9a-f]+$/i.test(value)) {
      const n = Number(BigInt(value));
      if (Number.isSafeInteger(n)) return n;
    }
    throw new ChainRpcError(ChainRpcErrorCode.BAD_RESPONSE, `not a quantity: ${JSON.stringify(value)}`, {
      ...this.where(method),
      retryable: false,
    });
  }

  private where(method: string) {
    return { source: this.client.settings.name, url: this.client.maskedUrl, method };
  }
}

function traceCall(source: TraceSource, tag: string): RpcCall {
  return source === 'trace_block'
    ? { method: 'trace_block', params: [tag] }
    : { method: 'debug_traceBlockByNumber', params: [tag, { tracer: 'callTracer' }] };
}

function resultOf(answer: RpcAnswer): unknown {
  if (!answer.ok) throw answer.error;
  return answer.result;
}

function asList(
  value: unknown,
  where: { source: string; url: string; method: string },
): Record<string, unknown>[] {
  if (!Array.isArray(value)) {
    throw new ChainRpcError(ChainRpcErrorCode.BAD_RESPONSE, `expected an array, got ${typeof value}`, {
      ...where,
      retryable: false,
    });
  }
  return value as Record<string, unknown>[];
}
