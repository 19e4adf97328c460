// The little that differs between the two SQL dialects (placeholders, column types, parameter limits)
// and the DDL of a declared table. Statements themselves are built once, for both, in sql-statements.ts.

import type { ColumnType, TableConfig } from '../../kernel/config-types.js';
import type { BackendKind } from './types.js';

export interface Dialect {
  readonly kind: BackendKind;
  /** Host parameters one statement may bind. */
  readonly maxParams: number;
  /** Rows one multi-row INSERT carries at most (besides maxParams). */
  readonly maxRowsPerInsert: number;
  /** The placeholder of the n-th (1-based) parameter. */
  placeholder(n: number): string;
  /** The column type a declared type is created as, upper-case, as introspection reports it. */
  columnType(type: ColumnType): string;
}

export const SQLITE_DIALECT: Dialect = {
  kind: 'sqlite',
  // SQLITE_MAX_VARIABLE_NUMBER's default since SQLite 3.32.
  maxParams: 32_766,
  // In-process, a statement has no round trip to save: beyond a few hundred rows a bigger statement is
  // no faster, only a bigger entry in the prepared statement cache.
  maxRowsPerInsert: 500,
  placeholder: () => '?',
  columnType(type) {
    switch (type) {
      case 'integer':
      case 'bigint':
      case 'boolean':
        return 'INTEGER';
      case 'real':
        return 'REAL';
      case 'text':
      case 'json':
        return 'TEXT';
      case 'bytes':
        return 'BLOB';
      default: {
        const unreachable: never = type;
        throw new Error(`unknown column type ${String(unreachable)}`);
      }
    }
  },
};

export const POSTGRES_DIALECT: Dialect = {
  kind: 'postgres',
  // The wire protocol counts parameters in an Int16.
  maxParams: 65_535,
  maxRowsPerInsert: 10_000,
  placeholder: (n) => `$${n}`,
  columnType(type) {
    switch (type) {
      case 'integer':
        return 'INTEGER';
      case 'bigint':
        return 'BIGINT';
      case 'real':
        return 'DOUBLE PRECISION';
      case 'text':
        return 'TEXT';
      case 'boolean':
        return 'BOOLEAN';
      case 'json':
        return 'JSONB';
      case 'bytes':
        return 'BYTEA';
      default: {
        const unreachable: never = type;
        throw new Error(`unknown column type ${String(unreachable)}`);
      }
    }
  },
};

export function dialectFor(kind: BackendKind): Dialect {
  return kind === 'sqlite' ? SQLITE_DIALECT : POSTGRES_DIALECT;
}

/** A double-quoted identifier (both dialects), embedded quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The name of a table's block-column index. */
export function blockIndexName(table: string): string {
  return `${table}_block_idx`;
}

/** CREATE TABLE with the columns in declaration order, NOT NULL where not nullable, and the primary key. */
export function createTableSql(dialect: Dialect, name: string, table: TableConfig): string {
  const columns = Object.entries(table.columns).map(
    ([column, decl]) =>
      `${quoteIdent(column)} ${dialect.columnType(decl.type)}${decl.nullable ? '' : ' NOT NULL'}`,
  );
  const pk = `PRIMARY KEY (${table.primaryKey.map(quoteIdent).join(', ')})`;
  return `CREATE TABLE ${quoteIdent(name)} (${[...columns, pk].join(', ')})`;
}

/** The columns a block replacement's DELETE pins, in the block index's order; undefined without a block column. */
export function blockIndexColumns(table: TableConfig): string[] | undefined {
  if (table.blockColumn === undefined) return undefined;
  return table.chainColumn !== undefined && table.chainColumn !== table.blockColumn
    ? [table.chainColumn, table.blockColumn]
    : [table.blockColumn];
}

/** The index block scans and block writes use: (chainColumn?, blockColumn); undefined without one. */
export function createBlockIndexSql(name: string, table: TableConfig): string | undefined {
  const columns = blockIndexColumns(table);
  if (columns === undefined) return undefined;
  return (
    `CREATE INDEX IF NOT EXISTS ${quoteIdent(blockIndexName(name))} ` +
    `ON ${quoteIdent(name)} (${columns.map(quoteIdent).join(', ')})`
  );
}

/** Collects the parameters of one statement and hands out their placeholders. */
export class Params {
  readonly values: unknown[] = [];
  constructor(private readonly dialect: Dialect) {}
  add(value: unknown): string {
    this.values.push(value);
    return this.dialect.placeholder(this.values.length);
  }
}
