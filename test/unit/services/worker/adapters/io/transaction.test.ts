// The writer's TaskIoTransaction: plain writes pass through; block writes are deleteWhere + insertRows
// in one transaction, so a failing insert rolls the delete back and a re-run leaves the same rows.
import { describe, expect, it } from 'vitest';
import type { Row, TaskIoTransaction } from '../../../../../../src/kernel/plugin-types.js';
import { StorageError } from '../../../../../../src/services/storage/errors.js';
import { harness, rejection, tx } from './fixture.js';

async function write(fn: (t: TaskIoTransaction) => Promise<unknown>) {
  const h = harness();
  const scope = await h.factory.open('t1');
  const result = scope.io('result').transaction(fn);
  return { ...h, result };
}

const NEW_ROWS: Row[] = [tx(10, '0xa', 0, 'new0'), tx(10, '0xa', 5, 'new5')];

describe('block writes', () => {
  const cases: {
    name: string;
    run: (t: TaskIoTransaction) => Promise<unknown>;
    deleteArgs: unknown[];
    remaining: string[];
  }[] = [
    {
      name: 'replaceBlockRows with a chain → deleteWhere(block + chain) + insertRows',
      run: (t) => t.replaceBlockRows('transactions', { number: 10, chainId: 1 }, NEW_ROWS),
      deleteArgs: [{ block_number: 10, chain_id: 1 }, undefined],
      remaining: ['10/0xa/0/new0', '10/0xa/5/new5', '11/0xc/0/v0'],
    },
    {
      name: 'replaceBlockRows without a chain → deleteWhere(block)',
      run: (t) => t.replaceBlockRows('transactions', { number: 11 }, []),
      deleteArgs: [{ block_number: 11 }, undefined],
      remaining: ['10/0xa/0/v0', '10/0xa/1/v1', '10/0xb/0/v0'],
    },
    {
      name: 'replaceBlockRangeRows with a chain → deleteWhere(chain, range) + insertRows',
      run: (t) => t.replaceBlockRangeRows('transactions', { from: 10, to: 11, chainId: 1 }, NEW_ROWS),
      deleteArgs: [{ chain_id: 1 }, { from: 10, to: 11 }],
      remaining: ['10/0xa/0/new0', '10/0xa/5/new5'],
    },
    {
      name: 'replaceBlockRangeRows without a chain → deleteWhere({}, range)',
      run: (t) => t.replaceBlockRangeRows('transactions', { from: 11, to: 11 }, []),
      deleteArgs: [{}, { from: 11, to: 11 }],
      remaining: ['10/0xa/0/v0', '10/0xa/1/v1', '10/0xb/0/v0'],
    },
  ];
  it.each(cases)('$name', async ({ run, deleteArgs, remaining }) => {
    const { backend, result } = await write(run);
    await result;
    expect(backend.txLog[0]).toEqual({ op: 'deleteWhere', table: 'transactions', args: deleteArgs });
    const inserts = backend.txLog.filter((e) => e.op === 'insertRows');
    expect(inserts.length).toBe(remaining.some((r) => r.includes('new')) ? 1 : 0);
    expect(
      backend.rows('transactions').map((r) => `${r.block_number}/${r.block_hash}/${r.idx}/${r.value}`),
    ).toEqual(remaining);
  });

  it('is idempotent: writing the same block twice leaves the same rows', async () => {
    const { factory, backend } = harness();
    const scope = await factory.open('t1');
    const once = (): Promise<void> =>
      scope
        .io('result')
        .transaction((t) => t.replaceBlockRows('transactions', { number: 10, chainId: 1 }, NEW_ROWS));
    await once();
    const after = backend.rows('transactions');
    await once();
    expect(backend.rows('transactions')).toEqual(after);
  });

  it('a failing insert rolls the delete back', async () => {
    const before = harness().backend.rows('transactions');
    const bad = { ...tx(10, '0xa', 9), value: 42 };
    const { backend, result } = await write((t) => t.replaceBlockRows('transactions', { number: 10 }, [bad]));
    expect(await rejection(result)).toMatchObject({ code: 'BAD_VALUE', retryable: false });
    expect(backend.txLog.map((e) => e.op)).toEqual(['deleteWhere', 'insertRows']);
    expect(backend.rows('transactions')).toEqual(before);
  });

  it('an insert failing retryably every time rolls back every attempt', async () => {
    const h = harness();
    const before = h.backend.rows('transactions');
    h.backend.failNext('insertRows', new StorageError('CONFLICT', 'deadlock'), 3);
    const scope = await h.factory.open('t1');
    const err = await rejection(
      scope.io('result').transaction((t) => t.replaceBlockRows('transactions', { number: 10 }, NEW_ROWS)),
    );
    expect(err).toMatchObject({ code: 'CONFLICT', retryable: true, attempts: 3 });
    expect(h.backend.calls.deleteWhere).toBe(3);
    expect(h.backend.rows('transactions')).toEqual(before);
  });

  const refused: { name: string; run: (t: TaskIoTransaction) => Promise<unknown>; message: RegExp }[] = [
    {
      name: 'replaceBlockRows on a table without block column',
      run: (t) => t.replaceBlockRows('balances', { number: 1 }, []),
      message: /no block column/,
    },
    {
      name: 'replaceBlockRangeRows on a table without block column',
      run: (t) => t.replaceBlockRangeRows('balances', { from: 1, to: 2 }, []),
      message: /no block column/,
    },
    {
      name: 'a chainId on a table without chain column',
      run: (t) => t.replaceBlockRows('heights', { number: 1, chainId: 1 }, []),
      message: /no chain column/,
    },
  ];
  it.each(refused)('$name → BAD_VALUE, nothing written', async ({ run, message }) => {
    const { backend, result } = await write(run);
    const err = await rejection(result);
    expect(err).toMatchObject({ code: 'BAD_VALUE', retryable: false });
    expect(String(err.message)).toMatch(message);
    expect(backend.txLog).toEqual([]);
  });
});

describe('plain writes pass through', () => {
  it('upsert, insertRows, delete and deleteWhere reach the storage transaction as given', async () => {
    const { backend, result } = await write(async (t) => {
      await t.upsert('balances', { address: 'bob' }, { amount: '2' });
      await t.insertRows('balances', [{ address: 'carol', amount: '3' }]);
      await t.delete('balances', { address: 'alice' });
      return t.deleteWhere('transactions', { block_hash: '0xb' });
    });
    expect(await result).toBe(1);
    expect(backend.txLog).toEqual([
      { op: 'upsert', table: 'balances', args: [{ address: 'bob' }, { amount: '2' }] },
      { op: 'insertRows', table: 'balances', args: [[{ address: 'carol', amount: '3' }]] },
      { op: 'delete', table: 'balances', args: [{ address: 'alice' }] },
      { op: 'deleteWhere', table: 'transactions', args: [{ block_hash: '0xb' }, undefined] },
    ]);
    expect(backend.rows('balances').map((r) => r.address)).toEqual(['bob', 'carol']);
  });
});
