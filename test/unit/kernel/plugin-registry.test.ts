import { describe, expect, it } from 'vitest';
import { KernelErrorCode, PluginLoadError, TaskConfigError } from '../../../src/kernel/errors.js';
import {
  createPluginRegistry,
  PluginRegistryBuilder,
  type PluginDefinition,
} from '../../../src/kernel/plugin-registry.js';
import type { BuilderPlugin, WriterPlugin } from '../../../src/kernel/plugin-types.js';

const builderImpl: BuilderPlugin = { build: () => ({ calls: [] }) };
const writerImpl: WriterPlugin = { execute: async () => [] };

function builder(
  type: string,
  schema: unknown = { type: 'object' },
  extra: Partial<PluginDefinition<BuilderPlugin>> = {},
) {
  return { type, name: type.toLowerCase(), packagePath: `/p/${type}`, schema, impl: builderImpl, ...extra };
}
function writer(type: string, schema: unknown = { type: 'object' }) {
  return { type, name: type.toLowerCase(), packagePath: `/p/${type}`, schema, impl: writerImpl };
}

/** The codes of the errors createPluginRegistry rejects with. */
function rejectionCodes(definitions: Parameters<typeof createPluginRegistry>[0]): string[] {
  try {
    createPluginRegistry(definitions);
  } catch (err) {
    expect(err).toBeInstanceOf(PluginLoadError);
    return (err as PluginLoadError).errors.map((e) => e.code);
  }
  throw new Error('expected createPluginRegistry to reject');
}

const callListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['function', 'callList'],
  properties: { function: { type: 'string' }, callList: { type: 'array', items: { type: 'array' } } },
};

describe('PluginRegistry', () => {
  const registry = createPluginRegistry({
    builders: [builder('ZetaCallConfig'), builder('CallListCallConfig', callListSchema)],
    writers: [writer('ReturnValueResultHandler', { type: 'object', additionalProperties: false })],
  });

  it('looks plugins up by kind and type, and lists them sorted by type', () => {
    expect(registry.builders.get('CallListCallConfig')).toMatchObject({
      kind: 'builder',
      name: 'calllistcallconfig',
    });
    expect(registry.writers.get('CallListCallConfig')).toBeUndefined();
    expect(registry.builders.get('ReturnValueResultHandler')).toBeUndefined();
    expect(registry.builders.list().map((p) => p.type)).toEqual(['CallListCallConfig', 'ZetaCallConfig']);
    expect(registry.writers.types()).toEqual(['ReturnValueResultHandler']);
    expect(registry.builders.has('ZetaCallConfig')).toBe(true);
  });

  it('is read-only', () => {
    expect(Object.isFrozen(registry)).toBe(true);
    expect(Object.isFrozen(registry.builders)).toBe(true);
    expect(Object.isFrozen(registry.builders.get('ZetaCallConfig'))).toBe(true);
    expect(Object.isFrozen(registry.builders.list())).toBe(true);
  });

  it('validateTaskConfig: [] for a valid config; every issue with path, rule and message otherwise', () => {
    expect(
      registry.validateTaskConfig('builder', 'CallListCallConfig', { function: 'f', callList: [['a']] }),
    ).toEqual([]);
    const issues = registry.validateTaskConfig('builder', 'CallListCallConfig', {
      function: 7,
      callList: ['not-an-array'],
      extra: 1,
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: '', rule: 'additionalProperties', message: "must NOT have additional properties: 'extra'" },
        { path: '/function', rule: 'type', message: 'must be string (got 7)' },
        { path: '/callList/0', rule: 'type', message: 'must be array (got "not-an-array")' },
      ]),
    );
    expect(issues).toHaveLength(3);
  });

  it('validateTaskConfig: an unknown type is one issue listing the known types of that kind', () => {
    expect(registry.validateTaskConfig('builder', 'NopeCallConfig', {})).toEqual([
      {
        path: '',
        rule: 'knownType',
        message:
          'unknown builder type "NopeCallConfig"; known builder types: CallListCallConfig, ZetaCallConfig',
      },
    ]);
    expect(registry.validateTaskConfig('writer', 'CallListCallConfig', {})[0]?.message).toContain(
      'known writer types: ReturnValueResultHandler',
    );
  });

  it('assertTaskConfig throws a TaskConfigError carrying the issues and the type', () => {
    expect(() => registry.assertTaskConfig('writer', 'ReturnValueResultHandler', {})).not.toThrow();
    let caught: unknown;
    try {
      registry.assertTaskConfig('builder', 'CallListCallConfig', { function: 'f' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TaskConfigError);
    const err = caught as TaskConfigError;
    expect(err.code).toBe(KernelErrorCode.TASK_CONFIG_INVALID);
    expect(err.pluginType).toBe('CallListCallConfig');
    expect(err.issues).toEqual([
      { path: '', rule: 'required', message: "must have required property 'callList'" },
    ]);
  });
});

