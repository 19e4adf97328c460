// How rows reach a table in bulk (sql-transaction.ts insertRows; docs/storage.md, "Bulk writes"):
//
// - SQLite: multi-row INSERT ... ON CONFLICT statements of `rowsPerInsert` rows (500, within the
//   parameter limit), the rest as statements of 256, 128, … 1 rows (its binary digits). So a table
//   needs at most ten statement shapes, each prepared once and kept in the driver's statement cache,
//   whatever the row counts: no statement is prepared per write, let alone per row.
// - PostgreSQL, from COPY_MIN_ROWS rows on: COPY into a session-local staging table, then one
//   INSERT ... SELECT ... ON CONFLICT from it (sql-statements.ts stagedUpsert). Fewer rows: one
//   multi-row INSERT of exactly those rows (a COPY costs three round trips more). COPY straight into
//   the table cannot upsert, hence the staging table.
//
// One TableWrites per table and backend holds the SQL texts, built once.

import type { TableConfig } from '../../kernel/config-types.js';
import type { Dialect } from './sql-dialect.js';
import { insertRowsSql, rowsPerInsert, stagedUpsert } from './sql-statements.js';

/**
 * Rows from which a PostgreSQL insertRows goes through COPY. Measured on token_transfers (7 columns,
 * delete + insert of one block per transaction, loopback server): the staging path's three extra round
 * trips cost about 3 ms, which COPY earns back from about 500 rows (at 256 rows a multi-row INSERT was
 * still faster, at 1,024 COPY was, and at 10,000 COPY took half the time).
 */
export const COPY_MIN_ROWS = 512;

export class TableWrites {
  /** Values per row: every declared column. */
  readonly width: number;
  /** Rows of a full multi-row INSERT. */
  readonly rowsPerStatement: number;
  private readonly columns: readonly string[];
  private readonly sqlByRows = new Map<number, string>();
  private stagedSql: ReturnType<typeof stagedUpsert> | undefined;

  constructor(
    private readonly dialect: Dialect,
    private readonly name: string,
    private readonly table: TableConfig,
    /** The PostgreSQL staging table's name: one no declared table can have. */
    private readonly stageName: string,
  ) {
    this.columns = Object.keys(table.columns);
    this.width = this.columns.length;
    this.rowsPerStatement = rowsPerInsert(dialect, this.width);
  }

  /** The upsert of `rows` rows (every declared column, in declaration order). */
  insertSql(rows: number): string {
    let sql = this.sqlByRows.get(rows);
    if (sql === undefined) {
      sql = insertRowsSql(this.dialect, this.name, this.table, this.columns, rows);
      this.sqlByRows.set(rows, sql);
    }
    return sql;
  }

  /** The row counts of the INSERTs that write `rows` rows, in order; they sum to `rows`. */
  statementSizes(rows: number): number[] {
    const full = this.rowsPerStatement;
    const sizes: number[] = [];
    let left = rows;
    for (; left >= full; left -= full) sizes.push(full);
    if (left === 0) return sizes;
    if (this.dialect.kind === 'postgres') {
      // Every statement is a round trip there, and nothing is prepared: one statement for the rest.
      sizes.push(left);
      return sizes;
    }
    for (let bit = 1 << Math.floor(Math.log2(left)); bit >= 1; bit >>= 1) {
      if (left & bit) sizes.push(bit);
    }
    return sizes;
  }

  /** The PostgreSQL staging statements of this table. */
  get staged(): ReturnType<typeof stagedUpsert> {
    this.stagedSql ??= stagedUpsert(this.name, this.stageName, this.table, this.columns);
    return this.stagedSql;
  }
}
