// schemas/blockx.config.schema.json from the field table: each row becomes one property with its type
// fragment, `default` and a description that ends "Default N. Env VAR."; each group an object with
// `additionalProperties: false`. Pure; scripts/gen-config.mjs writes the result (prettier-formatted) and
// scripts/check-generated.mjs fails when the file differs.
import { defaultFor, fieldDescription, isByKind, type ConfigField, type FieldType } from './field.js';
import { fieldTree, type GroupNode } from './field-tree.js';
import { CONFIG_FIELDS, groupOf } from './index.js';
import { SCHEMA_HEAD, SHARED_DEFS, STRUCTURE_DEFS } from './schema-skeleton.js';

type Json = Record<string, unknown>;

const ref = (name: string): Json => ({ $ref: `#/$defs/${name}` });

export function typeFragment(type: FieldType): Json {
  switch (type.t) {
    case 'int':
      if (type.max === undefined && type.min === 1) return ref('positiveInt');
      if (type.max === undefined && type.min === 0) return ref('nonNegativeInt');
      return { type: 'integer', minimum: type.min, ...(type.max === undefined ? {} : { maximum: type.max }) };
    case 'fraction':
      return ref('fraction');
    case 'boolean':
      return { type: 'boolean' };
    case 'enum':
      return type.typed ? { type: 'string', enum: [...type.values] } : { enum: [...type.values] };
    case 'listenAddr':
    case 'registryPrefix':
    case 'identifier':
      return ref(type.t);
    case 'string':
      return {
        type: 'string',
        ...(type.pattern === undefined ? {} : { pattern: type.pattern }),
        ...(type.minLength === undefined ? {} : { minLength: type.minLength }),
      };
    case 'list':
      return {
        type: 'array',
        ...(type.minItems === undefined ? {} : { minItems: type.minItems }),
        ...(type.uniqueItems ? { uniqueItems: true } : {}),
        items:
          type.item === 'registryPrefix'
            ? ref('registryPrefix')
            : type.values !== undefined
              ? { type: 'string', enum: [...type.values] }
              : { type: 'string', minLength: 1 },
      };
    default: {
      const never: never = type;
      throw new Error(`unknown field type ${JSON.stringify(never)}`);
    }
  }
}

function leafSchema(field: ConfigField): Json {
  // A per-kind default has no single `default`; its description names both.
  const value = isByKind(field.default) ? undefined : defaultFor(field, 'block');
  return {
    ...typeFragment(field.type),
    ...(value === undefined ? {} : { default: value }),
    description: fieldDescription(field),
  };
}

function groupSchema(section: ConfigField['section'], group: GroupNode): Json {
  const description = groupOf(section, group.path)?.description;
  const properties: Json = {};
  for (const [key, child] of group.children) {
    properties[key] = child.node === 'leaf' ? leafSchema(child.field) : groupSchema(section, child);
  }
  return {
    type: 'object',
    additionalProperties: false,
    ...(description === undefined ? {} : { description }),
    properties,
  };
}

/** `functions` with its `retry` map (function name → `$defs/functionRetry`), which no row describes. */
function withRetryMap(functions: Json): Json {
  return {
    ...functions,
    properties: {
      ...(functions['properties'] as Json),
      retry: {
        type: 'object',
        description:
          "How calls of one function are retried, by function name (docs/retries.md § Call level); a field left out takes the deployment's worker.callRetry.",
        propertyNames: { type: 'string', minLength: 1 },
        additionalProperties: ref('functionRetry'),
      },
    },
  };
}

/** The whole config schema, as a JSON value. */
export function renderConfigSchema(fields: readonly ConfigField[] = CONFIG_FIELDS): Json {
  const top = fieldTree('top', fields);
  const topDefs: Json = {};
  for (const [key, child] of top.children) {
    if (child.node !== 'group') throw new Error(`top-level config field ${key} must sit in a group`);
    topDefs[key] = groupSchema('top', child);
  }
  const { column, table, deployment } = STRUCTURE_DEFS;
  const { tls, registry, storage, functions, plugins, observability, up, ...rest } = topDefs;
  if (Object.keys(rest).length > 0) {
    throw new Error(`top-level groups without a place in the schema: ${Object.keys(rest).join(', ')}`);
  }
  return {
    ...SCHEMA_HEAD,
    $defs: {
      ...SHARED_DEFS,
      tls,
      registry,
      storage,
      functions: withRetryMap(functions as Json),
      plugins,
      column,
      table,
      observability,
      up,
      deployment,
      coordinator: groupSchema('coordinator', fieldTree('coordinator', fields)),
      worker: groupSchema('worker', fieldTree('worker', fields)),
      executor: groupSchema('executor', fieldTree('executor', fields)),
      source: groupSchema('source', fieldTree('source', fields)),
      job: groupSchema('job', fieldTree('job', fields)),
      functionRetry: groupSchema('functionRetry', fieldTree('functionRetry', fields)),
    },
  };
}
