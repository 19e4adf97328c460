// The names a task refers to, checked before run time (`blockx validate`, `blockx submit`): the function
// its builder calls must be a file of the functions folder, and the tables and columns its builder and
// writer name must be declared in the config. Each miss is a SchemaIssue with a "did you mean" when a
// name is one typo away (the config loader's `closest`), and the list to choose from otherwise. The
// schemas cannot say this: they know the shape of a config, not which functions and tables exist.
//
// The conventions read are the built-in plugins' (plugins/*/schema.json): a builder's `function`,
// `table`, `blocksTable`, `columns`, `where`, `numberColumn`, `hashColumn`; a writer's `table`, `tables`
// and `columns.*Column`. A third-party plugin using the same keys gets the same checks.
//
// Pure: the function names and the tables are given.
import { closest } from '../kernel/config-schema.js';
import type { TableConfig } from '../kernel/config-types.js';
import type { SchemaIssue } from '../kernel/errors.js';

export interface TaskReferenceContext {
  /** Function names of the functions folder; undefined when it cannot be known here (not checked). */
  readonly functions: readonly string[] | undefined;
  /** Where they were looked for, for the message. */
  readonly functionsDir: string;
  /** The config rule a missing function breaks. Default `functions.dir`. */
  readonly functionsRule?: string;
  readonly tables: Readonly<Record<string, TableConfig>>;
}

type Json = Record<string, unknown>;

function isRecord(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** ` (did you mean "x"?)`, else `; <label>: a, b, c` (or `none`). */
function suggestion(name: string, candidates: readonly string[], label: string): string {
  const guess = closest(name, [...candidates]);
  const list = candidates.length > 0 ? candidates.join(', ') : 'none';
  return guess !== undefined ? ` (did you mean "${guess}"?; ${label}: ${list})` : ` (${label}: ${list})`;
}

function functionIssue(name: unknown, path: string, ctx: TaskReferenceContext): SchemaIssue[] {
  if (typeof name !== 'string' || ctx.functions === undefined || ctx.functions.includes(name)) return [];
  const known = [...ctx.functions].sort();
  return [
    {
      path,
      rule: ctx.functionsRule ?? 'functions.dir',
      message: `function "${name}" is not in ${ctx.functionsDir}${suggestion(name, known, 'available')}`,
    },
  ];
}

/** The issue when `name` is not a declared table; undefined when it is. */
function tableIssue(name: string, path: string, ctx: TaskReferenceContext): SchemaIssue | undefined {
  if (Object.hasOwn(ctx.tables, name)) return undefined;
  return {
    path,
    rule: 'tables',
    message: `table "${name}" is not declared in the config${suggestion(name, Object.keys(ctx.tables).sort(), 'declared')}`,
  };
}

function columnIssue(table: string, column: unknown, path: string, ctx: TaskReferenceContext): SchemaIssue[] {
  const config = ctx.tables[table];
  if (typeof column !== 'string' || config === undefined || Object.hasOwn(config.columns, column)) return [];
  return [
    {
      path,
      rule: `tables.${table}.columns`,
      message: `column "${column}" is not a column of table "${table}"${suggestion(column, Object.keys(config.columns), 'columns')}`,
    },
  ];
}

/** A builder config's names: its function, the tables it scans, and their columns. */
export function builderReferenceIssues(
  config: unknown,
  ctx: TaskReferenceContext,
  base: string,
): SchemaIssue[] {
  if (!isRecord(config)) return [];
  const issues = functionIssue(config.function, `${base}/function`, ctx);
  if (typeof config.blocksTable === 'string') {
    const bad = tableIssue(config.blocksTable, `${base}/blocksTable`, ctx);
    if (bad !== undefined) issues.push(bad);
  }
  if (typeof config.table !== 'string') return issues;
  const table = config.table;
  const bad = tableIssue(table, `${base}/table`, ctx);
  if (bad !== undefined) return [...issues, bad];
  // The bundle builder's numberColumn / hashColumn are columns of the scanned table (null: none).
  issues.push(...columnIssue(table, config.numberColumn, `${base}/numberColumn`, ctx));
  issues.push(...columnIssue(table, config.hashColumn, `${base}/hashColumn`, ctx));
  if (Array.isArray(config.columns)) {
    config.columns.forEach((c, i) => issues.push(...columnIssue(table, c, `${base}/columns/${i}`, ctx)));
  }
  if (isRecord(config.where)) {
    for (const key of Object.keys(config.where)) {
      issues.push(...columnIssue(table, key, `${base}/where/${key}`, ctx));
    }
  }
  return issues;
}

/** A writer config's names: the tables it writes (`table`, the `tables` allow-list) and its columns. */
export function writerReferenceIssues(
  config: unknown,
  ctx: TaskReferenceContext,
  base: string,
): SchemaIssue[] {
  if (!isRecord(config)) return [];
  const issues: SchemaIssue[] = [];
  if (typeof config.table === 'string') {
    const table = config.table;
    const bad = tableIssue(table, `${base}/table`, ctx);
    if (bad !== undefined) issues.push(bad);
    else if (isRecord(config.columns)) {
      for (const [key, column] of Object.entries(config.columns)) {
        issues.push(...columnIssue(table, column, `${base}/columns/${key}`, ctx));
      }
    }
  }
  if (Array.isArray(config.tables)) {
    config.tables.forEach((t, i) => {
      const bad = typeof t === 'string' ? tableIssue(t, `${base}/tables/${i}`, ctx) : undefined;
      if (bad !== undefined) issues.push(bad);
    });
  }
  return issues;
}

/** Every reference problem of a task JSON (the shape the task-input schema accepts). */
export function taskReferenceIssues(task: unknown, ctx: TaskReferenceContext): SchemaIssue[] {
  if (!isRecord(task)) return [];
  const issues: SchemaIssue[] = [];
  const builder = task.functionCallConfig;
  if (isRecord(builder))
    issues.push(...builderReferenceIssues(builder.config, ctx, '/functionCallConfig/config'));
  const writer = task.resultHandler;
  if (isRecord(writer)) issues.push(...writerReferenceIssues(writer.config, ctx, '/resultHandler/config'));
  return issues;
}
