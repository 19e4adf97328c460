// The plugin loader: discovers plugin packages, checks each one completely, and registers the good ones.
//
//   discover  every subfolder of each plugin dir that has a package.json, plus each listed npm package
//   load      (per package, concurrently) manifest → schema (compiled once) → main module → export shape
//   apply     each plugin's optional apply(hooks), with its taps committed only if apply succeeds
//   register  registerBuilders → registerWriters → freeze → pluginsRegistered
//
// Each stage collects every PluginError before deciding; if there is any, loading stops with one
// PluginLoadError listing them all, and no broken plugin is ever registered. Order is deterministic
// (packages by path, registration by type), never the file system's.
import { statSync } from 'node:fs';
import { realpath, readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ValidateFunction } from 'ajv';
import { KernelErrorCode, PluginError, PluginLoadError } from './errors.js';
import { stagePluginTaps, type KernelHooks } from './hooks.js';
import { importPluginModule } from './plugin-import.js';
import { readPluginManifest, readSchemaFile, type PluginManifest } from './plugin-manifest.js';
import { PluginRegistryBuilder, type PluginRegistry } from './plugin-registry.js';
import { checkPluginExport, defaultExport } from './plugin-shape.js';
import type { BuilderPlugin, PluginCommon, WriterPlugin } from './plugin-types.js';
import { builtinPluginValidator, compileForeignSchema } from './schema-validator.js';
import { withAcceptedFields } from './writer-accepts.js';

export interface LoadPluginsOptions {
  /** Absolute folders; each immediate subfolder with a package.json is a plugin package. */
  readonly dirs: readonly string[];
  /** npm package names, resolved from `baseDir` the way Node resolves them. */
  readonly packages: readonly string[];
  /** Where npm packages are resolved from (usually the config file's folder). */
  readonly baseDir: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any config/service type may be plugged in
  readonly hooks: KernelHooks<any, any>;
  /** Import every module anew, not from Node's module cache (a running process loads its plugins again). */
  readonly fresh?: boolean;
}

/** One plugin package, checked completely: what `loadPlugins` registers. */
export interface LoadedPlugin {
  readonly manifest: PluginManifest;
  readonly schema: unknown;
  readonly validate: ValidateFunction;
  readonly impl: PluginCommon;
}

/** Loads, checks and registers every plugin; rejects with a PluginLoadError listing all problems. */
export async function loadPlugins(options: LoadPluginsOptions): Promise<PluginRegistry> {
  const hooks = options.hooks as KernelHooks;
  const discovered = await discoverPlugins(options);
  const results = await Promise.all(
    discovered.packagePaths.map((p) => loadPluginPackage(p, options.fresh === true)),
  );
  const loaded = results
    .flatMap((r) => ('plugin' in r ? [r.plugin] : []))
    .sort(
      (a, b) =>
        compare(a.manifest.type, b.manifest.type) || compare(a.manifest.packagePath, b.manifest.packagePath),
    );
  const errors = [
    ...discovered.errors,
    ...results.flatMap((r) => ('errors' in r ? r.errors : [])),
    ...duplicateTypes(loaded),
  ];
  // Nothing of a set with a broken plugin runs: no apply(), no registration hooks.
  if (errors.length) throw new PluginLoadError(errors);

  for (const plugin of loaded) {
    if (!plugin.impl.apply) continue;
    const staged = stagePluginTaps(hooks, plugin.manifest.packagePath);
    try {
      plugin.impl.apply(staged.view);
      staged.commit();
    } catch (err) {
      errors.push(hookFailure(plugin.manifest, 'apply', err));
    }
  }
  if (errors.length) throw new PluginLoadError(errors);

  const builder = new PluginRegistryBuilder();
  for (const { manifest, schema, validate, impl } of loaded) {
    const definition = {
      type: manifest.type,
      name: manifest.name,
      version: manifest.version ?? impl.version,
      packagePath: manifest.packagePath,
      schemaPath: manifest.schemaPath,
      schema,
      validate,
      accepts: manifest.accepts,
    };
    if (manifest.kind === 'builder') builder.builders.add({ ...definition, impl: impl as BuilderPlugin });
    else builder.writers.add({ ...definition, impl: impl as WriterPlugin });
  }
  callHook(() => hooks.registerBuilders.call(builder.builders), builder.errors);
  callHook(() => hooks.registerWriters.call(builder.writers), builder.errors);
  if (builder.errors.length) throw new PluginLoadError(builder.errors);

  const registry = builder.build();
  const late: PluginError[] = [];
  callHook(() => hooks.pluginsRegistered.call(registry), late);
  if (late.length) throw new PluginLoadError(late);
  return registry;
}

/** One error per package that declares a type an earlier package (in sorted order) already declared. */
function duplicateTypes(sorted: readonly LoadedPlugin[]): PluginError[] {
  const errors: PluginError[] = [];
  const first = new Map<string, PluginManifest>();
  for (const { manifest } of sorted) {
    const earlier = first.get(manifest.type);
    if (!earlier) {
      first.set(manifest.type, manifest);
      continue;
    }
    errors.push(
      new PluginError(KernelErrorCode.PLUGIN_DUPLICATE_TYPE, {
        pluginPath: manifest.packagePath,
        plugin: manifest.name,
        message: `type ${manifest.type} is declared by both ${earlier.packagePath} and ${manifest.packagePath}`,
      }),
    );
  }
  return errors;
}

