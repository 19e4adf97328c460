// The validators generated with the package (config-fields/render-schema-validators.ts) stand in for
// compiling the schemas when a process starts, so they must decide exactly what a compiled one decides:
// the same verdict, the same issues, and the same defaults filled in. Checked on each built-in plugin's
// schema and each precompiled kernel schema against the schema compiled as before, over the example
// tasks' configs, hand-picked wrong ones, and values fast-check makes from each schema's own keys.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AJV_OPTIONS } from '../../../src/kernel/ajv-options.js';
import {
  builtinPluginSchemaFiles,
  PRECOMPILED_KERNEL_SCHEMAS,
} from '../../../src/kernel/config-fields/render-schema-validators.js';
import { packagePath } from '../../../src/kernel/package-root.js';
import {
  builtinPluginValidator,
  compileForeignSchema,
  kernelValidator,
  toSchemaIssues,
} from '../../../src/kernel/schema-validator.js';
import { Ajv } from 'ajv';

const readJson = (file: string): unknown => JSON.parse(readFileSync(packagePath(file), 'utf8'));

/** What a validator decides about `value`: its verdict, its issues, and the value after (defaults). */
function outcome(validate: ValidateFunction, value: unknown) {
  const copy = structuredClone(value);
  const ok = validate(copy);
  return { ok, issues: toSchemaIssues(validate.errors), after: copy };
}

/** Every property name a schema mentions: the keys generated values are made of. */
function keysOf(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) for (const s of schema) keysOf(s, into);
  else if (typeof schema === 'object' && schema !== null) {
    for (const [k, v] of Object.entries(schema)) {
      if (k === 'properties' && typeof v === 'object' && v !== null)
        for (const p of Object.keys(v)) into.add(p);
      keysOf(v, into);
    }
  }
  return into;
}

/** JSON values whose objects use the schema's own keys (and one it does not know), a few levels deep. */
function valuesFor(schema: unknown): fc.Arbitrary<unknown> {
  const keys = [...keysOf(schema), 'unknownKey'];
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom(null, true, 0, 1, -1, 2 ** 40, 1.5, '', 'x', 'transfers', '0xabc'),
      fc.dictionary(fc.constantFrom(...keys), tie('value'), { maxKeys: 6 }),
      fc.array(tie('value'), { maxLength: 3 }),
    ),
  }));
  return value;
}

const examples = ['block-table-transfers', 'bundle-transfers', 'hello-world'].map(
  (name) => readJson(`examples/tasks/${name}.json`) as Record<string, { type?: string; config?: unknown }>,
);
const exampleConfigs = (type: string): unknown[] =>
  examples.flatMap((t) =>
    [t.functionCallConfig, t.resultHandler].flatMap((p) => (p?.type === type ? [p.config] : [])),
  );
const WRONG: unknown[] = [null, [], 'text', 7, {}, { unknownKey: 1 }, { table: 1, function: '' }];

describe('generated validators decide what the compiled schema decides', () => {
  const files = builtinPluginSchemaFiles();

  it('there is one for each built-in plugin', () => {
    expect(files.length).toBeGreaterThanOrEqual(9);
    for (const file of files) expect(builtinPluginValidator(packagePath(file), readJson(file))).toBeDefined();
  });

  it.each(files)('%s', (file) => {
    const schema = readJson(file);
    const generated = builtinPluginValidator(packagePath(file), schema) as ValidateFunction;
    const compiled = compileForeignSchema(schema);
    if (!compiled.ok) throw new Error(compiled.reason);
    const type = String((schema as { $id?: string }).$id)
      .split(':')
      .at(-1) as string;
    for (const value of [...exampleConfigs(type), ...WRONG])
      expect(outcome(generated, value)).toEqual(outcome(compiled.validate, value));
    fc.assert(
      fc.property(valuesFor(schema), (value) => {
        expect(outcome(generated, value)).toEqual(outcome(compiled.validate, value));
      }),
      { numRuns: 200 },
    );
  });

  it.each(PRECOMPILED_KERNEL_SCHEMAS)('kernel schema %s', (name) => {
    const schema = readJson(`schemas/${name}.schema.json`) as object;
    const compiled = new Ajv(AJV_OPTIONS).compile(schema);
    const generated = kernelValidator(name);
    expect(generated).not.toBe(compiled);
    for (const value of [...examples, ...WRONG])
      expect(outcome(generated, value)).toEqual(outcome(compiled, value));
    fc.assert(
      fc.property(valuesFor(schema), (value) => {
        expect(outcome(generated, value)).toEqual(outcome(compiled, value));
      }),
      { numRuns: 200 },
    );
  });
});

describe('a built-in schema that is not the one the validator was generated from is compiled instead', () => {
  it('an edited installed schema, or a schema file outside the package, gets no generated validator', () => {
    const [file] = builtinPluginSchemaFiles() as [string];
    const schema = readJson(file) as Record<string, unknown>;
    expect(builtinPluginValidator(packagePath(file), { ...schema, description: 'edited' })).toBeUndefined();
    expect(builtinPluginValidator(path.join('/elsewhere', file), schema)).toBeUndefined();
  });
});
