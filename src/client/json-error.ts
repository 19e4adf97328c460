// Where a JSON text stops being JSON, as line:column. JSON.parse on Node 20 names a byte position for
// some errors and none for others ("Unexpected token '}', ..." quotes the text instead), so the position
// comes from a small scanner of the JSON grammar (RFC 8259) run only after JSON.parse has failed: it
// walks the text and stops at the first character that cannot continue a JSON value.

export interface JsonErrorPosition {
  /** 1-based line and column (columns count UTF-16 code units, as editors show them). */
  readonly line: number;
  readonly column: number;
  /** Offset of the offending character in the text (the text's length at an unexpected end). */
  readonly offset: number;
  /** What was expected there, e.g. `expected a value, got "}"`. */
  readonly message: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** The first syntax error of `text`, or undefined when it is valid JSON. */
export function findJsonError(text: string): JsonErrorPosition | undefined {
  let i = 0;
  const got = (): string => (i >= text.length ? 'the end of the input' : JSON.stringify(text[i]));
  const fail = (expected: string): never => {
    throw new Stop(i, `expected ${expected}, got ${got()}`);
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[i] !== ch) fail(`"${word}"`);
      i++;
    }
  };
  const string = (): void => {
    i++; // the opening quote
    for (;;) {
      if (i >= text.length) fail('a closing "');
      const ch = text[i]!;
      if (ch === '"') {
        i++;
        return;
      }
      if (ch === '\\') {
        i++;
        const e = text[i];
        if (e === 'u') {
          i++;
          for (let k = 0; k < 4; k++) {
            if (!/[0-9a-fA-F]/.test(text[i] ?? '')) fail('4 hex digits after \\u');
            i++;
          }
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      } else if (ch < ' ') fail('no control character inside a string (escape it)');
      else i++;
    }
  };
  const number = (): void => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else if (/[1-9]/.test(text[i] ?? '')) while (/[0-9]/.test(text[i] ?? '')) i++;
    else fail('a digit');
    if (text[i] === '.') {
      i++;
      if (!/[0-9]/.test(text[i] ?? '')) fail('a digit after "."');
      while (/[0-9]/.test(text[i] ?? '')) i++;
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      if (!/[0-9]/.test(text[i] ?? '')) fail('a digit in the exponent');
      while (/[0-9]/.test(text[i] ?? '')) i++;
    }
  };
  const value = (depth: number): void => {
    if (depth > 10_000) fail('less nesting');
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a property name in double quotes');
        string();
        ws();
        if (text[i] !== ':') fail('":" after the property name');
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail('"," or "}"');
      }
    }
    if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail('"," or "]"');
      }
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    if (ch === '-' || /[0-9]/.test(ch ?? '')) return number();
    fail('a value');
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail('the end of the input (one JSON value per file)');
    return undefined;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return { ...lineColumn(text, err.offset), offset: err.offset, message: err.message };
  }
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < offset && k < text.length; k++) {
    if (text[k] === '\n') {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * `JSON.parse` whose failure message says where: `3:1: expected a value, got "}"`. A leading BOM is
 * allowed (editors write one), as JSON.parse does not.
 */
export function parseJsonWithPosition(
  text: string,
): { ok: true; value: unknown } | { ok: false; message: string; line?: number; column?: number } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (err) {
    const at = findJsonError(body);
    if (at === undefined) return { ok: false, message: (err as Error).message };
    return { ok: false, message: `${at.line}:${at.column}: ${at.message}`, line: at.line, column: at.column };
  }
}
