// What a writer accepts beyond its schema (src/kernel/writer-accepts.ts; docs/plugins.md § Writers that
// follow): the manifest's `accepts`, and the kernel checking a `fence` for a writer that accepts one while
// its own schema checks the rest. The third-party-style packages are test/fixtures/plugins/follow-writers.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { KernelErrorCode, PluginLoadError } from '../../../src/kernel/errors.js';
import { loadPluginPackage, type LoadedPlugin } from '../../../src/kernel/plugin-loader.js';
import { createPluginRegistry } from '../../../src/kernel/plugin-registry.js';
import type { WriterPlugin } from '../../../src/kernel/plugin-types.js';
import { toSchemaIssues } from '../../../src/kernel/schema-validator.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/plugins/follow-writers/', import.meta.url));
const REPO = fileURLToPath(new URL('../../../', import.meta.url));

async function load(dir: string): Promise<LoadedPlugin> {
  const result = await loadPluginPackage(dir);
  if ('errors' in result) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return result.plugin;
}

/** The issues `plugin`'s validator reports for `config` (checked in place, as the kernel does). */
function issuesOf(plugin: Pick<LoadedPlugin, 'validate'>, config: unknown): string[] {
  return plugin.validate(config)
    ? []
    : toSchemaIssues(plugin.validate.errors).map((i) => `${i.path} ${i.rule}`);
}

const block = { table: 'token_transfers', chainId: 1, block: { number: 7 } };

describe('a writer that accepts a fence', async () => {
  const fenced = await load(path.join(FIXTURES, 'fenced-rows'));

  it('declares it in its manifest', () => {
    expect(fenced.manifest.accepts).toEqual(['fence']);
  });

  it('takes a fence its own schema does not list, and hands the config on with it', () => {
    const config = { ...block, fence: { jobId: 'fl-a', term: 3 } };
    expect(issuesOf(fenced, config)).toEqual([]);
    expect(config).toEqual({ ...block, fence: { jobId: 'fl-a', term: 3 } });
    expect(issuesOf(fenced, { ...block })).toEqual([]);
  });

  it.each([
    [{ term: 1 }, ['/fence required']],
    [{ jobId: '', term: 1 }, ['/fence/jobId minLength']],
    [{ jobId: 'fl-a', term: 0 }, ['/fence/term minimum']],
    [{ jobId: 'fl-a', term: 1.5 }, ['/fence/term type']],
    [{ jobId: 'fl-a', term: 1, by: 'me' }, ['/fence additionalProperties']],
    ['fl-a', ['/fence type']],
    [null, ['/fence type']],
  ])('refuses the fence %j under /fence', (fence, expected) => {
    const config = { ...block, fence };
    expect(issuesOf(fenced, config)).toEqual(expected);
    expect(config.fence).toEqual(fence);
  });

  it("reports its own schema's issues and the fence's together", () => {
    expect(issuesOf(fenced, { table: 'out', chainId: 1, fence: { jobId: 'fl-a' } }).sort()).toEqual(
      ['/fence required', ' required'].sort(),
    );
  });

  it('is what the built-in follow writers declare', async () => {
    for (const name of ['block-write', 'chain-ingest-write']) {
      expect((await load(path.join(REPO, 'plugins/writers', name))).manifest.accepts, name).toEqual([
        'fence',
      ]);
    }
    for (const name of ['block-bundle-write', 'return-value', 'table-upserts']) {
      expect((await load(path.join(REPO, 'plugins/writers', name))).manifest.accepts, name).toEqual([]);
    }
  });
});

describe('a writer that does not', async () => {
  const appended = await load(path.join(FIXTURES, 'appended-rows'));

  it('accepts nothing, and its own schema alone judges a field named fence', () => {
    expect(appended.manifest.accepts).toEqual([]);
    // Its schema is open: the kernel does not check a field the writer did not say it accepts.
    expect(issuesOf(appended, { table: 'out', fence: 'anything' })).toEqual([]);
  });
});

describe('the manifest field', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-accepts-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function manifestError(name: string, blockx: Record<string, unknown>): Promise<string> {
    const pkg = path.join(dir, name);
    mkdirSync(path.join(pkg, 'src'), { recursive: true });
    writeFileSync(
      path.join(pkg, 'package.json'),
      JSON.stringify({
        name,
        type: 'module',
        main: 'src/index.js',
        blockx: { schema: './schema.json', ...blockx },
      }),
    );
    writeFileSync(path.join(pkg, 'schema.json'), '{"type": "object"}');
    writeFileSync(path.join(pkg, 'src/index.js'), 'export default { build: () => ({ calls: [] }) };');
    const result = await loadPluginPackage(pkg);
    expect('errors' in result, name).toBe(true);
    const [error] = (result as { errors: { code: string; message: string }[] }).errors;
    expect(error?.code).toBe(KernelErrorCode.PLUGIN_MANIFEST_INVALID);
    return error?.message ?? '';
  }

  it('is for writers only', async () => {
    expect(
      await manifestError('a-builder', { kind: 'builder', type: 'FencedBuilder', accepts: ['fence'] }),
    ).toMatch(/accepts is for writers/);
  });

  it('names only what the kernel knows', async () => {
    expect(
      await manifestError('a-writer', { kind: 'writer', type: 'RetryingWriter', accepts: ['retries'] }),
    ).toMatch(/\/blockx\/accepts\/0/);
  });
});

describe('a writer registered from code', () => {
  const writerImpl: WriterPlugin = { execute: async () => [] };
  const schema = { type: 'object', additionalProperties: false, properties: { table: { type: 'string' } } };

  it('gets the same check when it accepts a fence, and the schema alone when it does not', () => {
    const registry = createPluginRegistry({
      writers: [
        {
          type: 'FencedWriter',
          name: 'f',
          packagePath: '/p/f',
          schema,
          accepts: ['fence'],
          impl: writerImpl,
        },
        { type: 'PlainWriter', name: 'p', packagePath: '/p/p', schema, impl: writerImpl },
      ],
    });
    expect(registry.writers.get('FencedWriter')?.accepts).toEqual(['fence']);
    expect(registry.writers.get('PlainWriter')?.accepts).toEqual([]);
    const fence = { jobId: 'fl-a', term: 2 };
    expect(registry.validateTaskConfig('writer', 'FencedWriter', { table: 't', fence })).toEqual([]);
    expect(
      registry.validateTaskConfig('writer', 'FencedWriter', { table: 't', fence: { ...fence, term: -1 } }),
    ).toMatchObject([{ path: '/fence/term', rule: 'minimum' }]);
    expect(registry.validateTaskConfig('writer', 'PlainWriter', { table: 't', fence })).toMatchObject([
      { rule: 'additionalProperties' },
    ]);
  });

  it('is refused as a builder that accepts something', () => {
    try {
      createPluginRegistry({
        builders: [
          {
            type: 'FencedBuilder',
            name: 'b',
            packagePath: '/p/b',
            schema,
            accepts: ['fence'],
            impl: { build: () => ({ calls: [] }) },
          },
        ],
      });
      expect.unreachable('a builder that accepts a fence was registered');
    } catch (err) {
      expect(err).toBeInstanceOf(PluginLoadError);
      expect((err as PluginLoadError).errors.map((e) => e.code)).toEqual([
        KernelErrorCode.PLUGIN_MANIFEST_INVALID,
      ]);
    }
  });
});
