import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { KernelErrorCode, PluginError, PluginLoadError } from '../../../src/kernel/errors.js';
import { createKernelHooks } from '../../../src/kernel/hooks.js';
import { loadPlugins } from '../../../src/kernel/plugin-loader.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/plugins/', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = (...segments: string[]): string => path.join(FIXTURES, ...segments);

function load(dirs: string[], packages: string[] = [], baseDir = FIXTURES) {
  return loadPlugins({ dirs, packages, baseDir, hooks: createKernelHooks() });
}

/** The PluginLoadError a load rejects with (fails the test if it resolves or rejects otherwise). */
async function loadError(
  dirs: string[],
  packages: string[] = [],
  baseDir = FIXTURES,
): Promise<PluginLoadError> {
  const err = await load(dirs, packages, baseDir).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PluginLoadError);
  const loadErr = err as PluginLoadError;
  expect(loadErr.code).toBe(KernelErrorCode.PLUGIN_LOAD_FAILED);
  for (const e of loadErr.errors) expect(e).toBeInstanceOf(PluginError);
  return loadErr;
}

describe('loadPlugins: a valid plugin dir', () => {
  beforeEach(() => {
    (globalThis as { __blockxFixtureEvents?: unknown[] }).__blockxFixtureEvents = [];
  });

  it('registers every plugin package (JS, .mjs via exports, TypeScript) and skips folders without package.json', async () => {
    const registry = await load([fixture('valid')]);
    expect(registry.builders.types()).toEqual(['EchoCallConfig', 'TsEchoCallConfig']);
    expect(registry.writers.types()).toEqual(['CollectResultHandler']);

    const echo = registry.builders.get('EchoCallConfig');
    expect(echo).toMatchObject({
      kind: 'builder',
      type: 'EchoCallConfig',
      name: 'fixture-echo-builder',
      version: '1.2.3',
      packagePath: fixture('valid', 'echo-builder'),
      schemaPath: fixture('valid', 'echo-builder', 'schema.json'),
    });
    const ctx = {
      taskId: 't',
      stage: 'builder',
      deadlineMs: 0,
      signal: new AbortController().signal,
    } as const;
    expect(await echo?.impl.build(ctx, { values: [1, 2] }, {} as never)).toEqual({
      calls: [
        { function: 'echo', args: [1] },
        { function: 'echo', args: [2] },
      ],
    });

    const ts = registry.builders.get('TsEchoCallConfig');
    expect(ts?.name).toBe('fixture-ts-builder');
    expect(await ts?.impl.build(ctx, {}, {} as never)).toEqual({
      calls: [{ function: 'echo', args: ['typed'] }],
    });

    const writer = registry.writers.get('CollectResultHandler');
    expect(writer).toMatchObject({ kind: 'writer', name: 'fixture-collect-writer', version: '2.0.0' });
    expect(registry.builders.get('CollectResultHandler')).toBeUndefined();
    expect(registry.writers.list().map((w) => w.type)).toEqual(['CollectResultHandler']);
  });

  it('compiles each schema once and validates task configs with it', async () => {
    const registry = await load([fixture('valid')]);
    expect(registry.validateTaskConfig('builder', 'EchoCallConfig', { values: [] })).toEqual([]);
    expect(registry.validateTaskConfig('builder', 'EchoCallConfig', {})).toEqual([
      { path: '', rule: 'required', message: "must have required property 'values'" },
    ]);
    expect(registry.validateTaskConfig('writer', 'CollectResultHandler', { label: 3 })).toMatchObject([
      { path: '/label', rule: 'type' },
    ]);
  });

  it("lets plugins tap the registration hooks from apply(), in the kernel's order", async () => {
    await load([fixture('valid')]);
    expect((globalThis as { __blockxFixtureEvents?: unknown[] }).__blockxFixtureEvents).toEqual([
      ['registerBuilders', true],
      ['registerWriters', true],
      ['pluginsRegistered', ['EchoCallConfig', 'TsEchoCallConfig']],
    ]);
  });

  it('loads the repository built-in plugins', async () => {
    const registry = await load([path.join(REPO, 'plugins/builders'), path.join(REPO, 'plugins/writers')]);
    expect(registry.builders.get('CallListCallConfig')?.name).toBe('@blockx/builder-call-list');
    expect(registry.writers.get('ReturnValueResultHandler')?.packagePath).toBe(
      path.join(REPO, 'plugins/writers/return-value'),
    );
  });

  it('registers in-process plugins that a hook tap adds', async () => {
    const hooks = createKernelHooks();
    hooks.registerWriters.tap('embedder', (registrar) => {
      registrar.add({
        type: 'InlineResultHandler',
        name: 'inline',
        packagePath: '(in-process inline)',
        schema: { type: 'object' },
        impl: { execute: async () => [] },
      });
    });
    const registry = await loadPlugins({ dirs: [fixture('valid')], packages: [], baseDir: FIXTURES, hooks });
    expect(registry.writers.types()).toEqual(['CollectResultHandler', 'InlineResultHandler']);
  });
});

