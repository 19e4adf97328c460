import { describe, expect, it } from 'vitest';
import type { TableConfig } from '../../../../../src/kernel/config-types.js';
import { StorageError } from '../../../../../src/services/storage/errors.js';
import type { Row, StorageBackend, StorageTransaction } from '../../../../../src/services/storage/types.js';
import {
  BadLines,
  checkJsonlLine,
  checkJsonlLines,
  declaredTable,
  loadJsonl,
} from '../../../../../src/services/storage/block-data/index.js';

const TABLE: TableConfig = {
  columns: {
    id: { type: 'integer', nullable: false },
    name: { type: 'text', nullable: false },
    note: { type: 'text', nullable: true },
  },
  primaryKey: ['id'],
};

describe('checkJsonlLine', () => {
  it.each([
    ['a valid row', '{"id":1,"name":"a"}', { kind: 'row', row: { id: 1, name: 'a' } }],
    ['surrounding whitespace', '  {"id":1,"name":"a","note":null}\t', { kind: 'row' }],
    ['an empty line', '', { kind: 'blank' }],
    ['a whitespace-only line', '   \t', { kind: 'blank' }],
    ['a carriage return left by CRLF', '\r', { kind: 'blank' }],
    ['broken JSON', '{"id":1,', { kind: 'bad', problems: [expect.stringMatching(/^invalid JSON: /)] }],
    ['a JSON array', '[1,2]', { kind: 'bad', problems: ['expected a JSON object, got an array'] }],
    ['a JSON number', '42', { kind: 'bad', problems: ['expected a JSON object, got a number'] }],
    ['JSON null', 'null', { kind: 'bad', problems: ['expected a JSON object, got null'] }],
    ['a missing column', '{"id":1}', { kind: 'bad', problems: ['column "name" is missing'] }],
    [
      'several missing columns, as one problem after the others',
      '{"x":1}',
      { kind: 'bad', problems: ['table "t" has no column "x"', 'missing columns "id", "name"'] },
    ],
    [
      'a wrong type and an unknown column, both reported',
      '{"id":"1","name":"a","colour":"red"}',
      {
        kind: 'bad',
        problems: [expect.stringContaining('column "id" (integer)'), 'table "t" has no column "colour"'],
      },
    ],
    [
      'an unsafe integer',
      '{"id":18446744073709551616,"name":"a"}',
      { kind: 'bad', problems: [expect.stringContaining('safe integer')] },
    ],
  ])('%s', (_name, text, expected) => {
    expect(checkJsonlLine(4, text, 't', TABLE)).toMatchObject({ line: 4, ...expected });
  });

  it('ignores a byte-order mark', () => {
    expect(checkJsonlLine(1, '\uFEFF{"id":1,"name":"a"}', 't', TABLE).kind).toBe('row');
  });
});

describe('checkJsonlLines', () => {
  it('numbers lines as in the file, blank lines included', async () => {
    const lines = ['{"id":1,"name":"a"}', '', 'oops', '   ', '{"id":2,"name":"b"}'];
    const out = [];
    for await (const r of checkJsonlLines(lines, 't', TABLE)) out.push([r.line, r.kind]);
    expect(out).toEqual([
      [1, 'row'],
      [2, 'blank'],
      [3, 'bad'],
      [4, 'blank'],
      [5, 'row'],
    ]);
  });
});

describe('BadLines', () => {
  it('keeps the first printCap messages, counts the rest, and lists every line as ranges', () => {
    const bad = new BadLines('f.jsonl', 2);
    for (const line of [3, 7, 8, 9, 12]) bad.add(line, [`p${line}`, 'q']);
    expect(bad.count).toBe(5);
    expect(bad.messages()).toEqual(['f.jsonl:3: p3; q', 'f.jsonl:7: p7; q', '… and 3 more bad lines']);
    expect(bad.lineList()).toBe('3, 7-9, 12');
  });
});

