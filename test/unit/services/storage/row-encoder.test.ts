// Bulk row encoding (row-encoder.ts, pg-copy.ts, bulk-writes.ts): the one-pass fast path accepts exactly
// the rows the checked path (encodeRow) accepts and encodes them to the same parameters; a refused row
// gets the checked path's error; COPY text decodes back to the values; statement sizes cover the rows.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ColumnType, TableConfig } from '../../../../src/kernel/config-types.js';
import { TableWrites } from '../../../../src/services/storage/bulk-writes.js';
import { StorageError } from '../../../../src/services/storage/errors.js';
import { COPY_NULL, copyEscape } from '../../../../src/services/storage/pg-copy.js';
import { encodeRow } from '../../../../src/services/storage/request-check.js';
import type { RequestContext } from '../../../../src/services/storage/request-check.js';
import { encodeCopyText, encodeParams } from '../../../../src/services/storage/row-encoder.js';
import { POSTGRES_DIALECT, SQLITE_DIALECT } from '../../../../src/services/storage/sql-dialect.js';
import type { BackendKind, Row } from '../../../../src/services/storage/types.js';

const TYPES: readonly ColumnType[] = ['integer', 'bigint', 'real', 'text', 'boolean', 'json', 'bytes'];

/** One column of each type, non-nullable and nullable, plus one named like an Object.prototype property. */
const TABLE: TableConfig = {
  columns: {
    ...Object.fromEntries(TYPES.map((t) => [`c_${t}`, { type: t, nullable: false } as const])),
    ...Object.fromEntries(TYPES.map((t) => [`n_${t}`, { type: t, nullable: true } as const])),
    constructor: { type: 'text', nullable: true } as const,
  },
  primaryKey: ['c_integer', 'c_text'],
};
const COLUMNS = Object.keys(TABLE.columns);

const ctxOf = (kind: BackendKind): RequestContext => ({ kind, backend: 'db', tables: { t: TABLE } });

const validOf: Record<ColumnType, fc.Arbitrary<unknown>> = {
  integer: fc.maxSafeInteger(),
  bigint: fc.maxSafeInteger(),
  real: fc.double({ noNaN: true, noDefaultInfinity: true }),
  text: fc.string({ unit: 'binary' }),
  boolean: fc.boolean(),
  json: fc.jsonValue(),
  bytes: fc.uint8Array({ maxLength: 8 }).map((b) => `0x${Buffer.from(b).toString('hex')}`),
};

/** Anything a column may be handed: valid values of every type, and worse. */
const anyValue = fc.oneof(
  ...TYPES.map((t) => validOf[t]),
  fc.constantFrom(null, undefined, NaN, Infinity, 2 ** 53, 1.5, '0xabc', '0xZZ', 10n, [], {}),
);

/** Mostly valid rows (so both verdicts occur often), sometimes with an unknown column or a bad value. */
const rowArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.record(
    Object.fromEntries(
      COLUMNS.map((c) => {
        const decl = TABLE.columns[c]!;
        const valid = decl.nullable ? fc.option(validOf[decl.type], { nil: null }) : validOf[decl.type];
        return [c, fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: anyValue })];
      }),
    ),
    { requiredKeys: COLUMNS.filter((c) => !TABLE.columns[c]!.nullable) },
  ),
  fc.record({ c_integer: fc.integer(), unknown_column: anyValue }),
  fc.constantFrom(null, [], 'row', 7),
);

/** The checked path's verdict: encoded values, or the StorageError it throws. */
function checked(kind: BackendKind, row: unknown): unknown[] | StorageError {
  try {
    return encodeRow(ctxOf(kind), 't', TABLE, row as Row);
  } catch (err) {
    if (err instanceof StorageError) return err;
    throw err;
  }
}

function fast(run: () => unknown): unknown {
  try {
    return run();
  } catch (err) {
    if (err instanceof StorageError) return err;
    throw err;
  }
}

/** COPY text cell → the value the checked path binds (its inverse for the types' text forms). */
function uncopy(kind: BackendKind, type: ColumnType, cell: string): unknown {
  if (cell === COPY_NULL) return null;
  const text = cell.replace(/\\(.)/g, (_, c: string) => ({ t: '\t', n: '\n', r: '\r' })[c] ?? c);
  switch (type) {
    case 'integer':
    case 'bigint':
    case 'real':
      return Number(text);
    case 'boolean':
      return text === 't';
    case 'bytes':
      return Buffer.from(text.slice(2), 'hex');
    default:
      return text;
  }
}

