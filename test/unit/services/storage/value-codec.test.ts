// JSON values ⇄ driver values per column type and backend.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ColumnType } from '../../../../src/kernel/config-types.js';
import { StorageError } from '../../../../src/services/storage/errors.js';
import { PG_TYPES } from '../../../../src/services/storage/pg-types.js';
import { valueProblem } from '../../../../src/services/storage/row-check.js';
import { decodeValue, encodeValue, keyId } from '../../../../src/services/storage/value-codec.js';

const site = { table: 't', column: 'c', backend: 'db' };

function badValueOf(fn: () => unknown): StorageError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).code).toBe('BAD_VALUE');
    return err as StorageError;
  }
  throw new Error('expected BAD_VALUE');
}

/** A valid JSON-side value of each type. */
const valueOf: Record<ColumnType, fc.Arbitrary<unknown>> = {
  integer: fc.maxSafeInteger(),
  bigint: fc.maxSafeInteger(),
  real: fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? 0 : d)),
  text: fc.string({ unit: 'grapheme' }),
  boolean: fc.boolean(),
  json: fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown),
  bytes: fc.uint8Array({ maxLength: 64 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
};

describe('SQLite encoding', () => {
  it('binds integers as BigInt, booleans as 0/1, json as text, bytes as a Buffer', () => {
    expect(encodeValue('sqlite', 'bigint', 2 ** 53 - 1)).toBe(2n ** 53n - 1n);
    expect(encodeValue('sqlite', 'boolean', true)).toBe(1);
    expect(encodeValue('sqlite', 'json', { a: [1] })).toBe('{"a":[1]}');
    expect(encodeValue('sqlite', 'bytes', '0xA0ff')).toEqual(Buffer.from([0xa0, 0xff]));
    expect(encodeValue('sqlite', 'text', null)).toBeNull();
  });

  it('decode(encode(v)) is v for every valid value of every type', () => {
    for (const type of Object.keys(valueOf) as ColumnType[]) {
      fc.assert(
        fc.property(valueOf[type], (v) => {
          expect(valueProblem(type, v)).toBeUndefined();
          expect(decodeValue('sqlite', type, encodeValue('sqlite', type, v), site)).toEqual(v);
        }),
        { numRuns: 200 },
      );
    }
  });

  it('what a JSON value cannot be is BAD_VALUE naming table and column', () => {
    const big = badValueOf(() => decodeValue('sqlite', 'bigint', 2n ** 60n, site));
    expect(big.details).toMatchObject(site);
    expect(big.message).toContain(String(2n ** 60n));
    badValueOf(() => decodeValue('sqlite', 'integer', 1.5, site));
    badValueOf(() => decodeValue('sqlite', 'boolean', 2n, site));
    badValueOf(() => decodeValue('sqlite', 'json', '{nope', site));
    badValueOf(() => decodeValue('sqlite', 'text', 5n, site));
    badValueOf(() => decodeValue('sqlite', 'bytes', 'abc', site));
    expect(decodeValue('sqlite', 'real', 3n, site)).toBe(3);
    expect(decodeValue('sqlite', 'json', null, site)).toBeNull();
  });
});

describe('PostgreSQL values', () => {
  const int8 = PG_TYPES.getTypeParser(20, 'text') as (text: string) => unknown;

  it('parses int8 to a number when safe and leaves bigger ones as text, which decode refuses', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        expect(int8(String(n))).toBe(n);
      }),
    );
    expect(int8('9007199254740992')).toBe('9007199254740992');
    expect(badValueOf(() => decodeValue('postgres', 'bigint', '9007199254740992', site)).message).toContain(
      '9007199254740992',
    );
    // Other types keep pg's parsers.
    expect((PG_TYPES.getTypeParser(701, 'text') as (t: string) => unknown)('1.5')).toBe(1.5);
  });

  it('sends json as text and bytes as a Buffer; takes parsed jsonb and Buffers back', () => {
    expect(encodeValue('postgres', 'json', [1, 'a'])).toBe('[1,"a"]');
    expect(encodeValue('postgres', 'bigint', 5)).toBe(5);
    expect(encodeValue('postgres', 'boolean', false)).toBe(false);
    expect(decodeValue('postgres', 'json', { a: 1 }, site)).toEqual({ a: 1 });
    expect(decodeValue('postgres', 'bytes', Buffer.from([1, 255]), site)).toBe('0x01ff');
    expect(decodeValue('postgres', 'boolean', true, site)).toBe(true);
  });
});

describe('keyId', () => {
  it('treats hex keys case-insensitively and keeps other values apart', () => {
    expect(keyId(['bytes', 'integer'], ['0xAB', 1])).toBe(keyId(['bytes', 'integer'], ['0xab', 1]));
    expect(keyId(['text'], ['0xAB'])).not.toBe(keyId(['text'], ['0xab']));
    expect(keyId(['integer', 'text'], [1, '2'])).not.toBe(keyId(['integer', 'text'], ['1', 2]));
  });
});