describe('loadPlugins: each failure has its code and names the plugin path', () => {
  it.each([
    ['duplicate', 'b-builder', KernelErrorCode.PLUGIN_DUPLICATE_TYPE, /DupCallConfig/],
    ['schema-missing', 'no-schema', KernelErrorCode.PLUGIN_SCHEMA_MISSING, /schema\.json does not exist/],
    ['schema-invalid', 'bad-schema', KernelErrorCode.PLUGIN_SCHEMA_INVALID, /not a valid JSON Schema/],
    ['schema-not-json', 'text-schema', KernelErrorCode.PLUGIN_SCHEMA_INVALID, /is not JSON/],
    [
      'export-shape',
      'writer-shaped',
      KernelErrorCode.PLUGIN_EXPORT_INVALID,
      /must define build\(taskCtx, config, io\)/,
    ],
    ['import-throws', 'explodes', KernelErrorCode.PLUGIN_IMPORT_FAILED, /boom at import/],
  ])('%s', async (dir, plugin, code, detail) => {
    const err = await loadError([fixture(dir)]);
    expect(err.errors).toHaveLength(1);
    const [only] = err.errors;
    expect(only?.code).toBe(code);
    expect(only?.pluginPath).toBe(fixture(dir, plugin));
    expect(only?.message).toContain(fixture(dir, plugin));
    expect(only?.message).toMatch(detail);
    expect(err.message).toContain(only?.message);
  });

  it('a duplicate type names both packages', async () => {
    const [dup] = (await loadError([fixture('duplicate')])).errors;
    expect(dup?.message).toContain(fixture('duplicate', 'a-builder'));
    expect(dup?.message).toContain(fixture('duplicate', 'b-builder'));
  });

  it('a duplicate across two sources (a dir and an npm package) is caught too', async () => {
    const base = withNodeModules();
    cpSync(fixture('valid', 'collect-writer'), path.join(base, 'node_modules', 'dup-collect'), {
      recursive: true,
    });
    const err = await loadError([fixture('valid')], ['dup-collect'], base);
    expect(err.errors.map((e) => e.code)).toEqual([KernelErrorCode.PLUGIN_DUPLICATE_TYPE]);
    expect(err.errors[0]?.message).toContain(path.join(base, 'node_modules', 'dup-collect'));
    expect(err.errors[0]?.message).toContain(fixture('valid', 'collect-writer'));
  });

  it('a schema that is not JSON Schema cites the meta-schema violation', async () => {
    const [err] = (await loadError([fixture('schema-invalid')])).errors;
    expect(err?.cause).toBeUndefined();
    expect(err?.message).toMatch(/type/);
  });

  it('an import that throws keeps the error as cause', async () => {
    const [err] = (await loadError([fixture('import-throws')])).errors;
    expect((err?.cause as Error).message).toBe('boom at import');
  });

  it('invalid manifests: unknown kind, extra key, and package.json without a blockx field', async () => {
    const err = await loadError([fixture('manifest-invalid')]);
    expect(err.errors.map((e) => [e.code, path.basename(e.pluginPath)])).toEqual([
      [KernelErrorCode.PLUGIN_MANIFEST_INVALID, 'bad-kind'],
      [KernelErrorCode.PLUGIN_MANIFEST_INVALID, 'no-blockx'],
    ]);
    expect(err.errors[0]?.message).toMatch(/\/blockx\/kind must be equal to one of the allowed values/);
    expect(err.errors[1]?.message).toMatch(/has no "blockx" field/);
  });

  it('reports every broken plugin of every dir at once, and registers none', async () => {
    const err = await loadError([
      fixture('schema-missing'),
      fixture('import-throws'),
      fixture('export-shape'),
      fixture('valid'),
    ]);
    expect(err.errors.map((e) => e.code).sort()).toEqual(
      [
        KernelErrorCode.PLUGIN_EXPORT_INVALID,
        KernelErrorCode.PLUGIN_IMPORT_FAILED,
        KernelErrorCode.PLUGIN_SCHEMA_MISSING,
      ].sort(),
    );
    expect(err.message).toMatch(/3 problems/);
  });

  it('an apply() that throws is PLUGIN_HOOK_FAILED and leaves none of its taps behind', async () => {
    const hooks = createKernelHooks();
    const err = await loadPlugins({
      dirs: [fixture('apply-throws')],
      packages: [],
      baseDir: FIXTURES,
      hooks,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PluginLoadError);
    expect((err as PluginLoadError).errors[0]).toMatchObject({
      code: KernelErrorCode.PLUGIN_HOOK_FAILED,
      hook: 'apply',
      pluginPath: fixture('apply-throws', 'half-applied'),
    });
    expect(hooks.pluginsRegistered.taps).toHaveLength(0);
  });

  it('a tap that throws during registration is PLUGIN_HOOK_FAILED naming plugin, hook and path', async () => {
    const [err] = (await loadError([fixture('tap-throws')])).errors;
    expect(err).toMatchObject({
      code: KernelErrorCode.PLUGIN_HOOK_FAILED,
      plugin: 'bad-tap',
      hook: 'pluginsRegistered',
      pluginPath: fixture('tap-throws', 'bad-tap'),
    });
    expect(err?.message).toContain('tap exploded');
  });

  it('a plugin dir that does not exist is PLUGIN_NOT_FOUND', async () => {
    const [err] = (await loadError([fixture('no-such-dir')])).errors;
    expect(err).toMatchObject({ code: KernelErrorCode.PLUGIN_NOT_FOUND, pluginPath: fixture('no-such-dir') });
  });
});

describe('loadPlugins: npm packages', () => {
  it('resolves a package from node_modules above baseDir (exports ".")', async () => {
    const base = withNodeModules();
    const nested = path.join(base, 'deep', 'er');
    const registry = await load([], ['@fixture/blockx-writer-npm'], nested);
    const writer = registry.writers.get('NpmResultHandler');
    expect(writer).toMatchObject({ name: '@fixture/blockx-writer-npm', version: '3.1.0' });
    expect(writer?.packagePath).toBe(path.join(base, 'node_modules', '@fixture', 'blockx-writer-npm'));
  });

  it('a package that is not installed is PLUGIN_NOT_FOUND naming it', async () => {
    const [err] = (await loadError([], ['@fixture/not-installed'], withNodeModules())).errors;
    expect(err).toMatchObject({
      code: KernelErrorCode.PLUGIN_NOT_FOUND,
      pluginPath: '@fixture/not-installed',
    });
    expect(err?.message).toMatch(/not installed/);
  });

  it('a path instead of a package name is rejected with a hint', async () => {
    const [err] = (await loadError([], ['./plugins/x'])).errors;
    expect(err?.message).toMatch(/plugins\.dirs/);
  });
});

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** A temp base dir with node_modules holding the npm fixture packages (node_modules/ is not committed). */
function withNodeModules(): string {
  const base = mkdtempSync(path.join(tmpdir(), 'blockx-plugins-'));
  tempDirs.push(base);
  cpSync(fixture('npm', 'packages'), path.join(base, 'node_modules'), { recursive: true });
  return base;
}
