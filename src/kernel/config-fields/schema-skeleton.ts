// The parts of schemas/blockx.config.schema.json that are not rows of the field table: the top-level
// object, the shared definitions the rows refer to, tables and deployments (maps keyed by name).
// render-schema.ts adds one definition per section and per top-level group.

export const SCHEMA_HEAD = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://blockx.dev/schemas/blockx.config.schema.json',
  title: 'BlockX cluster configuration (blockx.config.yaml)',
  description:
    'Declares the registry, storage, functions, plugins, tables and deployments of a BlockX cluster. Environment variables (docs/configuration.md § Environment variables) override values here; CLI flags override both. Every field is optional unless marked required: omitted fields take the documented default. Generated from the config field table (src/kernel/config-fields/) by scripts/gen-config.mjs: edit the table, not this file.',
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: {
    version: { const: 1, description: 'Config format version. Only 1 exists.' },
    registry: { $ref: '#/$defs/registry' },
    tls: { $ref: '#/$defs/tls' },
    storage: { $ref: '#/$defs/storage' },
    functions: { $ref: '#/$defs/functions' },
    plugins: { $ref: '#/$defs/plugins' },
    tables: {
      type: 'object',
      description: 'Tables the storage backend holds, by name.',
      propertyNames: { $ref: '#/$defs/identifier' },
      additionalProperties: { $ref: '#/$defs/table' },
    },
    observability: { $ref: '#/$defs/observability' },
    up: { $ref: '#/$defs/up' },
    deployments: {
      type: 'object',
      description:
        'Named deployments (clusters). `blockx coordinator|worker --deployment NAME` picks one. At least `block` and `bundle` are expected.',
      propertyNames: { $ref: '#/$defs/identifier' },
      minProperties: 1,
      additionalProperties: { $ref: '#/$defs/deployment' },
    },
    sources: {
      type: 'object',
      description: 'Ethereum JSON-RPC nodes `blockx ingest --source NAME` reads, by name (docs/ingest.md).',
      propertyNames: { $ref: '#/$defs/identifier' },
      additionalProperties: { $ref: '#/$defs/source' },
    },
    jobs: {
      type: 'object',
      description: 'Jobs `blockx jobs run NAME` runs, by name (docs/follow.md).',
      propertyNames: { $ref: '#/$defs/identifier' },
      additionalProperties: { $ref: '#/$defs/job' },
    },
  },
} as const;

/** Definitions the field fragments refer to ($ref), placed before the generated ones. */
export const SHARED_DEFS = {
  identifier: { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 63 },
  positiveInt: { type: 'integer', minimum: 1 },
  nonNegativeInt: { type: 'integer', minimum: 0 },
  fraction: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
  listenAddr: {
    type: 'string',
    pattern: '^(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]*):[0-9]{1,5}$',
    description: 'host:port or :port (all interfaces).',
  },
  registryPrefix: { type: 'string', pattern: '^/.*/$', description: "An etcd key prefix ending in '/'." },
} as const;

/** Tables and deployments: maps the rows do not describe. */
export const STRUCTURE_DEFS = {
  column: {
    type: 'object',
    additionalProperties: false,
    required: ['type'],
    properties: {
      type: { enum: ['integer', 'bigint', 'real', 'text', 'boolean', 'json', 'bytes'] },
      nullable: { type: 'boolean', default: false, description: 'Default false.' },
    },
  },
  table: {
    type: 'object',
    additionalProperties: false,
    required: ['columns', 'primaryKey'],
    properties: {
      description: { type: 'string' },
      columns: {
        type: 'object',
        minProperties: 1,
        propertyNames: { $ref: '#/$defs/identifier' },
        additionalProperties: { $ref: '#/$defs/column' },
      },
      primaryKey: { type: 'array', minItems: 1, uniqueItems: true, items: { $ref: '#/$defs/identifier' } },
      blockColumn: {
        $ref: '#/$defs/identifier',
        description: 'The column holding the block number; block scans and block writes select by it.',
      },
      chainColumn: { $ref: '#/$defs/identifier', description: 'The column holding the chain id.' },
      blockHashColumn: {
        $ref: '#/$defs/identifier',
        description:
          'The column holding the block hash; selects one of several blocks at a height (a block selector by hash).',
      },
      writable: {
        type: 'boolean',
        default: false,
        description:
          'Whether tasks (their writers) may write this table: delete, upsert or replace rows. Default false, so chain data (blocks, transactions, events, traces) is read-only to tasks; declare output tables `writable: true`. `blockx data load|generate` writes any table. docs/storage.md, "Which tables tasks may write".',
      },
    },
  },
  deployment: {
    type: 'object',
    additionalProperties: false,
    required: ['kind'],
    properties: {
      kind: { enum: ['block', 'bundle'], description: 'Which worker registry kind and coordinator service.' },
      coordinator: { $ref: '#/$defs/coordinator' },
      worker: { $ref: '#/$defs/worker' },
      executor: { $ref: '#/$defs/executor' },
    },
  },
} as const;
