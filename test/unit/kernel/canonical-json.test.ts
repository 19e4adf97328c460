import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/kernel/canonical-json.js';

describe('canonicalJson', () => {
  it.each([
    [
      'sorted keys at every level',
      { z: { b: 1, a: [2, { d: 1, c: 0 }] } },
      '{"z":{"a":[2,{"c":0,"d":1}],"b":1}}',
    ],
    ['a Date is its ISO string (toJSON)', { at: new Date(0) }, '{"at":"1970-01-01T00:00:00.000Z"}'],
    ['members JSON drops are dropped', { a: undefined, f: () => 1, s: Symbol('x'), b: 2 }, '{"b":2}'],
    ['array holes JSON nulls are null', [undefined, () => 1, 3], '[null,null,3]'],
    ['scalars', 'x', '"x"'],
    ['null', null, 'null'],
    ['undefined at the top', undefined, 'null'],
  ])('%s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('throws on a bigint, as JSON.stringify does', () => {
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
  });

  it('means what JSON.stringify means, whatever the key order (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        // Same value as JSON text...
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        // ...and one text per value: a reshuffled copy gives the same string.
        const reshuffled = JSON.parse(JSON.stringify(value), (_k, v: unknown) =>
          v !== null && typeof v === 'object' && !Array.isArray(v)
            ? Object.fromEntries(Object.entries(v).reverse())
            : v,
        ) as unknown;
        expect(canonicalJson(reshuffled)).toBe(text);
      }),
    );
  });
});
