// Kernel assembly: config → plugins → hooks, the one sequence every process starts with.
//   loadConfig (frozen) → loadPlugins (registerBuilders, registerWriters, pluginsRegistered)
//   → configLoaded → [the caller plans and assembles services] → serviceAssembled → ... → shutdown
// configLoaded fires after loading plugins so that plugins can tap it (they register their taps in apply()).
import { loadConfig, type LoadConfigOptions } from './config.js';
import type { BlockxConfig } from './config-types.js';
import { createKernelHooks, type KernelHooks } from './hooks.js';
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

export async function bootKernelWithConfig(config: BlockxConfig): Promise<Kernel> {
  const hooks = createKernelHooks<BlockxConfig, ServicePlan>();
  const plugins = await loadPlugins({
    dirs: config.plugins.dirs,
    packages: config.plugins.packages,
    baseDir: config.baseDir,
    hooks,
  });
  hooks.configLoaded.call(config);
  return { config, hooks, plugins };
}
