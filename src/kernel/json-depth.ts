// How deeply a JSON text nests, measured before anything parses it (docs/security.md § Input bounds).
//
// Why before: V8's JSON.parse is iterative and copes with any depth, but almost everything done with the
// value afterwards is recursive: JSON.stringify, ajv's schema validation, deep freezing, canonical JSON,
// structured clone. A 100k-deep task config parsed fine and then threw "Maximum call stack size
// exceeded" in the first of those, which reached the client as INTERNAL. Refusing the text up front is
// cheap (one linear pass, no allocation) and keeps every later stage within a small, known depth.
//
// The scan counts `[` and `{` outside strings (a backslash in a string escapes the next character). It
// does not validate: on malformed text it still returns a number, and the parser then reports the syntax
// error. It reads a string or UTF-8 bytes alike: the bytes of `"`, `\`, `[`, `{`, `]`, `}` never occur
// inside a multi-byte UTF-8 sequence.
//
// Pure (no IO, no Buffer).

import { MAX_JSON_DEPTH } from './input-bounds.js';

export { MAX_JSON_DEPTH };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * The maximum nesting depth of `[`/`{` in `text` (0 for a scalar). Stops scanning as soon as the depth
 * exceeds `limit` and returns `limit + 1`, so a hostile text costs no more than it takes to find out.
 */
export function jsonDepth(text: string | Uint8Array, limit = Number.POSITIVE_INFINITY): number {
  const at: (i: number) => number = typeof text === 'string' ? (i) => text.charCodeAt(i) : (i) => text[i]!;
  const length = text.length;
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < length; i++) {
    const c = at(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return limit + 1;
      }
    } else if ((c === CLOSE_BRACKET || c === CLOSE_BRACE) && depth > 0) depth--;
  }
  return max;
}

/** Why `text` is refused (nested deeper than `limit`), or undefined when it is within the bound. */
export function jsonDepthProblem(text: string | Uint8Array, limit = MAX_JSON_DEPTH): string | undefined {
  return jsonDepth(text, limit) > limit
    ? `must not nest arrays and objects more than ${limit} deep (JSON depth limit ${limit})`
    : undefined;
}
