// A plugin config as the kernel hands it to the plugin: validated against the package's schema, which
// fills in the schema's defaults (docs/plugins.md § Config and defaults; a schema default is the only
// default a plugin gets). For tests that call a plugin's `execute` directly, outside a Worker.
//
//   const blockConfig = await pluginConfigOf<BlockWriteResultHandlerConfig>(new URL('../plugins/writers/block-write/', import.meta.url));
//   blockWriter.execute(ctx, blockConfig({ table: 't', chainId: 1, block: { number: 2 } }), outputs, io);
import { fileURLToPath } from 'node:url';
import { loadPluginPackage } from '../../src/kernel/plugin-loader.js';

/**
 * Loads the plugin package at `packageDir` once and returns its config resolver: a copy of `config`,
 * validated and completed with the schema's defaults. An invalid config throws, naming the schema errors.
 */
export async function pluginConfigOf<C>(packageDir: string | URL): Promise<(config: unknown) => C> {
  const dir = typeof packageDir === 'string' ? packageDir : fileURLToPath(packageDir);
  const loaded = await loadPluginPackage(dir);
  if ('errors' in loaded) throw new Error(loaded.errors.map((e) => e.message).join('\n'));
  const { validate } = loaded.plugin;
  return (config) => {
    const copy = structuredClone(config);
    if (!validate(copy)) throw new Error(`invalid config for ${dir}: ${JSON.stringify(validate.errors)}`);
    return copy as C;
  };
}
