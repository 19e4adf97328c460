// What a changed `tables` section means for a cluster that is running (docs/storage.md § Changing
// the config of a running cluster). Pure: the running and the new declarations in, a plan out.
//   - a table only the new config declares is `added`: created as `blockx db migrate` creates it, then
//     served at once;
//   - a table whose declaration differs only in what no database holds (`writable`, `description`) is
//     `updated`: taken as it is now;
//   - a table whose shape differs (a column added, dropped, of another type or nullability, another
//     primary key, block, chain or hash column) is `changed`: refused, with the migration it needs,
//     because rows already written have the old shape; the running declaration keeps serving;
//   - a table the new config no longer declares is `removed`: it keeps being served until a restart
//     (a task still running may write it), and nothing is dropped.

import type { ColumnConfig, TableConfig } from '../../kernel/config-types.js';

type Tables = Readonly<Record<string, TableConfig>>;

export interface TableChange {
  readonly table: string;
  /** What differs, one line each. */
  readonly differences: readonly string[];
  /** Statements (or steps) that bring the database to the new declaration. */
  readonly migration: readonly string[];
}

export interface TableChangePlan {
  readonly added: readonly string[];
  readonly updated: readonly string[];
  readonly changed: readonly TableChange[];
  readonly removed: readonly string[];
}

const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const sqlType = (c: ColumnConfig): string => c.type.toUpperCase();

/** Shape-bearing fields of a declaration (what the database holds), for comparison. */
function shapeOf(t: TableConfig): string {
  return JSON.stringify({
    columns: Object.entries(t.columns).map(([name, c]) => [name, c.type, c.nullable === true]),
    primaryKey: t.primaryKey,
    blockColumn: t.blockColumn ?? null,
    chainColumn: t.chainColumn ?? null,
    blockHashColumn: t.blockHashColumn ?? null,
  });
}

function tableChange(name: string, was: TableConfig, now: TableConfig): TableChange {
  const differences: string[] = [];
  const migration: string[] = [];
  let rebuild = false;
  for (const [column, decl] of Object.entries(now.columns)) {
    const old = Object.hasOwn(was.columns, column) ? was.columns[column] : undefined;
    if (old === undefined) {
      differences.push(`column "${column}" (${decl.type}) is new`);
      if (decl.nullable === true)
        migration.push(`ALTER TABLE ${q(name)} ADD COLUMN ${q(column)} ${sqlType(decl)};`);
      else rebuild = true; // NOT NULL without a default cannot be added to rows that exist
      continue;
    }
    if (old.type !== decl.type) {
      differences.push(`column "${column}" was ${old.type}, is ${decl.type}`);
      rebuild = true;
    }
    if ((old.nullable === true) !== (decl.nullable === true)) {
      differences.push(
        `column "${column}" was ${old.nullable === true ? 'nullable' : 'NOT NULL'}, is ${decl.nullable === true ? 'nullable' : 'NOT NULL'}`,
      );
      rebuild = true;
    }
  }
  for (const column of Object.keys(was.columns)) {
    if (!Object.hasOwn(now.columns, column)) {
      differences.push(`column "${column}" is gone`);
      migration.push(`ALTER TABLE ${q(name)} DROP COLUMN ${q(column)};`);
    }
  }
  for (const key of ['primaryKey', 'blockColumn', 'chainColumn', 'blockHashColumn'] as const) {
    const a = JSON.stringify(was[key] ?? null);
    const b = JSON.stringify(now[key] ?? null);
    if (a !== b) {
      differences.push(`${key} was ${a}, is ${b}`);
      rebuild = true;
    }
  }
  // A change ALTER cannot make in place on every backend: the table is made anew from the config.
  const steps = rebuild
    ? [
        `copy out the rows of ${q(name)} you want to keep`,
        `DROP TABLE ${q(name)};`,
        'blockx db migrate (creates it as declared)',
        'load the rows again',
      ]
    : migration;
  return { table: name, differences, migration: [...steps, 'then restart the cluster'] };
}

export function planTableChanges(running: Tables, next: Tables): TableChangePlan {
  const added: string[] = [];
  const updated: string[] = [];
  const changed: TableChange[] = [];
  for (const [name, now] of Object.entries(next)) {
    const was = Object.hasOwn(running, name) ? running[name] : undefined;
    if (was === undefined) added.push(name);
    else if (shapeOf(was) !== shapeOf(now)) changed.push(tableChange(name, was, now));
    else if (JSON.stringify(was) !== JSON.stringify(now)) updated.push(name);
  }
  const removed = Object.keys(running).filter((name) => !Object.hasOwn(next, name));
  return { added, updated, changed, removed };
}

/** The tables a running cluster serves after `plan`: the new declarations, less what was refused. */
export function tablesAfter(running: Tables, next: Tables, plan: TableChangePlan): Tables {
  const refused = new Set(plan.changed.map((c) => c.table));
  const out: Record<string, TableConfig> = {};
  for (const [name, t] of Object.entries(running)) out[name] = t;
  for (const [name, t] of Object.entries(next)) if (!refused.has(name)) out[name] = t;
  return out;
}