describe('declaredTable', () => {
  it('returns the table, or an UNKNOWN_TABLE error listing the declared ones', () => {
    expect(declaredTable({ t: TABLE }, 't')).toBe(TABLE);
    const err = (() => {
      try {
        declaredTable({ t: TABLE, u: TABLE }, 'nope');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({
      code: 'UNKNOWN_TABLE',
      message: expect.stringContaining('(declared: t, u)'),
    });
    expect(() => declaredTable({ t: TABLE }, 'toString')).toThrow(/not declared/);
  });
});

/** A fake of the port's transaction: writes are staged and become visible only when `fn` resolves. */
function fakeBackend(opts: { failOnInsert?: number } = {}) {
  const committed: Row[] = [];
  const inserts: number[] = [];
  const backend: Pick<StorageBackend, 'transaction'> = {
    async transaction<T>(fn: (tx: StorageTransaction) => Promise<T>): Promise<T> {
      const staged: Row[] = [];
      const tx = {
        async insertRows(_table: string, rows: readonly Row[]) {
          inserts.push(rows.length);
          if (opts.failOnInsert === inserts.length)
            throw new StorageError('QUERY_FAILED', 'constraint failed', { table: _table });
          staged.push(...rows);
        },
      } as unknown as StorageTransaction;
      const result = await fn(tx); // a rejection leaves `staged` behind: rolled back
      committed.push(...staged);
      return result;
    },
  };
  return { backend, committed, inserts };
}

const good = (id: number) => JSON.stringify({ id, name: `n${id}` });
const base = { table: 't', tableConfig: TABLE, source: 'f.jsonl' };

describe('loadJsonl', () => {
  it('loads every valid row in one transaction, in chunks', async () => {
    const { backend, committed, inserts } = fakeBackend();
    const lines = [good(1), '', good(2), good(3), good(4), good(5)];
    const report = await loadJsonl({ ...base, backend, lines, chunkRows: 2 });
    expect(report).toMatchObject({ lines: 6, validRows: 5, loadedRows: 5 });
    expect(report.bad.count).toBe(0);
    expect(inserts).toEqual([2, 2, 1]);
    expect(committed.map((r) => r.id)).toEqual([1, 2, 3, 4, 5]);
  });

  it('with a bad line loads nothing and reports every bad line by number', async () => {
    const { backend, committed, inserts } = fakeBackend();
    const lines = [good(1), good(2), '{bad', good(4), good(5), good(6), '{"id":7}', good(8)];
    const report = await loadJsonl({ ...base, backend, lines, chunkRows: 2 });
    expect(report).toMatchObject({ lines: 8, validRows: 6, loadedRows: 0 });
    expect(report.bad.messages()).toEqual([
      expect.stringMatching(/^f\.jsonl:3: invalid JSON/),
      'f.jsonl:7: column "name" is missing',
    ]);
    expect(committed).toEqual([]);
    expect(inserts).toEqual([2]); // the chunk before line 3; nothing is inserted after a bad line
  });

  it('with skipInvalid loads the valid lines and lists the skipped ones', async () => {
    const { backend, committed } = fakeBackend();
    const lines = [good(1), good(2), 'nope', good(4), good(5), good(6), '[]', good(8)];
    const report = await loadJsonl({ ...base, backend, lines, skipInvalid: true, chunkRows: 4 });
    expect(report).toMatchObject({ validRows: 6, loadedRows: 6 });
    expect(report.bad.lineList()).toBe('3, 7');
    expect(committed.map((r) => r.id)).toEqual([1, 2, 4, 5, 6, 8]);
  });

  it('a database error rolls everything back and names the lines of the failed chunk', async () => {
    const { backend, committed } = fakeBackend({ failOnInsert: 2 });
    const lines = [good(1), good(2), '', good(4), good(5)];
    const err = await loadJsonl({ ...base, backend, lines, chunkRows: 2 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect((err as StorageError).message).toBe('rows of f.jsonl:4-5: constraint failed');
    expect((err as StorageError).code).toBe('QUERY_FAILED');
    expect(committed).toEqual([]);
  });

  it('an empty input loads nothing and succeeds', async () => {
    const { backend, inserts } = fakeBackend();
    const report = await loadJsonl({ ...base, backend, lines: [] });
    expect(report).toMatchObject({ lines: 0, validRows: 0, loadedRows: 0 });
    expect(inserts).toEqual([]);
  });
});
