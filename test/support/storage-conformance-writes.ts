// Conformance, part 3: bulk writes (see storage-conformance.ts; docs/storage.md, "Bulk writes"). Row
// counts around every boundary of both paths — SQLite's full statements and their binary-digit rest,
// PostgreSQL's multi-row INSERT below COPY_MIN_ROWS and COPY from it on — values at their limits,
// duplicates across statement boundaries, a failure inside the database halfway through leaving
// nothing, a rerun of a block replacement leaving the same rows, and the replacement's DELETE reading
// the block index, never the table.
import { describe, expect, it } from 'vitest';
import { COPY_MIN_ROWS } from '../../src/services/storage/bulk-writes.js';
import { StorageErrorCode } from '../../src/services/storage/errors.js';
import { conditionsOf } from '../../src/services/storage/request-check.js';
import { dialectFor } from '../../src/services/storage/sql-dialect.js';
import { deleteWhere, rowsPerInsert } from '../../src/services/storage/sql-statements.js';
import type { TableConfig } from '../../src/kernel/config-types.js';
import type { Row, StorageBackend, StorageTransaction } from '../../src/services/storage/types.js';
import type { MakeBackend } from './storage-conformance-fixtures.js';
import {
  CONFORMANCE_TABLES,
  item,
  pagesOf,
  storageErrorOf,
  useConformanceBackend,
} from './storage-conformance-fixtures.js';

/** A table keyed by its own id: its key cannot serve a block DELETE, the block index must. */
const LOGS: TableConfig = {
  columns: {
    id: { type: 'integer', nullable: false },
    chain_id: { type: 'integer', nullable: false },
    block: { type: 'bigint', nullable: false },
  },
  primaryKey: ['id'],
  blockColumn: 'block',
  chainColumn: 'chain_id',
};
const WITH_LOGS: Readonly<Record<string, TableConfig>> = { ...CONFORMANCE_TABLES, logs: LOGS };

/** Every row of a table, in primary key order. */
async function all(backend: StorageBackend, table: string): Promise<Row[]> {
  return (await pagesOf(backend.scan(table, { batchSize: 5_000 }))).flat();
}

/** The row counts where a bulk write changes how it writes, on this backend. */
function boundaries(backend: StorageBackend): number[] {
  const perStatement = rowsPerInsert(
    dialectFor(backend.kind),
    Object.keys(CONFORMANCE_TABLES.items!.columns).length,
  );
  return [
    0,
    1,
    2,
    COPY_MIN_ROWS - 1,
    COPY_MIN_ROWS,
    COPY_MIN_ROWS + 1,
    perStatement - 1,
    perStatement,
    perStatement + 1,
    3 * perStatement + 7,
  ];
}

/** Block `block`'s rows as a block writer replaces them: delete the block, insert its rows. */
function replaceBlock(tx: StorageTransaction, block: number, rows: readonly Row[]): Promise<void> {
  return tx.deleteWhere('items', { chain_id: 1, block }).then(() => tx.insertRows('items', rows));
}

/** Values at their limits for `kinds` row `id` (every nullable column null when `nulls`). */
function limitRow(id: number, nulls: boolean): Row {
  const row: Record<string, unknown> = {
    id,
    big: id % 2 === 0 ? Number.MAX_SAFE_INTEGER : Number.MIN_SAFE_INTEGER,
    r: [1.7976931348623157e308, 5e-324, -0.1, 1e21, 123456.789][id % 5] as number,
    // A uint256 as a decimal string, and text COPY must escape: tab, newline, carriage return, backslash.
    t: `${2n ** 256n - 1n - BigInt(id)}\t\\N\n\r\\x"'é✓`,
    b: id % 2 === 0,
    j: {
      amount: `${2n ** 255n + BigInt(id)}`,
      s: 'tab\there\nnl \\ "q"',
      list: [null, 1.5, true, { a: [] }],
    },
    bin: id % 3 === 0 ? '0x' : `0x${'Ab'.repeat(id % 7)}ff`,
  };
  for (const c of ['n_int', 'n_big', 'n_real', 'n_text', 'n_bool', 'n_json', 'n_bin'])
    row[c] = nulls ? null : undefined;
  if (!nulls) {
    Object.assign(row, {
      n_int: -2_147_483_648,
      n_big: 0,
      n_real: -0.5,
      n_text: '',
      n_bool: false,
      n_json: 'just "a" string\\',
      n_bin: '0x00',
    });
  }
  return row;
}

/** A row as it reads back: bytes lowercase. */
function readBack(row: Row): Row {
  const out: Record<string, unknown> = { ...row };
  for (const c of ['bin', 'n_bin']) if (typeof out[c] === 'string') out[c] = (out[c] as string).toLowerCase();
  return out;
}

