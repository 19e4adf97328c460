// jsonOf: one serialisation per frozen object; anything that can still change is serialised each time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonOf } from '../../../../../src/services/call-host/adapters/frames-as-text.js';

describe('jsonOf', () => {
  it('equals JSON.stringify for any JSON value, frozen or not (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(jsonOf(value)).toBe(JSON.stringify(value) ?? 'null');
        if (typeof value === 'object' && value !== null) {
          Object.freeze(value);
          expect(jsonOf(value)).toBe(JSON.stringify(value));
          expect(jsonOf(value)).toBe(JSON.stringify(value));
        }
      }),
    );
  });

  it('an unfrozen object is serialised each time: a change shows', () => {
    const row: Record<string, unknown> = { a: 1 };
    expect(jsonOf(row)).toBe('{"a":1}');
    row.a = 2;
    expect(jsonOf(row)).toBe('{"a":2}');
  });

  it('a frozen object is serialised once (its text is remembered)', () => {
    let reads = 0;
    const row = Object.freeze({
      get a() {
        reads++;
        return 1;
      },
    });
    expect(jsonOf(row)).toBe('{"a":1}');
    expect(jsonOf(row)).toBe('{"a":1}');
    expect(reads).toBe(1);
  });

  it('null and undefined become null; a BigInt throws like JSON.stringify', () => {
    expect(jsonOf(null)).toBe('null');
    expect(jsonOf(undefined)).toBe('null');
    expect(() => jsonOf(Object.freeze({ n: 1n }))).toThrow(TypeError);
  });
});
