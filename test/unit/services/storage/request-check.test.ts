// Request checks before any SQL: codes, the column named, and what comes out encoded.
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
import { StorageError } from '../../../../src/services/storage/errors.js';
import {
  checkScan,
  conditionsOf,
  encodeKey,
  encodeRow,
  mergeUpsert,
  tableOf,
} from '../../../../src/services/storage/request-check.js';
import type { RequestContext } from '../../../../src/services/storage/request-check.js';

const ITEMS: TableConfig = {
  columns: {
    chain_id: { type: 'integer', nullable: false },
    block: { type: 'bigint', nullable: false },
    hash: { type: 'bytes', nullable: false },
    note: { type: 'text', nullable: true },
  },
  primaryKey: ['chain_id', 'block'],
  blockColumn: 'block',
};
const ctx: RequestContext = { kind: 'sqlite', backend: 'sqlite::memory:', tables: { items: ITEMS } };

function failure(fn: () => unknown): { code: string; column: string | undefined; message: string } {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof StorageError)) throw err;
    return { code: err.code, column: err.details.column, message: err.message };
  }
  throw new Error('expected a StorageError');
}

describe('request checks', () => {
  it('knows only declared tables (not inherited object keys)', () => {
    expect(tableOf(ctx, 'items')).toBe(ITEMS);
    expect(failure(() => tableOf(ctx, 'toString')).code).toBe('UNKNOWN_TABLE');
  });

  it('encodes a key in primary key order and names the bad key column', () => {
    expect(encodeKey(ctx, 'items', ITEMS, { block: 5, chain_id: 1 })).toEqual([1n, 5n]);
    expect(failure(() => encodeKey(ctx, 'items', ITEMS, { chain_id: 1 }))).toMatchObject({
      code: 'BAD_VALUE',
      column: 'block',
    });
    expect(failure(() => encodeKey(ctx, 'items', ITEMS, { chain_id: 1, block: 5, note: 'x' }))).toMatchObject(
      {
        code: 'BAD_VALUE',
        column: 'note',
      },
    );
    expect(failure(() => encodeKey(ctx, 'items', ITEMS, { chain_id: 1, block: 5, nope: 1 }))).toMatchObject({
      code: 'UNKNOWN_COLUMN',
      column: 'nope',
    });
    expect(failure(() => encodeKey(ctx, 'items', ITEMS, [1, 5] as never)).code).toBe('BAD_VALUE');
  });

  it('encodes a full row in declaration order, omitted nullable columns as null', () => {
    expect(encodeRow(ctx, 'items', ITEMS, { hash: '0x01', block: 2, chain_id: 1 })).toEqual([
      1n,
      2n,
      Buffer.from([1]),
      null,
    ]);
    const f = failure(() => encodeRow(ctx, 'items', ITEMS, { chain_id: 1, block: 2, hash: 'zz' }));
    expect(f).toMatchObject({ code: 'BAD_VALUE', column: 'hash' });
    expect(f.message).toContain('0x-prefixed hex');
  });

  it('merges upsert key and values, refusing a key column that disagrees', () => {
    expect(mergeUpsert(ctx, 'items', ITEMS, { chain_id: 1, block: 2 }, { hash: '0x', block: 2 })).toEqual({
      chain_id: 1,
      block: 2,
      hash: '0x',
    });
    expect(
      failure(() => mergeUpsert(ctx, 'items', ITEMS, { chain_id: 1, block: 2 }, { block: 3 })),
    ).toMatchObject({
      code: 'BAD_VALUE',
      column: 'block',
    });
  });

  it('turns filters into equality, IN (with null) and block-range conditions', () => {
    expect(
      conditionsOf(
        ctx,
        'items',
        ITEMS,
        { chain_id: 1, note: ['a', null], block: undefined },
        { from: 1, to: 3 },
      ),
    ).toEqual([
      { kind: 'eq', column: 'chain_id', value: 1n },
      { kind: 'in', column: 'note', values: ['a'], orNull: true },
      { kind: 'between', column: 'block', from: 1n, to: 3n },
    ]);
    expect(conditionsOf(ctx, 'items', ITEMS, { note: null }, undefined)).toEqual([
      { kind: 'null', column: 'note' },
    ]);
    expect(failure(() => conditionsOf(ctx, 'items', ITEMS, { chain_id: null }, undefined)).column).toBe(
      'chain_id',
    );
    expect(failure(() => conditionsOf(ctx, 'items', ITEMS, {}, { from: 1, to: 2.5 })).code).toBe('BAD_VALUE');
    const noBlocks = { ...ITEMS, blockColumn: undefined };
    expect(failure(() => conditionsOf(ctx, 'items', noBlocks, {}, { from: 1, to: 2 })).message).toContain(
      'no blockColumn',
    );
  });

  it('checks scan options: projection in declaration order plus the key for paging, limits', () => {
    const s = checkScan(ctx, 'items', ITEMS, { columns: ['note', 'hash'] }, 1000);
    expect([s.columns, s.selected, s.limit, s.batchSize]).toEqual([
      ['hash', 'note'],
      ['chain_id', 'block', 'hash', 'note'],
      Number.MAX_SAFE_INTEGER,
      1000,
    ]);
    expect(failure(() => checkScan(ctx, 'items', ITEMS, { columns: [] }, 10)).code).toBe('BAD_VALUE');
    expect(failure(() => checkScan(ctx, 'items', ITEMS, { limit: -1 }, 10)).code).toBe('BAD_VALUE');
    expect(failure(() => checkScan(ctx, 'items', ITEMS, { batchSize: 1.5 }, 10)).code).toBe('BAD_VALUE');
    expect(failure(() => checkScan(ctx, 'items', ITEMS, { columns: ['x'] }, 10)).code).toBe('UNKNOWN_COLUMN');
  });
});
