// Kernel assembly: config → plugins → hooks, the one sequence every process starts with.
//   loadConfig (frozen) → loadPlugins (registerBuilders, registerWriters, pluginsRegistered)
//   → configLoaded → [the caller plans and assembles services] → serviceAssembled → ... → shutdown
// configLoaded fires after loading plugins so that plugins can tap it (they register their taps in apply()).
import { loadConfig, type LoadConfigOptions } from './config.js';
import type { BlockxConfig } from './config-types.js';
import { createKernelHooks, type KernelHooks } from './hooks.js';
import { packagePath } from './package-root.js';
import { loadPlugins } from './plugin-loader.js';
import type { PluginRegistry } from './plugin-registry.js';
import type { ServicePlan } from './service-plan.js';

export interface Kernel {
  readonly config: BlockxConfig;
  readonly hooks: KernelHooks<BlockxConfig, ServicePlan>;
  readonly plugins: PluginRegistry;
}

/** Loads the config and every plugin; throws ConfigError or PluginLoadError listing all problems. */
export async function bootKernel(opts: LoadConfigOptions = {}): Promise<Kernel> {
  const config = loadConfig(opts);
  return bootKernelWithConfig(config);
}

/**
 * The built-in plugins' folders, inside the installed package (never the cwd's): every config has them, and
 * `plugins.dirs` / `plugins.packages` add the user's own (docs/plugins.md § Where plugins are found).
 */
export const BUILTIN_PLUGIN_DIRS: readonly string[] = Object.freeze([
  packagePath('plugins', 'builders'),
  packagePath('plugins', 'writers'),
]);

export async function bootKernelWithConfig(config: BlockxConfig): Promise<Kernel> {
  const hooks = createKernelHooks<BlockxConfig, ServicePlan>();
  const plugins = await loadPlugins({
    dirs: [...BUILTIN_PLUGIN_DIRS, ...config.plugins.dirs],
    packages: config.plugins.packages,
    baseDir: config.baseDir,
    hooks,
  });
  hooks.configLoaded.call(config);
  return { config, hooks, plugins };
}
