// Compares the declared tables with what the database holds and decides what migrate does. Pure: the
// backend introspects (schema-introspect.ts), this decides, the backend creates. Any difference in an
// existing table (a missing or extra column, another type or nullability, another primary key) is
// reported, one human line each, and nothing is altered: changing a table that holds data is an
// operator's decision, not a side effect of starting a worker.
//
// SQLite stores integer, bigint and boolean all as INTEGER (and text, json as TEXT), so on SQLite a
// change between those types is not visible to the comparison.

import type { TableConfig } from '../../kernel/config-types.js';
import type { DbTable } from './schema-introspect.js';
import { blockIndexColumns } from './sql-dialect.js';
import type { Dialect } from './sql-dialect.js';

export interface MigrationPlan {
  /** Tables to create, in config order. */
  readonly create: readonly string[];
  /**
   * Tables (created or existing, in config order) to give the block index: the DELETE of a block
   * replacement filters on (chainColumn, blockColumn) and must search an index, never scan the table
   * (docs/storage.md, "Bulk writes"). Not where the primary key (or another index) already leads with
   * those columns: a second index would only slow every write down.
   */
  readonly index: readonly string[];
  /** Tables that exist and match. */
  readonly unchanged: readonly string[];
  /** Every difference; non-empty means migrate must fail and change nothing. */
  readonly differences: readonly string[];
}

/** Every difference between a declared table and its database table. */
export function tableDifferences(
  dialect: Dialect,
  name: string,
  declared: TableConfig,
  actual: DbTable,
): string[] {
  const out: string[] = [];
  const where = `table "${name}"`;
  const inDb = new Map(actual.columns.map((c) => [c.name, c]));
  for (const [column, decl] of Object.entries(declared.columns)) {
    const found = inDb.get(column);
    if (found === undefined) {
      out.push(`${where}: column "${column}" (${decl.type}) is missing from the database`);
      continue;
    }
    const expected = dialect.columnType(decl.type);
    if (found.type !== expected)
      out.push(
        `${where}: column "${column}" is ${decl.type} in the config but ${found.type} in the database`,
      );
    // Primary key columns are NOT NULL whatever the declaration says (PostgreSQL enforces it).
    const nullable = decl.nullable && !declared.primaryKey.includes(column);
    if (nullable !== found.nullable)
      out.push(
        `${where}: column "${column}" is ${nullable ? 'nullable' : 'NOT NULL'} in the config but ` +
          `${found.nullable ? 'nullable' : 'NOT NULL'} in the database`,
      );
  }
  for (const column of actual.columns) {
    if (!Object.hasOwn(declared.columns, column.name))
      out.push(`${where}: column "${column.name}" (${column.type}) is in the database but not in the config`);
  }
  const pkDeclared = declared.primaryKey.join(', ');
  const pkActual = actual.primaryKey.join(', ');
  if (pkDeclared !== pkActual)
    out.push(
      `${where}: primary key is (${pkDeclared}) in the config but ` +
        `${actual.primaryKey.length === 0 ? 'there is none' : `(${pkActual})`} in the database`,
    );
  return out;
}

/** What migrate does given each declared table's database shape (undefined: it does not exist). */
export function planMigration(
  dialect: Dialect,
  tables: Readonly<Record<string, TableConfig>>,
  actual: ReadonlyMap<string, DbTable | undefined>,
  checkOnly: boolean,
): MigrationPlan {
  const create: string[] = [];
  const index: string[] = [];
  const unchanged: string[] = [];
  const differences: string[] = [];
  for (const [name, declared] of Object.entries(tables)) {
    const found = actual.get(name);
    if (found === undefined) {
      if (checkOnly) differences.push(`table "${name}" does not exist in the database`);
      else create.push(name);
      if (!checkOnly && needsBlockIndex(declared, [])) index.push(name);
      continue;
    }
    const diff = tableDifferences(dialect, name, declared, found);
    if (diff.length === 0) unchanged.push(name);
    else differences.push(...diff);
    if (diff.length === 0 && !checkOnly && needsBlockIndex(declared, found.indexes ?? [])) index.push(name);
  }
  return { create, index, unchanged, differences };
}

/**
 * Whether `table` lacks an index whose leading columns are its block index columns (in any order) among
 * its primary key and `indexes` (each index's columns, as introspected).
 */
export function needsBlockIndex(table: TableConfig, indexes: readonly (readonly string[])[]): boolean {
  const wanted = blockIndexColumns(table);
  if (wanted === undefined) return false;
  const leads = (columns: readonly string[]): boolean => {
    const head = columns.slice(0, wanted.length);
    return head.length === wanted.length && wanted.every((c) => head.includes(c));
  };
  return !leads(table.primaryKey) && !indexes.some(leads);
}