describe('the one-pass encoder', () => {
  for (const kind of ['sqlite', 'postgres'] as const) {
    it(`accepts exactly what encodeRow accepts and binds the same values (${kind})`, () => {
      fc.assert(
        fc.property(rowArb, (row) => {
          const want = checked(kind, row);
          const got = fast(() => encodeParams(ctxOf(kind), 't', TABLE, [row as Row], false));
          if (want instanceof StorageError) {
            expect(got).toBeInstanceOf(StorageError);
            expect((got as StorageError).code).toBe(want.code);
            expect((got as StorageError).message).toBe(want.message);
            expect((got as StorageError).details.column).toBe(want.details.column);
          } else {
            expect(got).toEqual({ values: want, rows: 1 });
          }
        }),
        { numRuns: 2_000 },
      );
    });
  }

  it('writes COPY text that reads back as the values encodeRow binds', () => {
    fc.assert(
      fc.property(rowArb, (row) => {
        const want = checked('postgres', row);
        const got = fast(() => encodeCopyText(ctxOf('postgres'), 't', TABLE, [row as Row]));
        if (want instanceof StorageError) {
          expect((got as StorageError).message).toBe(want.message);
          return;
        }
        const { text, rows } = got as { text: string[]; rows: number };
        expect(rows).toBe(1);
        const line = text.join('');
        expect(line.endsWith('\n')).toBe(true);
        // Escaping leaves no raw tab, newline or carriage return inside a value.
        const cells = line.slice(0, -1).split('\t');
        expect(cells).toHaveLength(COLUMNS.length);
        cells.forEach((cell, i) => {
          const type = TABLE.columns[COLUMNS[i]!]!.type;
          const expected = want[i];
          const value = uncopy('postgres', type, cell);
          // Text has no negative zero for any numeric column (String(-0) is '0', as the driver's own
          // binding writes it), so -0 reads back as 0 for integer and bigint as well as real.
          if (type !== 'boolean' && typeof expected === 'number')
            expect(value).toBe(expected === 0 ? 0 : expected);
          else expect(value).toEqual(expected);
        });
      }),
      { numRuns: 2_000 },
    );
  });

  it('escapes only backslash, tab, newline and carriage return', () => {
    expect(copyEscape('plain 0x12 "q" é')).toBe('plain 0x12 "q" é');
    expect(copyEscape('a\\b\tc\nd\re\\N')).toBe('a\\\\b\\tc\\nd\\re\\\\N');
  });

  it('keeps the last of equal keys (hex case-insensitive) and the rows in order otherwise', () => {
    const table: TableConfig = {
      columns: { k: { type: 'bytes', nullable: false }, n: { type: 'integer', nullable: false } },
      primaryKey: ['k'],
    };
    const ctx: RequestContext = { kind: 'postgres', backend: 'db', tables: { t: table } };
    const rows = [
      { k: '0xAB', n: 1 },
      { k: '0x01', n: 2 },
      { k: '0xab', n: 3 },
    ];
    expect(encodeCopyText(ctx, 't', table, rows)).toEqual({ text: ['\\\\x01\t2\n\\\\xab\t3\n'], rows: 2 });
    expect(encodeParams(ctx, 't', table, rows, true).rows).toBe(2);
    expect(encodeParams(ctx, 't', table, rows, true).values).toEqual([
      Buffer.from([1]),
      2,
      Buffer.from([0xab]),
      3,
    ]);
    // Composite keys: parts cannot run into each other.
    const pair: TableConfig = {
      columns: { a: { type: 'text', nullable: false }, b: { type: 'text', nullable: false } },
      primaryKey: ['a', 'b'],
    };
    const pairs = [
      { a: 'x|', b: 'y' },
      { a: 'x', b: '|y' },
      { a: '1:', b: '' },
    ];
    expect(encodeCopyText({ ...ctx, tables: { p: pair } }, 'p', pair, pairs).rows).toBe(3);
  });
});

describe('statement sizes', () => {
  it('SQLite: full statements, then the rest in binary digits; PostgreSQL: one statement for the rest', () => {
    const sqlite = new TableWrites(SQLITE_DIALECT, 't', TABLE, 's');
    const pg = new TableWrites(POSTGRES_DIALECT, 't', TABLE, 's');
    const full = sqlite.rowsPerStatement;
    expect(sqlite.statementSizes(0)).toEqual([]);
    expect(sqlite.statementSizes(full + 5)).toEqual([full, 4, 1]);
    fc.assert(
      fc.property(fc.nat({ max: 20_000 }), (rows) => {
        const sizes = sqlite.statementSizes(rows);
        expect(sizes.reduce((a, b) => a + b, 0)).toBe(rows);
        const rest = sizes.filter((n) => n !== full);
        // At most one statement of each power of two below `full`, largest first.
        expect(rest.every((n) => (n & (n - 1)) === 0 && n < full)).toBe(true);
        expect(new Set(rest).size).toBe(rest.length);
        expect([...rest].sort((a, b) => b - a)).toEqual(rest);
        const pgSizes = pg.statementSizes(rows);
        expect(pgSizes.reduce((a, b) => a + b, 0)).toBe(rows);
        expect(pgSizes.filter((n) => n !== pg.rowsPerStatement).length).toBeLessThanOrEqual(1);
      }),
    );
  });
});
