// What a task needs before it is sent, the one check `blockx validate` and `blockx submit` share, so a
// file validate accepts is one submit accepts and the other way round:
//   1. its shape (schemas/task-input.schema.json) and each plugin config against its plugin's schema. A
//      task without `task_id`/`taskId` is checked as submit sends it: with an id of its own (a fresh
//      UUID, `withTaskId`);
//   2. once the shape is right, the names it uses: its function where the Workers take functions from
//      (function-names.ts), its tables and columns in the config (task-references.ts);
//   3. the writer's tables are writable (`tables.<name>.writable`, docs/storage.md).
// Pure: the plugins, tables and function names are given.
import type { Kernel } from '../kernel/kernel.js';
import type { SchemaIssue } from '../kernel/errors.js';
import { validateTaskInput } from '../kernel/task-validation.js';
import { writerTableIssues } from '../services/storage/table-write-rule.js';
import type { FunctionNames } from './function-names.js';
import { taskReferenceIssues } from './task-references.js';

export interface TaskCheckContext {
  readonly kernel: Pick<Kernel, 'config' | 'plugins'>;
  readonly functions: FunctionNames;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The task as submit sends it: one without `task_id`/`taskId` gets `newId()`. */
export function withTaskId(json: unknown, newId: () => string): unknown {
  return isRecord(json) && json.task_id === undefined && json.taskId === undefined
    ? { task_id: newId(), ...json }
    : json;
}

/** Every problem of a task (its id already given, `withTaskId`), in the order of the file's header. */
export function taskProblems(json: unknown, ctx: TaskCheckContext): SchemaIssue[] {
  const { config, plugins } = ctx.kernel;
  const schema = validateTaskInput(json, plugins);
  // Names only once the shape is right: a missing key is one issue, not two.
  if (schema.length > 0) return schema;
  const references = taskReferenceIssues(json, {
    functions: ctx.functions.names,
    functionsDir: ctx.functions.dir,
    functionsRule: ctx.functions.rule,
    tables: config.tables,
  });
  const reported = new Set(references.map((i) => i.path));
  const writable = writerIssues(json, ctx.kernel).filter((i) => !reported.has(i.path));
  return [...references, ...writable];
}

/** The writer's target tables against `tables.<name>.writable`, when the writer type is known. */
function writerIssues(json: unknown, kernel: TaskCheckContext['kernel']): SchemaIssue[] {
  if (!isRecord(json) || !isRecord(json.resultHandler)) return [];
  const { type, config } = json.resultHandler;
  if (typeof type !== 'string' || !kernel.plugins.writers.has(type)) return [];
  return writerTableIssues(config, kernel.config.tables).map((i) => ({
    ...i,
    path: `/resultHandler/config${i.path}`,
  }));
}
