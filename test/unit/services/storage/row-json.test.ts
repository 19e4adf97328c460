import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../src/kernel/config-types.js';
import { driverRowText, utf8Views } from '../../../../src/services/storage/row-json.js';

const table = {
  columns: {
    i: { type: 'integer' },
    big: { type: 'bigint' },
    r: { type: 'real' },
    t: { type: 'text' },
    b: { type: 'boolean' },
    j: { type: 'json' },
    bin: { type: 'bytes' },
  },
  primaryKey: ['i'],
} as unknown as TableConfig;
const columns = ['i', 'big', 'r', 't', 'b', 'j', 'bin'];
const at = columns.map((_, i) => i);

describe('driverRowText (PostgreSQL rows as JSON text from driver values)', () => {
  const textOf = driverRowText(table, columns, at);

  it.each([
    [
      'every type',
      [1, 2 ** 53 - 1, 0.5, 'a"b', true, '{"k": [1, 2]}', Buffer.from([0xab, 0x01])],
      { i: 1, big: 2 ** 53 - 1, r: 0.5, t: 'a"b', b: true, j: { k: [1, 2] }, bin: '0xab01' },
    ],
    [
      'nulls',
      [null, null, null, null, null, null, null],
      { i: null, big: null, r: null, t: null, b: null, j: null, bin: null },
    ],
    [
      'a non-finite real is null, as JSON.stringify makes it',
      [0, 0, Number.NaN, '', false, '[]', Buffer.alloc(0)],
      { i: 0, big: 0, r: null, t: '', b: false, j: [], bin: '0x' },
    ],
  ])('%s', (_name, row, expected) => {
    expect(JSON.parse(textOf(row) as string)).toEqual(expected);
  });

  it.each([
    ['an int8 beyond ±2^53 (pg hands it over as text)', 1, '9007199254740993'],
    ['an unsafe number', 0, 2 ** 53],
    ['a string in a real column', 2, '1.5'],
    ['a number in a text column', 3, 7],
    ['0/1 in a boolean column', 4, 1],
    ['a parsed object in a json column', 5, { k: 1 }],
    ['a string in a bytes column', 6, '0xab'],
  ])('leaves the row to decodeRow for %s', (_name, index, value) => {
    const row: unknown[] = [1, 2, 0.5, 't', true, '1', Buffer.from([1])];
    row[index] = value;
    expect(textOf(row)).toBeUndefined();
  });

  it('writes what JSON.stringify writes for the decoded row (property)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.maxSafeInteger(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.string(),
        fc.boolean(),
        fc.jsonValue(),
        fc.uint8Array({ maxLength: 8 }),
        (i, big, r, t, b, j, bin) => {
          const jText = JSON.stringify(j);
          const text = textOf([i, big, r, t, b, jText, bin]);
          const decoded = {
            i,
            big,
            r,
            t,
            b,
            j: JSON.parse(jText) as unknown,
            bin: `0x${Buffer.from(bin).toString('hex')}`,
          };
          expect(text).toBe(JSON.stringify(decoded));
        },
      ),
    );
  });

  it('reads cells where `at` says and keeps the order of `columns`', () => {
    const f = driverRowText(table, ['t', 'i'], [2, 0]);
    expect(f([5, 'x', 'y'])).toBe('{"t":"y","i":5}');
    expect(driverRowText(table, [], [])([1])).toBe('{}');
  });
});

describe('utf8Views', () => {
  it('gives each text its own exact UTF-8 in one buffer, undefined kept', () => {
    const views = utf8Views(['a', undefined, 'é😀', '']);
    expect(views.map((v) => (v === undefined ? undefined : Buffer.from(v).toString('utf8')))).toEqual([
      'a',
      undefined,
      'é😀',
      '',
    ]);
    expect(views[0]!.buffer).toBe(views[2]!.buffer);
  });
});
