// Conformance, part 4: scanJson (rows as JSON text written by the database, src/services/storage/row-json.ts)
// yields exactly the rows scan yields, value for value, page for page (see storage-conformance.ts).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StorageErrorCode } from '../../src/services/storage/errors.js';
import type { EncodedRow, Row, StorageBackend, StorageScanQuery } from '../../src/services/storage/types.js';
import type { MakeBackend } from './storage-conformance-fixtures.js';
import { item, storageErrorOf, useConformanceBackend } from './storage-conformance-fixtures.js';

/** Every page of a JSON scan, each row's literal parsed twice (literal → text → row). */
async function jsonPagesOf(
  pages: AsyncIterable<readonly EncodedRow[]>,
): Promise<{ rows: Row[][]; fields: Row[] }> {
  const rows: Row[][] = [];
  const fields: Row[] = [];
  for await (const page of pages) {
    rows.push(page.map((r) => JSON.parse(JSON.parse(r.literal) as string) as Row));
    fields.push(...page.map((r) => r.fields));
  }
  return { rows, fields };
}

async function valuePagesOf(pages: AsyncIterable<readonly Row[]>): Promise<Row[][]> {
  const out: Row[][] = [];
  for await (const page of pages) out.push([...page]);
  return out;
}

/** scan and scanJson of the same query: the same pages of the same rows (key order included). */
async function expectSameScan(
  backend: StorageBackend,
  table: string,
  query: StorageScanQuery,
): Promise<void> {
  const values = await valuePagesOf(backend.scan(table, query));
  const json = await jsonPagesOf(backend.scanJson(table, query));
  expect(json.rows).toEqual(values);
  expect(json.rows.flat().map((r) => Object.keys(r))).toEqual(values.flat().map((r) => Object.keys(r)));
}

// JSON-side values every column type accepts, edges included (values the text must carry exactly).
const safeInt = fc.oneof(
  fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
);
const real = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => (Object.is(d, -0) ? 0 : d)),
  fc.constantFrom(0.1 + 0.2, 1e300, -5e-324, 3, 1 / 3),
);
const text = fc.oneof(fc.string(), fc.constantFrom('"quoted" \\ back', 'tab\tnl\n', 'é ✓ \u2028 😀', ''));
const jsonValue = fc
  .jsonValue({ maxDepth: 3 })
  .map((v) => JSON.parse(JSON.stringify(v)) as unknown)
  .filter((v) => v !== null);
const hex = fc.uint8Array({ maxLength: 12 }).map((b) => `0x${Buffer.from(b).toString('hex')}`);
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null });

const kindsRow = (id: number) =>
  fc
    .record({
      big: safeInt,
      r: real,
      t: text,
      b: fc.boolean(),
      j: jsonValue,
      bin: hex,
      // `integer` is 32-bit on PostgreSQL; `bigint` carries the ±2^53 edges.
      n_int: nullable(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
      n_big: nullable(safeInt),
      n_real: nullable(real),
      n_text: nullable(text),
      n_bool: nullable(fc.boolean()),
      n_json: nullable(jsonValue),
      n_bin: nullable(hex),
    })
    .map((r) => ({ id, ...r }));

export function conformanceJsonScanTests(make: MakeBackend): void {
  describe('scanJson', () => {
    const h = useConformanceBackend(make);

    it('yields the JSON of exactly the rows scan yields, for any values of every column type (property)', async () => {
      const { backend } = h();
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc
            .array(fc.nat(40), { maxLength: 12 })
            .chain((ids) => fc.tuple(...[...new Set(ids)].map((id) => kindsRow(id)))),
          fc.integer({ min: 1, max: 5 }),
          async (rows, batchSize) => {
            run++;
            await backend.transaction(async (tx) => {
              await tx.deleteWhere('kinds', {});
              await tx.insertRows('kinds', rows);
            });
            await expectSameScan(backend, 'kinds', { batchSize });
          },
        ),
        { numRuns: 25 },
      );
      expect(run).toBe(25);
    });

    it('keeps projection, filters, limit and pages, and decodes the asked fields beside the text', async () => {
      const { backend } = h();
      const rows = Array.from({ length: 23 }, (_, i) =>
        item(Math.floor(i / 4), i % 4, { note: i % 3 ? 'n' : null }),
      );
      await backend.transaction((tx) => tx.insertRows('items', rows));
      const queries: StorageScanQuery[] = [
        { batchSize: 5 },
        { batchSize: 5, limit: 12 },
        { columns: ['name'], batchSize: 4 },
        { where: { note: [null, 'n'] }, blockRange: { from: 1, to: 3 }, batchSize: 3 },
      ];
      for (const q of queries) await expectSameScan(backend, 'items', q);
      const json = await jsonPagesOf(
        backend.scanJson('items', { columns: ['name'], limit: 3 }, ['block', 'note']),
      );
      expect(json.rows.flat()).toEqual(rows.slice(0, 3).map((r) => ({ name: r.name })));
      expect(json.fields).toEqual(rows.slice(0, 3).map((r) => ({ block: r.block, note: r.note })));
    });

    it('refuses an unknown field or column as scan does', async () => {
      const { backend } = h();
      await storageErrorOf(
        jsonPagesOf(backend.scanJson('items', {}, ['nope'])),
        StorageErrorCode.UNKNOWN_COLUMN,
      );
      await storageErrorOf(
        jsonPagesOf(backend.scanJson('items', { columns: ['nope'] })),
        StorageErrorCode.UNKNOWN_COLUMN,
      );
    });
  });
}
