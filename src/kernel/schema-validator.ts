// The one place that builds ajv instances and turns ajv errors into SchemaIssues.
//
// Kernel schemas (schemas/*.schema.json) are compiled once per process and cached. Plugin schemas are
// compiled in one shared instance per dialect (a fresh instance costs ~75 ms: it compiles the meta-schema)
// and removed from it right after compiling, so plugin authors' `$id`s never collide with each other.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { AJV_OPTIONS, FOREIGN_AJV_OPTIONS } from './ajv-options.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { SchemaIssue } from './errors.js';
import { PACKAGE_ROOT, packagePath } from './package-root.js';
import { validators as builtinPluginValidators } from './generated/builtin-plugin-validators.js';
import { validators as kernelSchemaValidators } from './generated/kernel-schema-validators.js';

const DRAFT_07 = 'http://json-schema.org/draft-07/schema';
const DRAFT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

// ajv-formats is CommonJS; under NodeNext its plugin function sits on `.default`, not on the module itself.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv | Ajv2020) => unknown }).default;

/** Which JSON Schema dialect a schema declares: draft-07 (the default) or 2020-12. */
export function schemaDialect(schema: unknown): 'draft-07' | '2020-12' | { unsupported: string } {
  const declared =
    typeof schema === 'object' && schema !== null ? (schema as { $schema?: unknown }).$schema : undefined;
  if (declared === undefined) return 'draft-07';
  if (typeof declared !== 'string') return { unsupported: String(declared) };
  const bare = declared.replace(/#$/, '').replace(/^https:/, 'http:');
  if (bare === DRAFT_07) return 'draft-07';
  if (bare === DRAFT_2020_12.replace(/^https:/, 'http:')) return '2020-12';
  return { unsupported: declared };
}

/** A fresh ajv instance (allErrors, strict, formats) for the schema's dialect. */
export function createAjv(dialect: 'draft-07' | '2020-12' = 'draft-07'): Ajv | Ajv2020 {
  const ajv = dialect === '2020-12' ? new Ajv2020(AJV_OPTIONS) : new Ajv(AJV_OPTIONS);
  addFormats(ajv);
  return ajv;
}

/**
 * The generated validator of a built-in plugin's schema (config-fields/render-schema-validators.ts), when
 * `schemaPath` is that plugin's schema file inside this package and `schema` (what the file holds now) is
 * the schema it was generated from; undefined otherwise, and the caller compiles the schema.
 */
export function builtinPluginValidator(schemaPath: string, schema: unknown): ValidateFunction | undefined {
  const key = path.relative(PACKAGE_ROOT, schemaPath).split(path.sep).join('/');
  const entry = (
    builtinPluginValidators as Record<string, { validate: unknown; source: string } | undefined>
  )[key];
  return entry !== undefined && JSON.stringify(schema) === entry.source
    ? (entry.validate as ValidateFunction)
    : undefined;
}

/** Result of compiling a schema supplied by someone else (a plugin author). */
export type CompileResult = { ok: true; validate: ValidateFunction } | { ok: false; reason: string };

/**
 * Compiles a schema supplied by a plugin. Never throws: a schema that is not valid JSON Schema (fails
 * the meta-schema), uses an unsupported `$schema`, or cannot be compiled (unknown keyword, unresolved
 * `$ref`) comes back as `{ ok: false, reason }`.
 */
export function compileForeignSchema(schema: unknown): CompileResult {
  if (
    typeof schema !== 'boolean' &&
    (typeof schema !== 'object' || schema === null || Array.isArray(schema))
  ) {
    return { ok: false, reason: 'a JSON Schema must be an object or a boolean' };
  }
  const dialect = schemaDialect(schema);
  if (typeof dialect === 'object') {
    return {
      ok: false,
      reason: `unsupported $schema "${dialect.unsupported}"; use draft-07 (${DRAFT_07}#) or 2020-12 (${DRAFT_2020_12})`,
    };
  }
  const ajv = foreignAjv(dialect);
  const valid = ajv.validateSchema(schema as AnySchema);
  if (valid !== true) {
    // Branch errors of the meta-schema's anyOf repeat what the enum/type errors already say.
    const issues = toSchemaIssues(ajv.errors?.filter((e) => e.keyword !== 'anyOf'));
    return {
      ok: false,
      reason: `not a valid JSON Schema: ${issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`,
    };
  }
  try {
    // The compiled function keeps what it needs; the instance forgets the schema (and its $id).
    return { ok: true, validate: ajv.compile(schema as AnySchema) };
  } catch (err) {
    return { ok: false, reason: `schema does not compile: ${(err as Error).message}` };
  } finally {
    ajv.removeSchema(schema as AnySchema);
  }
}

const foreignInstances = new Map<'draft-07' | '2020-12', Ajv | Ajv2020>();

function foreignAjv(dialect: 'draft-07' | '2020-12'): Ajv | Ajv2020 {
  let ajv = foreignInstances.get(dialect);
  if (!ajv) {
    ajv = dialect === '2020-12' ? new Ajv2020(FOREIGN_AJV_OPTIONS) : new Ajv(FOREIGN_AJV_OPTIONS);
    addFormats(ajv);
    foreignInstances.set(dialect, ajv);
  }
  return ajv;
}

/** Absolute path of a kernel schema file, e.g. `kernelSchemaPath('task-input')`. */
export function kernelSchemaPath(name: string): string {
  return packagePath('schemas', `${name}.schema.json`);
}

const kernelValidators = new Map<string, ValidateFunction>();

/**
 * The validator of a kernel schema: generated with the schema when it is one every process checks at start
 * (config-fields/render-schema-validators.ts), else compiled on first use and cached for the process.
 */
export function kernelValidator(name: string): ValidateFunction {
  const cached = kernelValidators.get(name);
  if (cached) return cached;
  const generated = (kernelSchemaValidators as Record<string, { validate: unknown } | undefined>)[name];
  if (generated !== undefined) {
    kernelValidators.set(name, generated.validate as ValidateFunction);
    return generated.validate as ValidateFunction;
  }
  const schema = JSON.parse(readFileSync(kernelSchemaPath(name), 'utf8')) as AnySchema;
  const dialect = schemaDialect(schema);
  const validate = createAjv(typeof dialect === 'string' ? dialect : 'draft-07').compile(schema);
  kernelValidators.set(name, validate);
  return validate;
}

/** ajv errors → SchemaIssues: JSON path (prefixed), the failed keyword as `rule`, and a readable message. */
export function toSchemaIssues(
  errors: readonly ErrorObject[] | null | undefined,
  prefix = '',
): SchemaIssue[] {
  return (errors ?? []).map((e) => ({
    path: prefix + e.instancePath,
    rule: e.keyword,
    message: describe(e),
  }));
}

function describe(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  const base = e.message ?? `fails ${e.keyword}`;
  switch (e.keyword) {
    case 'additionalProperties':
      return `${base}: '${String(params.additionalProperty)}'`;
    case 'enum':
      return `${base}: ${JSON.stringify(params.allowedValues)}${got(e)}`;
    case 'const':
      return `${base}: ${JSON.stringify(params.allowedValue)}${got(e)}`;
    case 'type':
    case 'pattern':
    case 'format':
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'minLength':
    case 'maxLength':
      return `${base}${got(e)}`;
    default:
      return base;
  }
}

function got(e: ErrorObject): string {
  if (e.data === undefined) return '';
  const text = JSON.stringify(e.data);
  return ` (got ${text.length > 60 ? `${text.slice(0, 57)}...` : text})`;
}

/** Prefixes issue paths, e.g. to place a plugin config's issues under `/functionCallConfig/config`. */
export function prefixIssues(issues: readonly SchemaIssue[], prefix: string): SchemaIssue[] {
  return issues.map((i) => ({ ...i, path: prefix + i.path }));
}
