// The pre-parse JSON depth scan of docs/security.md § Input bounds: a table of edge cases (strings with
// brackets and escapes, malformed text, bytes), a property that it agrees with the depth of the parsed
// value for any JSON fast-check generates, and the early stop on a hostile text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../../src/kernel/input-bounds.js';
import { jsonDepth, jsonDepthProblem } from '../../../src/kernel/json-depth.js';

/** The reference: the nesting depth of a parsed value (0 for a scalar). */
function valueDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  return 1 + children.reduce<number>((max, v) => Math.max(max, valueDepth(v)), 0);
}

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const nested = (n: number, open = '[', close = ']'): string => open.repeat(n) + close.repeat(n);

describe('jsonDepth', () => {
  it.each([
    ['a number', '42', 0],
    ['a string', '"abc"', 0],
    ['empty text', '', 0],
    ['an empty array', '[]', 1],
    ['an empty object', '{}', 1],
    ['siblings do not add up', '[[],[],{}]', 2],
    ['mixed nesting', '{"a":[{"b":[1]}]}', 4],
    ['brackets inside a string', '["[[[{{{"]', 1],
    ['an escaped quote inside a string', '["a\\"[[[", []]', 2],
    ['an escaped backslash before the closing quote', '["a\\\\", [[]]]', 3],
    ['a key holding brackets', '{"[[[": {}}', 2],
    ['whitespace', ' [ \n [ \t ] ] ', 2],
    ['unbalanced closers are ignored', ']]][', 1],
    ['an unterminated string hides the rest', '["[[[[', 1],
    ['non-ASCII strings', '["€😀[", {"é": [1]}]', 3],
  ])('%s: %s → %i', (_name, text, depth) => {
    expect(jsonDepth(text)).toBe(depth);
    expect(jsonDepth(utf8(text))).toBe(depth);
  });

  it('stops one past the limit, however deep the text goes', () => {
    const hostile = nested(100_000);
    expect(jsonDepth(hostile, 10)).toBe(11);
    expect(jsonDepth(hostile)).toBe(100_000);
    expect(jsonDepth(utf8(hostile), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  });

  it('agrees with the depth of the parsed value, as text and as UTF-8 bytes', () => {
    // Deep values, not only the shallow ones fc.jsonValue() favours: a chain of wrappers around any value.
    const deep = fc
      .tuple(fc.jsonValue({ maxDepth: 4 }), fc.array(fc.constantFrom('array', 'object'), { maxLength: 40 }))
      .map(([leaf, wraps]) =>
        wraps.reduce<unknown>((inner, kind) => (kind === 'array' ? [inner] : { '[{"\\': inner }), leaf),
      );
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), deep), fc.boolean(), (value, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const expected = valueDepth(JSON.parse(text));
        expect(jsonDepth(text)).toBe(expected);
        expect(jsonDepth(utf8(text))).toBe(expected);
        expect(jsonDepth(text, expected)).toBe(expected);
        if (expected > 0) expect(jsonDepth(text, expected - 1)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe('jsonDepthProblem', () => {
  it('accepts up to the limit and names the limit beyond it', () => {
    expect(jsonDepthProblem(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(jsonDepthProblem(nested(MAX_JSON_DEPTH + 1))).toMatch(
      new RegExp(`more than ${MAX_JSON_DEPTH} deep \\(JSON depth limit ${MAX_JSON_DEPTH}\\)`),
    );
    expect(jsonDepthProblem(nested(5, '{"k":', '}'), 4)).toMatch(/JSON depth limit 4/);
    expect(jsonDepthProblem(nested(4, '{"k":', '}'), 4)).toBeUndefined();
  });

  it('scans a 100k-deep text in linear time', () => {
    const text = utf8(`${'['.repeat(50_000)}"${'x'.repeat(1_000_000)}"`);
    const started = performance.now();
    expect(jsonDepthProblem(text)).toBeDefined();
    expect(jsonDepth(text)).toBe(50_000);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
