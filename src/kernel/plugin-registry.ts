// The plugin registry: builders and writers by `type`, each with its compiled config validator.
//
// A registry is assembled once (by the loader, through the registerBuilders / registerWriters hooks) and
// then frozen. Registration never throws: every problem becomes a PluginError collected on the builder, so
// the loader can report all of them at once; a plugin with a problem is never registered.
import type { ValidateFunction } from 'ajv';
import {
  KernelErrorCode,
  PluginError,
  PluginLoadError,
  TaskConfigError,
  type SchemaIssue,
} from './errors.js';
import { checkPluginExport } from './plugin-shape.js';
import type { BuilderPlugin, WriterPlugin } from './plugin-types.js';
import { compileForeignSchema, toSchemaIssues } from './schema-validator.js';
import { withAcceptedFields, type WriterAccepts } from './writer-accepts.js';

export type PluginKind = 'builder' | 'writer';

/** Plugin type names: PascalCase, like the built-ins (`CallListCallConfig`, `ReturnValueResultHandler`). */
export const PLUGIN_TYPE_PATTERN = /^[A-Z][A-Za-z0-9]*$/;

interface RegisteredCommon {
  readonly type: string;
  /** The implementation's `name`, else the package name. */
  readonly name: string;
  readonly version: string | undefined;
  /** The package folder, or `(in-process ...)` for a plugin registered from code. */
  readonly packagePath: string;
  /** The schema file, when the plugin came from a package. */
  readonly schemaPath: string | undefined;
  readonly schema: unknown;
  /** The config validator, compiled once at registration. */
  readonly validate: ValidateFunction;
}
export interface RegisteredBuilder extends RegisteredCommon {
  readonly kind: 'builder';
  readonly impl: BuilderPlugin;
}
export interface RegisteredWriter extends RegisteredCommon {
  readonly kind: 'writer';
  readonly impl: WriterPlugin;
  /** What it takes beyond its schema's fields (manifest `blockx.accepts`, ./writer-accepts.ts). */
  readonly accepts: readonly WriterAccepts[];
}
export type RegisteredPlugin = RegisteredBuilder | RegisteredWriter;

/**
 * A plugin to register. `validate` may be passed when the schema is already compiled (with what `accepts`
 * adds: the loader's is).
 */
export interface PluginDefinition<I> {
  readonly type: string;
  readonly name: string;
  readonly version?: string | undefined;
  readonly packagePath: string;
  readonly schemaPath?: string | undefined;
  readonly schema: unknown;
  readonly validate?: ValidateFunction;
  /** Writers: what the writer takes beyond its schema's fields (./writer-accepts.ts). Default none. */
  readonly accepts?: readonly WriterAccepts[];
  readonly impl: I;
}

/** What the registerBuilders / registerWriters hooks hand to their taps. */
export interface Registrar<I> {
  /** Registers a plugin; returns false (and records the error) when it is rejected. */
  add(definition: PluginDefinition<I>): boolean;
  /** Whether a type is already taken, by a builder or a writer. */
  has(type: string): boolean;
}
export type BuilderRegistrar = Registrar<BuilderPlugin>;
export type WriterRegistrar = Registrar<WriterPlugin>;

export interface PluginTable<P extends RegisteredPlugin> {
  get(type: string): P | undefined;
  has(type: string): boolean;
  /** Sorted by type. */
  list(): readonly P[];
  types(): readonly string[];
}

export interface PluginRegistry {
  readonly builders: PluginTable<RegisteredBuilder>;
  readonly writers: PluginTable<RegisteredWriter>;
  /** Validates a task's plugin config against that plugin's schema; `[]` means valid. Paths are relative to the config. */
  validateTaskConfig(kind: PluginKind, type: string, config: unknown): SchemaIssue[];
  /** Same, throwing a TaskConfigError carrying every issue. */
  assertTaskConfig(kind: PluginKind, type: string, config: unknown): void;
}

/** The issue for a `type` no plugin registered, listing the known ones. */
export function unknownTypeIssue(
  kind: PluginKind,
  type: string,
  known: readonly string[],
  path = '',
): SchemaIssue {
  return {
    path,
    rule: 'knownType',
    message: `unknown ${kind} type ${JSON.stringify(type)}; known ${kind} types: ${known.length ? known.join(', ') : '(none registered)'}`,
  };
}

/** Collects registrations (and their errors), then builds the frozen registry. */
export class PluginRegistryBuilder {
  readonly errors: PluginError[] = [];
  private readonly byType = new Map<string, RegisteredPlugin>();
  readonly builders: BuilderRegistrar = this.registrar('builder');
  readonly writers: WriterRegistrar = this.registrar('writer');

  private registrar<I>(kind: PluginKind): Registrar<I> {
    return Object.freeze({
      add: (definition: PluginDefinition<I>) => this.add(kind, definition),
      has: (type: string) => this.byType.has(type),
    });
  }

