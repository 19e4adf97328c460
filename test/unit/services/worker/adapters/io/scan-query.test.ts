// Scan translation: ScanQuery and a call's SDK scan options → the storage port's StorageScanQuery.
import { describe, expect, it } from 'vitest';
import type { ScanQuery } from '../../../../../../src/kernel/plugin-types.js';
import {
  callScanToQuery,
  tableConfig,
  toStorageScanQuery,
} from '../../../../../../src/services/worker/adapters/io/index.js';
import { TABLES, collect, harness } from './fixture.js';

function translate(table: string, query?: ScanQuery): unknown {
  return toStorageScanQuery(table, tableConfig(TABLES, table), query);
}

function thrown(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error('expected a throw');
}

describe('toStorageScanQuery', () => {
  const ok: { name: string; table: string; query?: ScanQuery; expected: unknown }[] = [
    { name: 'no query → scan everything', table: 'blocks', expected: {} },
    {
      name: 'block number → where[blockColumn]',
      table: 'transactions',
      query: { block: 10 },
      expected: { where: { block_number: 10 } },
    },
    {
      name: 'block hash → where[blockHashColumn]',
      table: 'transactions',
      query: { block: '0xa' },
      expected: { where: { block_hash: '0xa' } },
    },
    {
      name: 'block joins where, columns and limit pass through',
      table: 'blocks',
      query: { block: 10, where: { chain_id: 1 }, columns: ['hash'], limit: 5 },
      expected: { where: { chain_id: 1, number: 10 }, columns: ['hash'], limit: 5 },
    },
    {
      name: 'the same value in where and block is fine',
      table: 'blocks',
      query: { block: 10, where: { number: 10 } },
      expected: { where: { number: 10 } },
    },
    {
      name: 'blockRange passes through',
      table: 'heights',
      query: { blockRange: { from: 1, to: 9 } },
      expected: { blockRange: { from: 1, to: 9 } },
    },
  ];
  it.each(ok)('$name', ({ table, query, expected }) => {
    expect(translate(table, query)).toEqual(expected);
  });

  const bad: { name: string; table: string; query: unknown; code: string; message: RegExp }[] = [
    {
      name: 'block number on a table without block column',
      table: 'balances',
      query: { block: 10 },
      code: 'BAD_VALUE',
      message: /no block column/,
    },
    {
      name: 'block hash on a table without hash column',
      table: 'heights',
      query: { block: '0xa' },
      code: 'BAD_VALUE',
      message: /no block hash column/,
    },
    {
      name: 'blockRange on a table without block column',
      table: 'balances',
      query: { blockRange: { from: 1, to: 2 } },
      code: 'BAD_VALUE',
      message: /block range/,
    },
    {
      name: 'block conflicting with where',
      table: 'blocks',
      query: { block: 10, where: { number: 11 } },
      code: 'BAD_VALUE',
      message: /"number"/,
    },
    {
      name: 'a fractional block number',
      table: 'blocks',
      query: { block: 1.5 },
      code: 'BAD_VALUE',
      message: /integer/,
    },
    { name: 'a negative limit', table: 'blocks', query: { limit: -1 }, code: 'BAD_VALUE', message: /limit/ },
    {
      name: 'an unknown option',
      table: 'blocks',
      query: { order: 'desc' },
      code: 'UNKNOWN_OPTION',
      message: /"order"/,
    },
  ];
  it.each(bad)('$name → $code, not retryable', ({ table, query, code, message }) => {
    const err = thrown(() => translate(table, query as ScanQuery));
    expect(err).toMatchObject({ code, retryable: false });
    expect(String(err.message)).toMatch(message);
  });

  it('an unknown table → UNKNOWN_TABLE', () => {
    expect(thrown(() => tableConfig(TABLES, 'nope'))).toMatchObject({
      code: 'UNKNOWN_TABLE',
      retryable: false,
    });
    expect(thrown(() => tableConfig(TABLES, 'toString'))).toMatchObject({ code: 'UNKNOWN_TABLE' });
  });

  it('names the unknown option in a field too', () => {
    expect(thrown(() => translate('blocks', { sort: 1 } as ScanQuery))).toMatchObject({ option: 'sort' });
  });
});

describe('callScanToQuery (SDK scan options of a call)', () => {
  const block = { chain_id: 1, number: 10, hash: '0xa', parent_hash: '0x9' };
  const ok: { name: string; table: string; options: unknown; expected: ScanQuery }[] = [
    { name: 'no options', table: 'blocks', options: undefined, expected: {} },
    { name: 'a block number', table: 'heights', options: { block: 10 }, expected: { block: 10 } },
    { name: 'a block hash', table: 'transactions', options: { block: '0xa' }, expected: { block: '0xa' } },
    {
      name: 'a block object on a table with hash and chain columns → hash + chain',
      table: 'transactions',
      options: { block },
      expected: { block: '0xa', where: { chain_id: 1 } },
    },
    {
      name: 'a block object on a table with only a block column → its number, no chain',
      table: 'heights',
      options: { block, limit: 3 },
      expected: { block: 10, limit: 3 },
    },
    {
      name: 'a block object without chain_id → no chain filter',
      table: 'blocks',
      options: { block: { number: 10, hash: '0xb' } },
      expected: { block: '0xb' },
    },
    {
      name: 'a block object without hash → its number',
      table: 'blocks',
      options: { block: { number: 11, chain_id: 1 } },
      expected: { block: 11, where: { chain_id: 1 } },
    },
  ];
  it.each(ok)('$name', ({ table, options, expected }) => {
    expect(callScanToQuery(table, tableConfig(TABLES, table), options)).toEqual(expected);
  });

  const bad: { name: string; table: string; options: unknown; code: string }[] = [
    {
      name: 'a block object without number or hash',
      table: 'blocks',
      options: { block: { chain_id: 1 } },
      code: 'BAD_VALUE',
    },
    {
      name: 'a block object on a table without block column',
      table: 'balances',
      options: { block },
      code: 'BAD_VALUE',
    },
    {
      name: 'an unknown option',
      table: 'blocks',
      options: { block: 10, desc: true },
      code: 'UNKNOWN_OPTION',
    },
    { name: 'options that are not an object', table: 'blocks', options: 5, code: 'BAD_REQUEST' },
    { name: 'a block of another type', table: 'blocks', options: { block: true }, code: 'BAD_VALUE' },
  ];
  it.each(bad)('$name → $code', ({ table, options, code }) => {
    expect(
      thrown(() =>
        toStorageScanQuery(
          table,
          tableConfig(TABLES, table),
          callScanToQuery(table, tableConfig(TABLES, table), options),
        ),
      ),
    ).toMatchObject({ code, retryable: false });
  });

  it('scans exactly the rows of one block, end to end', async () => {
    const { factory } = harness();
    const scope = await factory.open('t1');
    const rows = await collect(
      scope.io('builder').scan('blocks', callScanToQuery('blocks', TABLES.blocks!, { block })),
    );
    expect(rows).toEqual([{ chain_id: 1, number: 10, hash: '0xa', tx_count: 0 }]);
    const atHeight = await collect(scope.io('builder').scan('blocks', { block: 10 }));
    expect(atHeight.map((r) => r.hash)).toEqual(['0xa', '0xb', '0xd']);
  });
});
