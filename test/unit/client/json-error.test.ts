// Where a task file stops being JSON (src/client/json-error.ts): line:column and what was expected.
import { describe, expect, it } from 'vitest';
import { findJsonError, parseJsonWithPosition } from '../../../src/client/json-error.js';

describe('findJsonError', () => {
  it.each([
    [
      'a trailing comma in an object',
      '{\n  "a": 1,\n}',
      3,
      1,
      'expected a property name in double quotes, got "}"',
    ],
    ['a missing value', '{\n  "a": \n}\n', 3, 1, 'expected a value, got "}"'],
    ['a missing colon', '{"a" 1}', 1, 6, 'expected ":" after the property name, got "1"'],
    ['an unquoted key', '{ a: 1 }', 1, 3, 'expected a property name in double quotes, got "a"'],
    ['a missing comma in an array', '[1 2]', 1, 4, 'expected "," or "]", got "2"'],
    ['a bad literal', '{"a": tru}', 1, 10, 'expected "true", got "}"'],
    ['an unterminated string', '{"a": "x', 1, 9, 'expected a closing ", got the end of the input'],
    [
      'a raw newline in a string',
      '"a\nb"',
      1,
      3,
      'expected no control character inside a string (escape it), got "\\n"',
    ],
    ['a bad escape', '"\\x"', 1, 3, 'expected an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), got "x"'],
    ['a leading zero', '01', 1, 2, 'expected the end of the input (one JSON value per file), got "1"'],
    ['two values', '{}\n{}', 2, 1, 'expected the end of the input (one JSON value per file), got "{"'],
    ['empty input', '', 1, 1, 'expected a value, got the end of the input'],
    [
      'a number without digits after the point',
      '1.',
      1,
      3,
      'expected a digit after ".", got the end of the input',
    ],
  ])('%s', (_name, text, line, column, message) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(findJsonError(text)).toMatchObject({ line, column, message });
  });

  it.each([['{"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"]}'], ['  [ ]  '], ['"x"'], ['0']])(
    'valid JSON %s has no error',
    (text) => {
      expect(findJsonError(text)).toBeUndefined();
    },
  );

  it('parseJsonWithPosition: the value, or the message with line:column', () => {
    expect(parseJsonWithPosition('\uFEFF{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseJsonWithPosition('{\n"a": }')).toEqual({
      ok: false,
      message: '2:6: expected a value, got "}"',
      line: 2,
      column: 6,
    });
  });
});