  private add(kind: PluginKind, def: PluginDefinition<unknown>): boolean {
    const fail = (code: KernelErrorCode, message: string): false => {
      this.errors.push(new PluginError(code, { pluginPath: def.packagePath, plugin: def.name, message }));
      return false;
    };
    if (typeof def.type !== 'string' || !PLUGIN_TYPE_PATTERN.test(def.type)) {
      return fail(
        KernelErrorCode.PLUGIN_MANIFEST_INVALID,
        `type ${JSON.stringify(def.type)} must match ${PLUGIN_TYPE_PATTERN.source}`,
      );
    }
    if (kind === 'builder' && (def.accepts?.length ?? 0) > 0) {
      return fail(
        KernelErrorCode.PLUGIN_MANIFEST_INVALID,
        'accepts is for writers; a builder accepts nothing',
      );
    }
    const shapeProblems = checkPluginExport(kind, def.impl);
    if (shapeProblems.length) return fail(KernelErrorCode.PLUGIN_EXPORT_INVALID, shapeProblems.join('; '));
    let validate = def.validate;
    if (!validate) {
      const compiled = compileForeignSchema(def.schema);
      if (!compiled.ok) return fail(KernelErrorCode.PLUGIN_SCHEMA_INVALID, compiled.reason);
      validate = withAcceptedFields(compiled.validate, def.accepts ?? []);
    }
    const existing = this.byType.get(def.type);
    if (existing) {
      return fail(
        KernelErrorCode.PLUGIN_DUPLICATE_TYPE,
        `type ${def.type} is already registered by the ${existing.kind} ${existing.name} at ${existing.packagePath}; ` +
          `both ${existing.packagePath} and ${def.packagePath} declare it`,
      );
    }
    const common = {
      type: def.type,
      name: def.name,
      version: def.version,
      packagePath: def.packagePath,
      schemaPath: def.schemaPath,
      schema: def.schema,
      validate,
    };
    const entry: RegisteredPlugin =
      kind === 'builder'
        ? { ...common, kind, impl: def.impl as BuilderPlugin }
        : { ...common, kind, impl: def.impl as WriterPlugin, accepts: def.accepts ?? [] };
    this.byType.set(def.type, Object.freeze(entry));
    return true;
  }

  /** The frozen registry of every accepted plugin (call after all registrations). */
  build(): PluginRegistry {
    const all = [...this.byType.values()].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
    const builders = table(all.filter((p): p is RegisteredBuilder => p.kind === 'builder'));
    const writers = table(all.filter((p): p is RegisteredWriter => p.kind === 'writer'));
    const validateTaskConfig = (kind: PluginKind, type: string, config: unknown): SchemaIssue[] => {
      const plugins: PluginTable<RegisteredPlugin> = kind === 'builder' ? builders : writers;
      const plugin = plugins.get(type);
      if (!plugin) return [unknownTypeIssue(kind, type, plugins.types())];
      return plugin.validate(config) ? [] : toSchemaIssues(plugin.validate.errors);
    };
    return Object.freeze({
      builders,
      writers,
      validateTaskConfig,
      assertTaskConfig: (kind: PluginKind, type: string, config: unknown): void => {
        const issues = validateTaskConfig(kind, type, config);
        if (issues.length) throw new TaskConfigError(issues, type);
      },
    });
  }
}

function table<P extends RegisteredPlugin>(sorted: readonly P[]): PluginTable<P> {
  const byType = new Map(sorted.map((p) => [p.type, p]));
  const list = Object.freeze([...sorted]);
  const types = Object.freeze(sorted.map((p) => p.type));
  return Object.freeze({
    get: (type: string) => byType.get(type),
    has: (type: string) => byType.has(type),
    list: () => list,
    types: () => types,
  });
}

/**
 * A registry from in-process definitions (embedding, tests of later subsystems): no files, no hooks.
 * Throws a PluginLoadError listing every rejected definition.
 */
export function createPluginRegistry(definitions: {
  builders?: readonly PluginDefinition<BuilderPlugin>[];
  writers?: readonly PluginDefinition<WriterPlugin>[];
}): PluginRegistry {
  const builder = new PluginRegistryBuilder();
  for (const def of definitions.builders ?? []) builder.builders.add(def);
  for (const def of definitions.writers ?? []) builder.writers.add(def);
  if (builder.errors.length) throw new PluginLoadError(builder.errors);
  return builder.build();
}

/**
 * A registry whose plugins can be loaded again while the process runs (docs/plugins.md § Loading plugins
 * again): every read goes to the registry set last. A task reads `builders` and `writers` once, when it
 * starts running, and keeps those tables (the Worker's orchestrator), so a task in flight never mixes
 * two loads.
 */
export class LivePluginRegistry implements PluginRegistry {
  private current: PluginRegistry;

  constructor(initial: PluginRegistry) {
    this.current = initial;
  }

  get builders(): PluginTable<RegisteredBuilder> {
    return this.current.builders;
  }

  get writers(): PluginTable<RegisteredWriter> {
    return this.current.writers;
  }

  validateTaskConfig(kind: PluginKind, type: string, config: unknown): SchemaIssue[] {
    return this.current.validateTaskConfig(kind, type, config);
  }

  assertTaskConfig(kind: PluginKind, type: string, config: unknown): void {
    this.current.assertTaskConfig(kind, type, config);
  }

  /** Serves `next` from now on. */
  replace(next: PluginRegistry): void {
    this.current = next;
  }
}
