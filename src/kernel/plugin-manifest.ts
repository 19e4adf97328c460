// Reading one plugin package: its manifest (package.json `blockx` field), its main module and its schema.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { KernelErrorCode, PluginError } from './errors.js';
import type { PluginKind } from './plugin-registry.js';
import { kernelValidator, toSchemaIssues } from './schema-validator.js';
import type { WriterAccepts } from './writer-accepts.js';

/** A validated manifest with absolute paths. */
export interface PluginManifest {
  readonly packagePath: string;
  readonly name: string;
  readonly version: string | undefined;
  readonly kind: PluginKind;
  readonly type: string;
  readonly schemaPath: string;
  readonly entryPath: string;
  /** What a writer takes beyond its schema's fields (`blockx.accepts`; ./writer-accepts.ts); [] for none. */
  readonly accepts: readonly WriterAccepts[];
}

interface PackageJson {
  name: string;
  version?: string;
  main?: string;
  exports?: unknown;
  blockx: { kind: PluginKind; type: string; schema: string; accepts?: WriterAccepts[] };
}

/** Reads and validates `<packagePath>/package.json`; every problem is a PluginError naming the package. */
export async function readPluginManifest(packagePath: string): Promise<PluginManifest | PluginError> {
  // Messages name files relative to the package; the PluginError prefix already names the package path.
  const file = path.join(packagePath, 'package.json');
  const invalid = (message: string, plugin?: string, cause?: unknown): PluginError =>
    new PluginError(
      KernelErrorCode.PLUGIN_MANIFEST_INVALID,
      { pluginPath: packagePath, ...(plugin ? { plugin } : {}), message },
      { cause },
    );
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    return invalid(`cannot read package.json: ${(err as Error).message}`, undefined, err);
  }
  const name =
    typeof json === 'object' && json !== null && typeof (json as { name?: unknown }).name === 'string'
      ? (json as { name: string }).name
      : undefined;
  if (typeof json !== 'object' || json === null || !('blockx' in json)) {
    return invalid(
      `package.json has no "blockx" field; a plugin package declares {"kind": "builder"|"writer", "type": "...", "schema": "./schema.json"}`,
      name,
    );
  }
  const validate = kernelValidator('plugin-manifest');
  if (!validate(json)) {
    const issues = toSchemaIssues(validate.errors);
    return invalid(`package.json: ${issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`, name);
  }
  const pkg = json as PackageJson;
  const accepts = pkg.blockx.accepts ?? [];
  if (pkg.blockx.kind === 'builder' && accepts.length > 0) {
    return invalid(
      `package.json: /blockx/accepts is for writers (what a follow job's runner may send them); a builder accepts nothing`,
      pkg.name,
    );
  }
  const entry = entryOf(pkg);
  if (!entry) {
    return invalid(
      `package.json names no main module: set "main" (or "exports"["."]) to the module that default-exports the plugin`,
      pkg.name,
    );
  }
  const entryPath = path.resolve(packagePath, entry);
  if (!isInside(packagePath, entryPath))
    return invalid(`main module ${entry} lies outside the package`, pkg.name);
  if (!(await isFile(entryPath))) return invalid(`main module ${entry} not found`, pkg.name);
  const schemaPath = path.resolve(packagePath, pkg.blockx.schema);
  if (!isInside(packagePath, schemaPath))
    return invalid(`schema ${pkg.blockx.schema} lies outside the package`, pkg.name);
  return {
    packagePath,
    name: pkg.name,
    version: pkg.version,
    kind: pkg.blockx.kind,
    type: pkg.blockx.type,
    schemaPath,
    entryPath,
    accepts,
  };
}

/** `exports["."]` (or a string `exports`, or a bare conditions object), else `main`. */
function entryOf(pkg: PackageJson): string | undefined {
  if (pkg.exports !== undefined) {
    const exp = pkg.exports as Record<string, unknown> | string;
    const dot = typeof exp === 'string' ? exp : '.' in exp ? exp['.'] : isConditions(exp) ? exp : undefined;
    const resolved = pickCondition(dot);
    if (resolved) return resolved;
  }
  return pkg.main;
}

function isConditions(value: Record<string, unknown>): boolean {
  return Object.keys(value).every((k) => !k.startsWith('.'));
}

/** Resolves a conditional export the way Node's `import` does (import, node, default). */
function pickCondition(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (typeof target !== 'object' || target === null || Array.isArray(target)) return undefined;
  for (const [condition, value] of Object.entries(target)) {
    if (condition === 'import' || condition === 'node' || condition === 'default') {
      const resolved = pickCondition(value);
      if (resolved) return resolved;
    }
  }
  return undefined;
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** Why a schema file could not be used. */
export type SchemaReadResult =
  | { ok: true; schema: unknown }
  | {
      ok: false;
      code: typeof KernelErrorCode.PLUGIN_SCHEMA_MISSING | typeof KernelErrorCode.PLUGIN_SCHEMA_INVALID;
      reason: string;
    };

/** Reads and parses a plugin's schema file (compiling is the registry's job). */
export async function readSchemaFile(schemaPath: string, packagePath: string): Promise<SchemaReadResult> {
  const shown = path.relative(packagePath, schemaPath);
  let text: string;
  try {
    text = await readFile(schemaPath, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      ok: false,
      code: KernelErrorCode.PLUGIN_SCHEMA_MISSING,
      reason:
        code === 'ENOENT'
          ? `schema file ${shown} does not exist`
          : `cannot read schema file ${shown}: ${(err as Error).message}`,
    };
  }
  try {
    return { ok: true, schema: JSON.parse(text) };
  } catch (err) {
    return {
      ok: false,
      code: KernelErrorCode.PLUGIN_SCHEMA_INVALID,
      reason: `schema file ${shown} is not JSON: ${(err as Error).message}`,
    };
  }
}
