// BlockFetcher + the chain-ingest writer's mapping (rowsOfBlock) against Anvil: the rows equal what the node
// says when asked another way (eth_getLogs, eth_getTransactionByHash, eth_getBalance-free checks), for both
// trace sources, with and without eth_getBlockReceipts, and a node on the wrong chain is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOfBlock } from '../../../../plugins/writers/chain-ingest-write/src/index.js';
import { BlockFetcher } from '../../../../src/services/chain-rpc/adapters/block-fetcher.js';
import { RpcClient, type RpcSourceSettings } from '../../../../src/services/chain-rpc/adapters/rpc-client.js';
import { ChainRpcErrorCode } from '../../../../src/services/chain-rpc/errors.js';
import {
  ANVIL_CHAIN_ID,
  ANVIL_LIMITS,
  populateChain,
  startAnvil,
  type AnvilNode,
  type PopulatedChain,
} from '../../../support/anvil.js';
import { startFaultProxy, type FaultProxy } from '../../../support/rpc-fault-proxy.js';

const settings = (url: string): RpcSourceSettings => ({ name: 'anvil', urls: [url], ...ANVIL_LIMITS });

interface Log {
  address: string;
  topics: string[];
  data: string;
  logIndex: string;
  transactionHash: string;
  blockHash: string;
}

describe('chain-ingest rows from Anvil', () => {
  let anvil: AnvilNode;
  let proxy: FaultProxy;
  let chain: PopulatedChain;
  const clients: RpcClient[] = [];
  const fetcher = (url = anvil.url) => {
    const client = new RpcClient(settings(url));
    clients.push(client);
    return new BlockFetcher(client);
  };
  const hex = (n: number) => `0x${n.toString(16)}`;

  beforeAll(async () => {
    anvil = await startAnvil();
    proxy = await startFaultProxy(anvil.url);
    chain = await populateChain(anvil, { blocks: 3, transfersPerBlock: 3 });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await proxy?.close();
    await anvil?.stop();
  });

  it('maps a block, its transactions and its events as the node reports them', async () => {
    const f = fetcher();
    for (let n = chain.from; n <= chain.to; n++) {
      const rows = rowsOfBlock(await f.fetch(n, { traces: true, chainId: ANVIL_CHAIN_ID }), ANVIL_CHAIN_ID);
      const block = await anvil.rpc<{ hash: string; parentHash: string; transactions: string[] }>(
        'eth_getBlockByNumber',
        [hex(n), false],
      );
      expect(rows.blocks).toEqual([
        expect.objectContaining({
          chain_id: ANVIL_CHAIN_ID,
          number: n,
          hash: block.hash,
          parent_hash: block.parentHash,
          tx_count: 5,
          canonical: true,
        }),
      ]);
      expect(rows.transactions.map((t) => t.hash)).toEqual(block.transactions);
      for (const t of rows.transactions) {
        const tx = await anvil.rpc<{ value: string; from: string; to: string | null; input: string }>(
          'eth_getTransactionByHash',
          [t.hash],
        );
        expect(t).toMatchObject({
          value: BigInt(tx.value).toString(),
          from_address: tx.from,
          to_address: tx.to,
          input: tx.input,
          status: 1,
          block_hash: block.hash,
        });
        expect(t.gas_used).toBeGreaterThan(0);
      }
      const logs = await anvil.rpc<Log[]>('eth_getLogs', [{ fromBlock: hex(n), toBlock: hex(n) }]);
      expect(rows.events).toEqual(
        logs.map((l) => ({
          chain_id: ANVIL_CHAIN_ID,
          block_number: n,
          block_hash: block.hash,
          idx: Number(l.logIndex),
          tx_hash: l.transactionHash,
          contract_id: l.address.toLowerCase(),
          selector: l.topics[0] ?? '',
          topics: l.topics,
          data: l.data,
        })),
      );
    }
  });

  it('flattens trace_block frames, the nested call of the forwarder included', async () => {
    const rows = rowsOfBlock(await fetcher().fetch(chain.from, { traces: true }), ANVIL_CHAIN_ID);
    expect(rows.traces?.map((t) => [t.tx_idx, t.trace_address])).toEqual([
      [0, ''],
      [1, ''],
      [2, ''],
      [3, ''],
      [3, '0'],
      [4, ''],
    ]);
    expect(rows.traces?.find((t) => t.trace_address === '0')).toMatchObject({
      call_type: 'call',
      from_address: chain.forwarder,
      to_address: chain.token,
      error: null,
    });
    expect(rows.traces?.at(-1)).toMatchObject({ value: (10n ** 15n).toString(), input: '0x' });
  });

  it('falls back to the call tracer, then to per-transaction receipts, and says so once', async () => {
    proxy.refuseMethods(['trace_block', 'eth_getBlockReceipts']);
    try {
      const f = fetcher(proxy.url);
      const viaProxy = rowsOfBlock(await f.fetch(chain.from, { traces: true }), ANVIL_CHAIN_ID);
      const direct = rowsOfBlock(await fetcher().fetch(chain.from, { traces: true }), ANVIL_CHAIN_ID);
      expect(viaProxy.transactions).toEqual(direct.transactions);
      expect(viaProxy.events).toEqual(direct.events);
      expect(viaProxy.traces?.map((t) => [t.tx_idx, t.trace_address, t.from_address, t.to_address])).toEqual(
        direct.traces?.map((t) => [t.tx_idx, t.trace_address, t.from_address, t.to_address]),
      );
      expect(f.notices).toHaveLength(1);
      expect(f.notices[0]).toContain('eth_getBlockReceipts');
      // What it learnt holds: the next block asks the node the way that works.
      const before = proxy.requests;
      await f.fetch(chain.to, { traces: true });
      expect(proxy.requests - before).toBe(2); // block + call tracer in one batch, the receipts in a second
    } finally {
      proxy.refuseMethods([]);
    }
  });

  it('skips traces when the node serves neither trace method, saying so once', async () => {
    proxy.refuseMethods(['trace_block', 'debug_traceBlockByNumber']);
    try {
      const f = fetcher(proxy.url);
      expect(rowsOfBlock(await f.fetch(chain.from, { traces: true }), ANVIL_CHAIN_ID).traces).toBeUndefined();
      await f.fetch(chain.to, { traces: true });
      expect(f.notices).toEqual([
        expect.stringContaining('serves neither trace_block nor debug_traceBlockByNumber'),
      ]);
    } finally {
      proxy.refuseMethods([]);
    }
  });

  it('refuses a node that lies about its chain, and a block it does not have', async () => {
    proxy.lieChainId('0x1');
    try {
      await expect(
        fetcher(proxy.url).fetch(chain.from, { traces: false, chainId: ANVIL_CHAIN_ID }),
      ).rejects.toMatchObject({
        code: ChainRpcErrorCode.WRONG_CHAIN,
        message: expect.stringContaining('the node is on chain 1, the source is configured for chain 31337'),
      });
    } finally {
      proxy.lieChainId(undefined);
    }
    await expect(fetcher().fetch(chain.to + 1000, { traces: false })).rejects.toMatchObject({
      code: ChainRpcErrorCode.BLOCK_NOT_FOUND,
      retryable: true,
    });
  });
});
