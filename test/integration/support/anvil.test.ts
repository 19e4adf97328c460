// test/support/anvil.ts: the node starts, the hand-assembled contracts do what their comments say, and
// populateChain fills each block as planned (other tests rely on this shape).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_CHAIN_ID, TRANSFER_TOPIC, populateChain, startAnvil } from '../../support/anvil.js';
import type { AnvilNode, PopulatedChain } from '../../support/anvil.js';
import { trackedCount } from '../../support/processes.js';

interface Log {
  address: string;
  topics: string[];
  data: string;
}
interface Trace {
  traceAddress: number[];
  action: { from: string; to: string };
  error?: string;
}

describe('startAnvil / populateChain', () => {
  let anvil: AnvilNode;
  let chain: PopulatedChain;
  const hex = (n: number) => `0x${n.toString(16)}`;

  beforeAll(async () => {
    anvil = await startAnvil();
    chain = await populateChain(anvil, { blocks: 3, transfersPerBlock: 2 });
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  it('serves chain id 31337', async () => {
    expect(Number(await anvil.rpc<string>('eth_chainId'))).toBe(ANVIL_CHAIN_ID);
  });

  it('mines one block per planned block, each with 2 transfers, a forwarded call and an ETH transfer', async () => {
    expect(chain.to - chain.from).toBe(2);
    expect(Number(await anvil.rpc<string>('eth_blockNumber'))).toBe(chain.to);
    for (let n = chain.from; n <= chain.to; n++) {
      const block = await anvil.rpc<{ transactions: string[] }>('eth_getBlockByNumber', [hex(n), false]);
      expect(block.transactions).toHaveLength(4);
    }
  });

  it('logs a Transfer from the token for every transfer, the forwarded one included', async () => {
    const logs = await anvil.rpc<Log[]>('eth_getLogs', [
      { fromBlock: hex(chain.from), toBlock: hex(chain.to) },
    ]);
    expect(logs).toHaveLength(9);
    expect(new Set(logs.map((l) => l.address))).toEqual(new Set([chain.token]));
    expect(new Set(logs.map((l) => l.topics[0]))).toEqual(new Set([TRANSFER_TOPIC]));
    // The forwarded transfer's sender (topics[1]) is the forwarder.
    const senders = logs.map((l) => `0x${(l.topics[1] as string).slice(26)}`);
    expect(senders.filter((s) => s === chain.forwarder)).toHaveLength(3);
  });

  it('traces the forwarded call as a nested frame that succeeded', async () => {
    const traces = await anvil.rpc<Trace[]>('trace_block', [hex(chain.from)]);
    const nested = traces.filter((t) => t.traceAddress.length === 1);
    expect(nested).toHaveLength(1);
    expect(nested[0]?.action).toMatchObject({ from: chain.forwarder, to: chain.token });
    expect(nested[0]?.error).toBeUndefined();
  });

  it('stop() ends the process', async () => {
    const before = trackedCount();
    const other = await startAnvil();
    expect(trackedCount()).toBe(before + 1);
    await other.stop();
    expect(trackedCount()).toBe(before);
  });
});
