// Plugin schemas are compiled with ajv's useDefaults: validating a task config fills in every default
// of the schema, so the config a plugin receives needs no defaults of its own (docs/plugins.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileForeignSchema } from '../../../src/kernel/schema-validator.js';

function validator(schema: unknown) {
  const compiled = compileForeignSchema(schema);
  if (!compiled.ok) throw new Error(compiled.reason);
  return compiled.validate;
}

const pluginSchema = (dir: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../../plugins/${dir}/schema.json`, import.meta.url), 'utf8'));

describe('plugin schema defaults', () => {
  it.each([
    [
      'nested object defaults (BlockWriteResultHandler columns)',
      'writers/block-write',
      { table: 't', chainId: 1, block: { number: 2 } },
      {
        table: 't',
        chainId: 1,
        block: { number: 2 },
        columns: { chainColumn: 'chain_id', blockColumn: 'block_number' },
      },
    ],
    [
      'a default beside a oneOf, and a given value kept (BlockBundleCallConfig)',
      'builders/block-bundle',
      { function: 'f', table: 't', chainId: 1, bundle: 1, hashColumn: null },
      {
        function: 'f',
        table: 't',
        chainId: 1,
        bundle: 1,
        hashColumn: null,
        bundleSize: 1000,
        where: {},
        extraArgs: [],
        stream: { enabled: false },
        blocksTable: 'blocks',
        numberColumn: 'block_number',
      },
    ],
  ])('fills in %s', (_name, dir, config, expected) => {
    const validate = validator(pluginSchema(dir));
    const copy = structuredClone(config);
    expect(validate(copy)).toBe(true);
    expect(copy).toEqual(expected);
  });

  it('fills defaults in a 2020-12 schema too', () => {
    const validate = validator({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { suffix: { type: 'string', default: '!' } },
    });
    const config: Record<string, unknown> = {};
    expect(validate(config)).toBe(true);
    expect(config).toEqual({ suffix: '!' });
  });
});
