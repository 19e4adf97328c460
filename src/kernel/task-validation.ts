// Validating a task in its JSON form: the TaskInput structure (schemas/task-input.schema.json), then the
// builder's and the writer's `config` against the schema of the plugin each `type` names. Every problem is
// reported, each with its JSON path from the task's root (e.g. `/functionCallConfig/config/callList`).
//
// The JSON form is the README's example (README.md § Tasks): `task_id`, `functionCallConfig`,
// `resultHandler`, `taskTimeoutMs`. `taskId` is accepted as an alias of `task_id` (camelCase like the other
// fields); giving both is an error.
import type { ErrorObject } from 'ajv';
import { TaskConfigError, type SchemaIssue } from './errors.js';
import { unknownTypeIssue, type PluginKind, type PluginRegistry } from './plugin-registry.js';
import { kernelValidator, prefixIssues, toSchemaIssues } from './schema-validator.js';
import type { PluginConfig, TaskInput } from '../contracts/task.js';

/** Every problem of a task: its structure, then each plugin config against its plugin's schema. */
export function validateTaskInput(json: unknown, registry: PluginRegistry): SchemaIssue[] {
  const issues = structuralIssues(json);
  if (isRecord(json)) {
    issues.push(...pluginConfigIssues(json.functionCallConfig, 'builder', '/functionCallConfig', registry));
    if (json.resultHandler !== undefined) {
      issues.push(...pluginConfigIssues(json.resultHandler, 'writer', '/resultHandler', registry));
    }
  }
  return issues;
}

/**
 * The normalised task (the one `TaskInput` of src/contracts/task.ts: one spelling of every field,
 * defaults applied, a `resultHandler` absent or a plugin). Checks the structure only (plugin configs are checked by validateTaskInput or
 * the registry); throws a TaskConfigError listing every structural problem.
 */
export function normalizeTaskInput(json: unknown): TaskInput {
  const issues = structuralIssues(json);
  if (issues.length || !isRecord(json)) throw new TaskConfigError(issues);
  const plugin = (value: unknown): PluginConfig => {
    const { type, config } = value as { type: string; config?: unknown };
    return { type, config: config === undefined ? {} : config };
  };
  return {
    taskId: (json.task_id ?? json.taskId) as string,
    functionCallConfig: plugin(json.functionCallConfig),
    ...(json.resultHandler !== undefined ? { resultHandler: plugin(json.resultHandler) } : {}),
    taskTimeoutMs: (json.taskTimeoutMs ?? 0) as number,
  };
}

function structuralIssues(json: unknown): SchemaIssue[] {
  const validate = kernelValidator('task-input');
  if (validate(json)) return [];
  return toSchemaIssues(clarifyTaskIdErrors(validate.errors ?? []));
}

/**
 * The task id rules are spelled in the schema as `anyOf` + `dependencies`; ajv reports those as several
 * generic errors ("must match a schema in anyOf", "must NOT be valid"). Say what the user has to do instead.
 */
function clarifyTaskIdErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const out: ErrorObject[] = [];
  for (const e of errors) {
    if (e.schemaPath.startsWith('#/anyOf/')) continue;
    if (e.schemaPath === '#/anyOf') {
      out.push({
        ...e,
        keyword: 'required',
        message: "must have required property 'task_id' (or its alias 'taskId')",
      });
    } else if (e.schemaPath.startsWith('#/dependencies/taskId')) {
      if (e.keyword === 'not') {
        out.push({
          ...e,
          keyword: 'not',
          instancePath: '/taskId',
          message: "give the task id once: 'task_id' or 'taskId', not both",
        });
      }
    } else {
      out.push(e);
    }
  }
  return out;
}

function pluginConfigIssues(
  value: unknown,
  kind: PluginKind,
  base: string,
  registry: PluginRegistry,
): SchemaIssue[] {
  // A missing or malformed {type, config} was already reported by the structural check.
  if (!isRecord(value) || typeof value.type !== 'string') return [];
  const table = kind === 'builder' ? registry.builders : registry.writers;
  if (!table.has(value.type)) return [unknownTypeIssue(kind, value.type, table.types(), `${base}/type`)];
  const config = value.config === undefined ? {} : value.config;
  return prefixIssues(registry.validateTaskConfig(kind, value.type, config), `${base}/config`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