describe('registration rejects bad definitions, each with its code', () => {
  it.each([
    [
      'a type that is not PascalCase',
      { builders: [builder('callList')] },
      KernelErrorCode.PLUGIN_MANIFEST_INVALID,
    ],
    [
      'a schema that is not JSON Schema',
      { builders: [builder('ACallConfig', { type: 'nope' })] },
      KernelErrorCode.PLUGIN_SCHEMA_INVALID,
    ],
    [
      'a schema with an unknown keyword',
      { builders: [builder('ACallConfig', { typo: 1 })] },
      KernelErrorCode.PLUGIN_SCHEMA_INVALID,
    ],
    [
      'a schema with an unresolved $ref',
      { builders: [builder('ACallConfig', { $ref: 'other.json' })] },
      KernelErrorCode.PLUGIN_SCHEMA_INVALID,
    ],
    [
      'an unsupported $schema',
      { builders: [builder('ACallConfig', { $schema: 'http://json-schema.org/draft-04/schema#' })] },
      KernelErrorCode.PLUGIN_SCHEMA_INVALID,
    ],
    [
      'a schema that is an array',
      { builders: [builder('ACallConfig', [])] },
      KernelErrorCode.PLUGIN_SCHEMA_INVALID,
    ],
    [
      'a builder without build()',
      { builders: [builder('ACallConfig', {}, { impl: writerImpl as never })] },
      KernelErrorCode.PLUGIN_EXPORT_INVALID,
    ],
    [
      'a writer that is a function',
      { writers: [{ ...writer('AResultHandler'), impl: (() => []) as never }] },
      KernelErrorCode.PLUGIN_EXPORT_INVALID,
    ],
    [
      'a type used by a builder and a writer',
      { builders: [builder('SameName')], writers: [writer('SameName')] },
      KernelErrorCode.PLUGIN_DUPLICATE_TYPE,
    ],
  ])('%s', (_name, definitions, code) => {
    expect(rejectionCodes(definitions)).toEqual([code]);
  });

  it('collects every rejection, keeps the good plugins, and never registers a rejected one', () => {
    const b = new PluginRegistryBuilder();
    expect(b.builders.add(builder('GoodCallConfig'))).toBe(true);
    expect(b.builders.add(builder('GoodCallConfig', { type: 'object' }, { packagePath: '/other' }))).toBe(
      false,
    );
    expect(b.writers.add(writer('BadResultHandler', { type: 'nope' }))).toBe(false);
    expect(b.errors.map((e) => e.code)).toEqual([
      KernelErrorCode.PLUGIN_DUPLICATE_TYPE,
      KernelErrorCode.PLUGIN_SCHEMA_INVALID,
    ]);
    expect(b.errors[0]?.message).toContain('/p/GoodCallConfig');
    expect(b.errors[0]?.message).toContain('/other');
    const registry = b.build();
    expect(registry.builders.get('GoodCallConfig')?.packagePath).toBe('/p/GoodCallConfig');
    expect(registry.writers.types()).toEqual([]);
  });

  it('two plugins may use the same schema $id (each schema is compiled on its own)', () => {
    const registry = createPluginRegistry({
      builders: [
        builder('OneCallConfig', { $id: 'urn:test:same', type: 'object', required: ['a'] }),
        builder('TwoCallConfig', { $id: 'urn:test:same', type: 'object', required: ['b'] }),
      ],
    });
    expect(registry.validateTaskConfig('builder', 'OneCallConfig', { a: 1 })).toEqual([]);
    expect(registry.validateTaskConfig('builder', 'TwoCallConfig', { a: 1 })[0]?.message).toContain("'b'");
  });

  it('accepts draft 2020-12 schemas and formats', () => {
    const registry = createPluginRegistry({
      writers: [
        writer('UrlResultHandler', {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: { url: { type: 'string', format: 'uri' }, pair: { prefixItems: [{ type: 'string' }] } },
        }),
      ],
    });
    expect(registry.validateTaskConfig('writer', 'UrlResultHandler', { url: 'https://x.test/a' })).toEqual(
      [],
    );
    expect(registry.validateTaskConfig('writer', 'UrlResultHandler', { url: 'not a uri' })).toMatchObject([
      { path: '/url', rule: 'format' },
    ]);
  });
});
