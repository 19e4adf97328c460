import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../../src/kernel/config.js';
import { rowProblems } from '../../../../../src/services/storage/row-check.js';
import {
  addressWord,
  decodeErc20Transfer,
  ERC20_TRANSFER_SELECTOR,
  syntheticChain,
  tokenTransfersOf,
  uintWord,
} from '../../../../../src/services/storage/block-data/index.js';

const REPO = path.resolve(import.meta.dirname, '../../../../..');
const tables = loadConfig({ configPath: path.join(REPO, 'blockx.config.yaml'), env: {} }).tables;

const TOKEN = '0x' + 'ab'.repeat(20);
const FROM = '0x' + '01'.repeat(20);
const TO = '0x' + '02'.repeat(20);
const transfer = (over: Record<string, unknown> = {}) => ({
  chain_id: 1,
  block_number: 7,
  idx: 3,
  contract_id: TOKEN,
  topics: [ERC20_TRANSFER_SELECTOR, addressWord(FROM), addressWord(TO)],
  data: uintWord(1234n),
  ...over,
});

describe('ERC-20 Transfer decoding', () => {
  it('round-trips any addresses and uint256 amount', () => {
    const address = fc
      .uint8Array({ minLength: 20, maxLength: 20 })
      .map((b) => '0x' + Buffer.from(b).toString('hex'));
    const amount = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
    fc.assert(
      fc.property(address, address, address, amount, (token, from, to, value) => {
        const event = {
          contract_id: token,
          topics: [ERC20_TRANSFER_SELECTOR, addressWord(from), addressWord(to)],
          data: uintWord(value),
        };
        expect(decodeErc20Transfer(event)).toEqual({ token, from, to, amount: value.toString() });
      }),
    );
  });

  it.each([
    [
      'an ERC-721 Transfer (token id as a fourth topic, empty data)',
      { topics: [...transfer().topics, uintWord(5n)], data: '0x' },
    ],
    ['another selector', { topics: ['0x' + '11'.repeat(32), addressWord(FROM), addressWord(TO)] }],
    ['data longer than one word', { data: uintWord(1n) + '00'.repeat(32) }],
    ['data shorter than one word', { data: '0x01' }],
    [
      'a topic that is not a padded address',
      { topics: [ERC20_TRANSFER_SELECTOR, '0x' + 'ff'.repeat(32), addressWord(TO)] },
    ],
    ['topics that are not an array', { topics: 'nope' }],
    ['a contract that is not an address', { contract_id: 'token' }],
  ])('rejects %s', (_name, over) => {
    expect(decodeErc20Transfer(transfer(over))).toBeUndefined();
  });

  it('accepts an upper-case selector and returns lower-case addresses', () => {
    const t = decodeErc20Transfer(
      transfer({
        contract_id: TOKEN.toUpperCase().replace('0X', '0x'),
        topics: [
          ERC20_TRANSFER_SELECTOR.toUpperCase().replace('0X', '0x'),
          addressWord(FROM),
          addressWord(TO),
        ],
      }),
    );
    expect(t).toEqual({ token: TOKEN, from: FROM, to: TO, amount: '1234' });
  });

  it('encoders reject out-of-range input', () => {
    expect(() => uintWord(-1n)).toThrow(RangeError);
    expect(() => uintWord(1n << 256n)).toThrow(RangeError);
    expect(() => addressWord('0x1234')).toThrow(RangeError);
  });
});

describe('tokenTransfersOf', () => {
  it('gives one token_transfers row per ERC-20 Transfer, keyed by the log index', () => {
    expect(
      tokenTransfersOf([transfer(), transfer({ idx: 4, topics: [...transfer().topics, uintWord(1n)] })]),
    ).toEqual([
      {
        chain_id: 1,
        block_number: 7,
        log_idx: 3,
        token: TOKEN,
        from_address: FROM,
        to_address: TO,
        amount: '1234',
      },
    ]);
  });

  it('on generated blocks: every 3-topic Transfer and nothing else; rows fit token_transfers', () => {
    const table = tables.token_transfers!;
    let transfers = 0;
    let erc721 = 0;
    let events = 0;
    for (const block of syntheticChain({ chainId: 5, fromBlock: 1, blocks: 60, seed: 3 })) {
      const rows = tokenTransfersOf(block.events);
      const expected = block.events.filter(
        (e) => e.selector === ERC20_TRANSFER_SELECTOR && e.topics.length === 3,
      );
      expect(rows.map((r) => r.log_idx)).toEqual(expected.map((e) => e.idx));
      for (const row of rows) expect(rowProblems('token_transfers', table, row)).toEqual([]);
      // The amount in data matches the generating transaction's calldata for plain transfer() calls.
      for (const tx of block.transactions.filter((t) => t.input.startsWith('0xa9059cbb') && t.status === 1)) {
        const row = rows.find((r) => expected.find((e) => e.idx === r.log_idx)?.tx_hash === tx.hash);
        expect(row?.amount).toBe(BigInt('0x' + tx.input.slice(74, 138)).toString());
        expect(row?.to_address).toBe('0x' + tx.input.slice(34, 74));
      }
      transfers += rows.length;
      erc721 += block.events.filter(
        (e) => e.selector === ERC20_TRANSFER_SELECTOR && e.topics.length === 4,
      ).length;
      events += block.events.length;
    }
    expect(transfers / events).toBeGreaterThan(0.4); // "a good share" of events are ERC-20 Transfers
    expect(erc721).toBeGreaterThan(0); // and look-alikes exist, so the decoder's check is exercised
  });
});
