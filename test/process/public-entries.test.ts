// The package's subpath entries as a user's code reaches them (`import ... from 'blockx/function'`), from
// the built package (dist/): they resolve through package.json#exports, export what their authors need,
// and `blockx/function` and `blockx/plugin` pull no heavy dependency into the module graph. The graph is
// read by esbuild (a dependency already) bundling the entry with every package left external.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');

/** Packages (not node: builtins) that the module graph of `entry` imports. */
async function packagesImportedBy(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [path.join(REPO, entry)],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    metafile: true,
    logLevel: 'silent',
  });
  const external = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imp of input.imports) {
      if (imp.external && !imp.path.startsWith('node:')) external.add(imp.path);
    }
  }
  return [...external].sort();
}

/** Runs an ES module snippet with the repository as cwd (so `blockx/...` resolves to this package). */
function evalModule(code: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('package subpaths', () => {
  it.each(['dist/function.js', 'dist/plugin.js'])('%s imports no package at all', async (entry) => {
    expect(await packagesImportedBy(entry)).toEqual([]);
  });

  it('the root entry names every export (no `export *`) and still offers the SDK and error classes', () => {
    const source = readFileSync(path.join(REPO, 'src/index.ts'), 'utf8');
    expect(source).not.toMatch(/export \*/);
    const r = evalModule(`
      const m = await import('blockx');
      console.log(JSON.stringify(['RetryableError', 'CallWaitError', 'BlockxError', 'ConfigError', 'PluginError',
        'BlockxClient', 'loadConfig', 'bootKernel'].filter((n) => typeof m[n] !== 'function')));
    `);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([]);
  });

  it('the root entry still pulls in the heavy ones (so the check above can fail)', async () => {
    const imported = await packagesImportedBy('dist/index.js');
    expect(imported).toEqual(expect.arrayContaining(['@grpc/grpc-js', 'ajv', 'yaml']));
  });

  it('blockx/plugin has one PluginError: the root re-exports it, and instanceof holds across copies', () => {
    // The kernel runs from dist/ while a built-in plugin loads src/plugin.ts through tsx: two copies.
    const r = evalModule(`
      const { tsImport } = await import('tsx/esm/api');
      const dist = await import('blockx/plugin');
      const root = await import('blockx');
      const src = await tsImport(${JSON.stringify(path.join(REPO, 'src/plugin.ts'))}, import.meta.url);
      class OwnError extends src.PluginError {}
      const fromSrc = new OwnError('BAD_OUTPUT', 'output 0: not a row', { details: { outputIndex: 0 } });
      const fromDist = new dist.PluginError('PLUGIN_NOT_FOUND', { pluginPath: '/p', message: 'gone' });
      console.log(JSON.stringify({
        copies: src.PluginError !== dist.PluginError,
        rootIsPlugin: root.PluginError === dist.PluginError,
        srcInDist: fromSrc instanceof dist.PluginError,
        distInSrc: fromDist instanceof src.PluginError,
        subclassKeepsPrototypeCheck: fromDist instanceof OwnError,
        plainError: new Error('x') instanceof dist.PluginError,
        fields: [fromSrc.code, fromSrc.retryable, fromSrc.details, fromSrc.name, fromDist.message],
        define: [typeof dist.defineBuilder, typeof dist.defineWriter, typeof root.defineWriter],
      }));
    `);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      copies: true,
      rootIsPlugin: true,
      srcInDist: true,
      distInSrc: true,
      subclassKeepsPrototypeCheck: false,
      plainError: false,
      fields: ['BAD_OUTPUT', false, { outputIndex: 0 }, 'OwnError', 'PLUGIN_NOT_FOUND: plugin at /p: gone'],
      define: ['function', 'function', 'function'],
    });
  });

  it('the entry points that make gRPC calls install the lean bind; blockx/function and blockx/plugin do not', () => {
    const r = evalModule(`
      const { AsyncResource } = await import('node:async_hooks');
      const stock = AsyncResource.prototype.bind;
      const addsProperty = Object.getOwnPropertyDescriptor(stock.call(new AsyncResource('P'), () => 0), 'asyncResource') !== undefined;
      await import('blockx/function');
      await import('blockx/plugin');
      const afterAuthorEntries = AsyncResource.prototype.bind === stock;
      await import('blockx/client');
      console.log(JSON.stringify({ addsProperty, afterAuthorEntries, afterClient: AsyncResource.prototype.bind === stock }));
    `);
    expect(r.code, r.stderr).toBe(0);
    const seen = JSON.parse(r.stdout) as {
      addsProperty: boolean;
      afterAuthorEntries: boolean;
      afterClient: boolean;
    };
    expect(seen.afterAuthorEntries).toBe(true);
    expect(seen.afterClient).toBe(!seen.addsProperty);
  });

  it('blockx/function, blockx/plugin and blockx/client resolve and export what their users need', () => {
    const r = evalModule(`
      const fn = await import('blockx/function');
      const plugin = await import('blockx/plugin');
      const client = await import('blockx/client');
      const err = new fn.RetryableError('try again');
      console.log(JSON.stringify({
        retryable: err instanceof Error,
        writerFailure: plugin.isRetryableWriterFailure({ retryable: false }),
        client: typeof client.BlockxClient,
        readTlsFiles: typeof client.readTlsFiles,
      }));
    `);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      retryable: true,
      writerFailure: false,
      client: 'function',
      readTlsFiles: 'function',
    });
  });
});
