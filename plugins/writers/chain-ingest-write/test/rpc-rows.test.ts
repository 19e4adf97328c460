// rowsOfBlock on hand-made answers: what a malformed or inconsistent answer fails with (the field's path,
// and whether asking again may help). The happy path is checked against Anvil in
// test/integration/services/chain-rpc/block-rows.test.ts.
import { describe, expect, it } from 'vitest';
import { ChainIngestErrorCode, rowsOfBlock } from '../src/index.js';
import type { RawBlock } from '../../../../src/services/chain-rpc/adapters/block-fetcher.js';

const H = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const A = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const BLOCK = {
  number: '0x5',
  hash: H(5),
  parentHash: H(4),
  timestamp: '0x64',
  miner: A(1),
  gasUsed: '0x5208',
  gasLimit: '0x1c9c380',
  transactions: [{ hash: H(100), from: A(2), to: null, value: '0x1bc16d674ec80000', input: '0x' }],
};
const RECEIPT = {
  transactionHash: H(100),
  blockHash: H(5),
  status: '0x0',
  gasUsed: '0x5208',
  logs: [{ address: A(0xabc).toUpperCase().replace('0X', '0x'), topics: [], data: '0x', logIndex: '0x0' }],
};
const raw = (over: { block?: object; receipt?: object; traces?: RawBlock['traces'] } = {}): RawBlock => ({
  number: 5,
  block: { ...BLOCK, ...over.block },
  receipts: [{ ...RECEIPT, ...over.receipt }],
  ...(over.traces ? { traces: over.traces } : {}),
});

describe('rowsOfBlock', () => {
  it('merges the receipt, writes the value in decimal, a log without topics has selector ""', () => {
    const rows = rowsOfBlock(raw(), 7);
    expect(rows.transactions[0]).toMatchObject({
      value: '2000000000000000000',
      status: 0,
      gas_used: 21000,
      to_address: null,
    });
    expect(rows.events[0]).toMatchObject({ selector: '', topics: [], contract_id: A(0xabc) });
    expect(rows.traces).toBeUndefined();
  });

  it.each([
    [
      'a quantity that is not hex',
      { block: { timestamp: 100 } },
      ChainIngestErrorCode.BAD_BLOCK_DATA,
      'block.timestamp',
      false,
    ],
    ['a short hash', { block: { hash: '0x12' } }, ChainIngestErrorCode.BAD_BLOCK_DATA, 'block.hash', false],
    [
      'a missing address',
      { block: { miner: undefined } },
      ChainIngestErrorCode.BAD_BLOCK_DATA,
      'block.miner is missing',
      false,
    ],
    [
      'a receipt of another block',
      { receipt: { blockHash: H(6) } },
      ChainIngestErrorCode.INCONSISTENT_ANSWERS,
      'receipt 0 is from block',
      true,
    ],
    [
      'a receipt of another transaction',
      { receipt: { transactionHash: H(101) } },
      ChainIngestErrorCode.INCONSISTENT_ANSWERS,
      'receipt 0 is for transaction',
      true,
    ],
    [
      'another height than asked',
      { block: { number: '0x6' } },
      ChainIngestErrorCode.BAD_BLOCK_DATA,
      'asked for 5',
      false,
    ],
    [
      'an unknown trace type',
      {
        traces: {
          source: 'trace_block',
          data: [{ type: 'teleport', transactionPosition: 0, traceAddress: [], action: {} }],
        },
      },
      ChainIngestErrorCode.BAD_BLOCK_DATA,
      'trace_block[0].type',
      false,
    ],
  ] as const)('%s fails with its path', (_name, over, code, text, retryable) => {
    expect(() => rowsOfBlock(raw(over as never), 7)).toThrow(
      expect.objectContaining({ code, retryable, message: expect.stringContaining(text) }),
    );
  });

  it('flattens call-tracer trees depth first', () => {
    const frame = (to: number, calls?: object[]) => ({
      type: 'CALL',
      from: A(2),
      to: A(to),
      value: '0x0',
      gasUsed: '0x1',
      input: '0x',
      ...(calls ? { calls } : {}),
    });
    const rows = rowsOfBlock(
      raw({
        traces: {
          source: 'debug_traceBlockByNumber',
          data: [{ txHash: H(100), result: frame(3, [frame(4, [frame(5)]), frame(6)]) }],
        },
      }),
      7,
    );
    expect(rows.traces?.map((t) => [t.trace_address, t.to_address, t.call_type])).toEqual([
      ['', A(3), 'call'],
      ['0', A(4), 'call'],
      ['0,0', A(5), 'call'],
      ['1', A(6), 'call'],
    ]);
  });

  it('each error code key equals its code', () => {
    for (const [key, code] of Object.entries(ChainIngestErrorCode)) expect(code).toBe(key);
  });
});