function callHook(call: () => void, errors: PluginError[]): void {
  try {
    call();
  } catch (err) {
    // Guarded taps always throw PluginErrors; anything else is a kernel bug and must surface as is.
    if (!(err instanceof PluginError)) throw err;
    errors.push(err);
  }
}

function hookFailure(manifest: PluginManifest, hook: string, cause: unknown): PluginError {
  return new PluginError(
    KernelErrorCode.PLUGIN_HOOK_FAILED,
    {
      pluginPath: manifest.packagePath,
      plugin: manifest.name,
      hook,
      message: `${hook}(hooks) threw: ${cause instanceof Error ? cause.message : String(cause)}`,
    },
    { cause },
  );
}

/** The package folders to load (deduplicated by real path) and the problems found looking for them. */
export async function discoverPlugins(
  options: Pick<LoadPluginsOptions, 'dirs' | 'packages' | 'baseDir'>,
): Promise<{ packagePaths: string[]; errors: PluginError[] }> {
  const errors: PluginError[] = [];
  const found: string[] = [];
  for (const dir of options.dirs) {
    let names: string[];
    try {
      names = (await readdir(dir)).filter((n) => !n.startsWith('.') && n !== 'node_modules').sort();
    } catch (err) {
      errors.push(
        new PluginError(KernelErrorCode.PLUGIN_NOT_FOUND, {
          pluginPath: dir,
          message: `plugin dir cannot be read: ${(err as Error).message}`,
        }),
      );
      continue;
    }
    for (const name of names) {
      const candidate = path.join(dir, name);
      // A subfolder without package.json (docs, shared assets) is not a plugin; skip it quietly.
      if ((await isDirectory(candidate)) && (await isFile(path.join(candidate, 'package.json'))))
        found.push(candidate);
    }
  }
  for (const request of options.packages) {
    const resolved = resolvePackageDir(request, options.baseDir);
    if (typeof resolved === 'string') found.push(resolved);
    else errors.push(resolved);
  }
  const seen = new Set<string>();
  const packagePaths: string[] = [];
  for (const candidate of found) {
    const real = await realpath(candidate).catch(() => candidate);
    if (seen.has(real)) continue;
    seen.add(real);
    packagePaths.push(candidate);
  }
  return { packagePaths, errors };
}

const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** The folder of an installed npm package, searched in the node_modules folders Node would search. */
function resolvePackageDir(request: string, baseDir: string): string | PluginError {
  const notFound = (message: string): PluginError =>
    new PluginError(KernelErrorCode.PLUGIN_NOT_FOUND, { pluginPath: request, plugin: request, message });
  if (!PACKAGE_NAME.test(request)) {
    return notFound(
      `"${request}" is not an npm package name; list local plugin folders under plugins.dirs instead`,
    );
  }
  const searched = createRequire(path.join(baseDir, 'package.json')).resolve.paths(request) ?? [];
  for (const modules of searched) {
    const dir = path.join(modules, request);
    if (isFileSync(path.join(dir, 'package.json'))) return dir;
  }
  return notFound(
    `npm package ${request} is not installed (searched from ${baseDir}); run npm install ${request}`,
  );
}

/**
 * Loads one package as `loadPlugins` does (manifest, schema, main module, export shape), without applying
 * or registering it. Plugin packages' own tests use it to check themselves against the kernel's rules.
 */
export async function loadPluginPackage(
  packagePath: string,
  fresh = false,
): Promise<{ plugin: LoadedPlugin } | { errors: PluginError[] }> {
  const manifest = await readPluginManifest(packagePath);
  if (manifest instanceof PluginError) return { errors: [manifest] };
  const errors: PluginError[] = [];
  const fail = (code: KernelErrorCode, message: string, cause?: unknown): void => {
    errors.push(
      new PluginError(code, { pluginPath: packagePath, plugin: manifest.name, message }, { cause }),
    );
  };

  // The schema and the module are checked independently, so one pass reports both kinds of problem.
  let schema: unknown;
  let validate: ValidateFunction | undefined;
  const relative = (file: string): string => path.relative(packagePath, file);
  const read = await readSchemaFile(manifest.schemaPath, packagePath);
  if (!read.ok) {
    fail(read.code, read.reason);
  } else {
    // A built-in plugin's validator is generated with the package; anyone else's schema is compiled here.
    const builtin = builtinPluginValidator(manifest.schemaPath, read.schema);
    const compiled =
      builtin !== undefined ? { ok: true as const, validate: builtin } : compileForeignSchema(read.schema);
    if (compiled.ok) {
      schema = read.schema;
      validate = withAcceptedFields(compiled.validate, manifest.accepts);
    } else {
      fail(KernelErrorCode.PLUGIN_SCHEMA_INVALID, `${relative(manifest.schemaPath)}: ${compiled.reason}`);
    }
  }

  let impl: unknown;
  try {
    impl = defaultExport(await importPluginModule(manifest.entryPath, fresh));
    const problems = checkPluginExport(manifest.kind, impl);
    if (problems.length) {
      fail(KernelErrorCode.PLUGIN_EXPORT_INVALID, `${relative(manifest.entryPath)}: ${problems.join('; ')}`);
    }
  } catch (err) {
    fail(
      KernelErrorCode.PLUGIN_IMPORT_FAILED,
      `importing ${relative(manifest.entryPath)} failed: ${err instanceof Error ? err.message : String(err)}`,
      err,
    );
  }

  if (errors.length || !validate) return { errors };
  return { plugin: { manifest, schema, validate, impl: impl as PluginCommon } };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function isDirectory(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}

function isFileSync(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
