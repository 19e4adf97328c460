// The test kit of a plugin package (plugins/<kind>s/<name>/test/*.test.ts): the package as the kernel
// loads it, the checks every package shares, and a TaskCtx.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { expect, it } from 'vitest';
import { loadPluginPackage, type LoadedPlugin } from '../../src/kernel/plugin-loader.js';
import type { PluginKind } from '../../src/kernel/plugin-registry.js';
import type { TaskCtx, TaskStage } from '../../src/kernel/plugin-types.js';

export interface PackageUnderTest {
  /** The package as the kernel registers it. */
  readonly loaded: LoadedPlugin;
  /** The package's schema, compiled as the kernel compiles it to check a task config. */
  readonly validate: ValidateFunction;
  /** A TaskCtx of task `t1` at the stage that runs this kind of plugin (builder or plugin). */
  readonly taskCtx: (signal?: AbortSignal) => TaskCtx;
}

/**
 * The package that holds the test file `testFileUrl` (its parent folder), loaded by the kernel's own
 * loader: the manifest validated, the schema compiled, the main module imported and its export shape
 * checked. Throws every problem the kernel would report at startup.
 */
export async function packageUnderTest(testFileUrl: string): Promise<PackageUnderTest> {
  const dir = path.dirname(path.dirname(fileURLToPath(testFileUrl)));
  const result = await loadPluginPackage(dir);
  if ('errors' in result) throw new Error(result.errors.map((e) => e.message).join('\n'));
  const loaded = result.plugin;
  const stage: TaskStage = loaded.manifest.kind === 'builder' ? 'builder' : 'plugin';
  return { loaded, validate: loaded.validate, taskCtx: (signal) => pluginTaskCtx(stage, signal) };
}

export interface ExpectedDeclaration {
  readonly kind: PluginKind;
  readonly type: string;
  /** The package's error code enum, if it has one: every code must equal its key. */
  readonly errorCodes?: Readonly<Record<string, string>>;
}

/** The tests every plugin package shares: what it declares, and its error codes. */
export function itDeclaresItself(pkg: PackageUnderTest, expected: ExpectedDeclaration): void {
  const { kind, type, errorCodes } = expected;
  it(`declares itself as the ${type} ${kind}, with schema.json and src/index.ts`, () => {
    const { manifest } = pkg.loaded;
    expect({
      kind: manifest.kind,
      type: manifest.type,
      schema: path.relative(manifest.packagePath, manifest.schemaPath),
      main: path.relative(manifest.packagePath, manifest.entryPath),
    }).toEqual({ kind, type, schema: 'schema.json', main: path.join('src', 'index.ts') });
  });
  if (errorCodes) {
    it('pins each error code to its key', () => {
      expect(Object.keys(errorCodes).length).toBeGreaterThan(0);
      for (const [key, code] of Object.entries(errorCodes)) expect(code).toBe(key);
    });
  }
}

/** A TaskCtx of task `t1` at `stage`, with no deadline. */
export function pluginTaskCtx(stage: TaskStage, signal = new AbortController().signal): TaskCtx {
  return { taskId: 't1', stage, deadlineMs: 0, signal };
}