export function conformanceWriteTests(make: MakeBackend): void {
  describe('bulk writes', () => {
    const h = useConformanceBackend(make);

    it('insertRows writes every row at each statement and COPY boundary', async () => {
      const { backend } = h();
      for (const [block, count] of boundaries(backend).entries()) {
        const rows = Array.from({ length: count }, (_, i) =>
          item(block, i, { note: i % 3 === 0 ? null : `n${i}` }),
        );
        await backend.transaction((tx) => tx.insertRows('items', rows));
        expect(await all(backend, 'items').then((r) => r.filter((x) => x['block'] === block))).toEqual(rows);
      }
    });

    it('the last of equal keys wins, across statement boundaries', async () => {
      const { backend } = h();
      for (const count of boundaries(backend).filter((n) => n >= 2)) {
        const rows = Array.from({ length: count }, (_, i) => item(1, i));
        // Row 0 again at the end with another name; row 1 again in the middle.
        rows.push(item(1, 0, { name: `last of ${count}` }));
        rows.splice(Math.floor(count / 2), 0, item(1, 1, { name: 'middle' }));
        await backend.transaction((tx) => replaceBlock(tx, 1, rows));
        const stored = await all(backend, 'items');
        expect(stored).toHaveLength(count);
        expect(stored[0]).toMatchObject({ idx: 0, name: `last of ${count}` });
        // Inserted before the original row 1 when it lands at index 1, after it otherwise.
        expect(stored[1]).toMatchObject({ idx: 1, name: Math.floor(count / 2) <= 1 ? 'b1i1' : 'middle' });
      }
    });

    it('values at their limits round-trip through every path: big decimals, nulls, escapes, JSON', async () => {
      const { backend } = h();
      for (const count of [1, COPY_MIN_ROWS + 3]) {
        const rows = Array.from({ length: count }, (_, i) => limitRow(1_000 * count + i, i % 2 === 0));
        await backend.transaction((tx) => tx.insertRows('kinds', rows));
        const stored = (await all(backend, 'kinds')).filter((r) => (r['id'] as number) >= 1_000 * count);
        expect(stored).toEqual(rows.map(readBack));
      }
    });

    it('a bad row anywhere refuses the whole batch before any SQL, naming the column', async () => {
      const { backend } = h();
      for (const count of [3, COPY_MIN_ROWS + 5]) {
        const rows = Array.from({ length: count }, (_, i) => item(5, i));
        rows[count - 2] = item(5, count - 2, { name: 42 });
        const err = await storageErrorOf(
          backend.transaction((tx) => tx.insertRows('items', rows)),
          StorageErrorCode.BAD_VALUE,
        );
        expect(err.details.column).toBe('name');
        // A validation error does not poison the transaction: the caller may go on and commit.
        const kept = await backend.transaction(async (tx) => {
          await tx.insertRows('items', rows).catch(() => undefined);
          await tx.insertRows('tags', [{ tag: `after ${count}` }]);
          return 'committed';
        });
        expect(kept).toBe('committed');
        expect(await all(backend, 'items')).toEqual([]);
        expect(await backend.get('tags', { tag: `after ${count}` })).toEqual({ tag: `after ${count}` });
      }
      await storageErrorOf(
        backend.transaction((tx) => tx.insertRows('items', [item(1, 0, { extra: 1 })])),
        StorageErrorCode.UNKNOWN_COLUMN,
      );
      await storageErrorOf(
        backend.transaction((tx) => tx.insertRows('items', [item(1, 0, { constructor: 1 })])),
        StorageErrorCode.UNKNOWN_COLUMN,
      );
      const cyclic: Record<string, unknown> = {};
      cyclic['self'] = cyclic;
      const bad = await storageErrorOf(
        backend.transaction((tx) => tx.insertRows('kinds', [{ ...limitRow(1, true), j: cyclic }])),
        StorageErrorCode.BAD_VALUE,
      );
      expect(bad.details.column).toBe('j');
    });

    it('a rerun of a block replacement leaves the same rows; a smaller rerun leaves only its rows', async () => {
      const { backend } = h();
      const neighbours = [item(6, 0), item(8, 0)];
      await backend.transaction((tx) => tx.insertRows('items', neighbours));
      for (const count of [1, COPY_MIN_ROWS + 1, 1_234]) {
        const rows = Array.from({ length: count }, (_, i) => item(7, i));
        await backend.transaction((tx) => replaceBlock(tx, 7, rows));
        const first = await all(backend, 'items');
        await backend.transaction((tx) => replaceBlock(tx, 7, rows));
        expect(await all(backend, 'items')).toEqual(first);
        expect(first).toHaveLength(count + 2);
      }
      await backend.transaction((tx) => replaceBlock(tx, 7, [item(7, 3, { name: 'alone' })]));
      expect(await all(backend, 'items')).toEqual([
        neighbours[0],
        item(7, 3, { name: 'alone' }),
        neighbours[1],
      ]);
    });

    it('one transaction may bulk-write a table twice (the second batch does not bring the first back)', async () => {
      const { backend } = h();
      const big = (block: number) => Array.from({ length: COPY_MIN_ROWS + 2 }, (_, i) => item(block, i));
      await backend.transaction(async (tx) => {
        await tx.insertRows('items', big(1));
        await tx.deleteWhere('items', { block: 1 });
        await tx.insertRows('items', big(2));
      });
      expect((await all(backend, 'items')).map((r) => r['block'])).toEqual(big(2).map(() => 2));
    });
  });

  // What needs SQL beside the backend (a unique index, EXPLAIN): where the database can be shared.
  describe('bulk writes, seen from another connection', () => {
    const h = useConformanceBackend(make);

    it('a failure inside the database halfway through a write leaves nothing of the transaction', async (t) => {
      const { backend, sql } = h();
      if (sql === undefined) return t.skip();
      const before = Array.from({ length: 10 }, (_, i) => item(3, i));
      await backend.transaction((tx) => tx.insertRows('items', before));
      await sql(`CREATE UNIQUE INDEX items_name_unique ON items (name)`);
      for (const count of boundaries(backend).filter((n) => n >= 2)) {
        // The last row repeats the first's name: the database refuses it after the others went in.
        const rows = Array.from({ length: count }, (_, i) => item(3, i, { name: `r${count}-${i}` }));
        rows[count - 1] = item(3, count - 1, { name: `r${count}-0` });
        await storageErrorOf(
          backend.transaction(async (tx) => {
            await tx.upsert('tags', { tag: 'with it' }, {});
            await replaceBlock(tx, 3, rows);
          }),
          StorageErrorCode.QUERY_FAILED,
        );
        expect(await all(backend, 'items')).toEqual(before);
        expect(await backend.get('tags', { tag: 'with it' })).toBeUndefined();
      }
    });

    it('migrate gives an existing table without a block index one, and reports it', async (t) => {
      const { backend, sql, reopen } = h();
      if (sql === undefined || reopen === undefined) return t.skip();
      const other = await reopen({ tables: WITH_LOGS });
      expect(await other.migrate()).toEqual({ created: ['logs'], unchanged: ['kinds', 'items', 'tags'] });
      await sql(`DROP INDEX logs_block_idx`);
      expect(await other.migrate({ checkOnly: true })).toEqual({
        created: [],
        unchanged: ['kinds', 'items', 'tags', 'logs'],
      });
      expect(await other.migrate()).toEqual({
        created: [],
        unchanged: ['kinds', 'items', 'tags', 'logs'],
        indexed: ['logs'],
      });
      expect(await other.migrate()).toEqual({ created: [], unchanged: ['kinds', 'items', 'tags', 'logs'] });
      // items' key leads with (chain_id, block): no second index for it.
      const names =
        backend.kind === 'sqlite'
          ? await sql(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`)
          : await sql(
              `SELECT indexname AS name FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%pkey' ORDER BY 1`,
            );
      expect(names.map((r) => r['name'])).toEqual(['logs_block_idx']);
    });

    it('the DELETE of a block replacement reads the block index, never the whole table', async (t) => {
      const { sql, reopen } = h();
      if (sql === undefined || reopen === undefined) return t.skip();
      const backend = await reopen({ tables: WITH_LOGS });
      await backend.migrate();
      await backend.transaction(async (tx) => {
        await tx.insertRows(
          'items',
          Array.from({ length: 20_000 }, (_, i) => item(Math.floor(i / 20), i % 20)),
        );
        await tx.insertRows(
          'logs',
          Array.from({ length: 20_000 }, (_, i) => ({ id: i, chain_id: 1, block: Math.floor(i / 20) })),
        );
      });
      await sql(backend.kind === 'sqlite' ? 'ANALYZE' : 'ANALYZE items; ANALYZE logs');
      const ctx = { kind: backend.kind, backend: 'test', tables: WITH_LOGS };
      const dialect = dialectFor(backend.kind);
      for (const table of ['items', 'logs'])
        for (const [where, range] of [
          [{ chain_id: 1, block: 7 }, undefined],
          [{ chain_id: 1 }, { from: 100, to: 199 }],
        ] as const) {
          const stmt = deleteWhere(dialect, table, conditionsOf(ctx, table, WITH_LOGS[table]!, where, range));
          const plan =
            backend.kind === 'sqlite'
              ? (await sql(`EXPLAIN QUERY PLAN ${stmt.sql}`, stmt.params)).map((r) => String(r['detail']))
              : (await sql(`EXPLAIN ${stmt.sql}`, stmt.params)).map((r) => String(r['QUERY PLAN']));
          expect(plan.length).toBeGreaterThan(0);
          // SQLite: SEARCH (an index range), never SCAN (every row); PostgreSQL: never a Seq Scan.
          if (backend.kind === 'sqlite')
            for (const line of plan) expect(line).toMatch(new RegExp(`^SEARCH ${table} USING`));
          else expect(plan.join('\n')).not.toMatch(/Seq Scan/);
          expect(plan.join('\n')).toMatch(/USING (COVERING )?INDEX|Index (Only )?Scan|Bitmap Index Scan/);
        }
    });
  });
}
