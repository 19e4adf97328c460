// Loading plugins again in a running process (docs/plugins.md § Loading plugins again), a step of the
// config reload (config-reload.ts) of `blockx up` and `blockx worker`.
//
// Each reload fingerprints the user's plugins: the `plugins` section of the config and, for every package
// it names (each `plugins.dirs` subfolder with a package.json, each `plugins.packages` entry, symlinks
// followed), every file's path and content (size and modification time for a file over
// FINGERPRINT_CONTENT_BYTES; node_modules and dot-files left out): a file saved unchanged reloads nothing. The
// built-in plugins are part of the installed BlockX, which a restart changes. When the fingerprint moved,
// the whole set is loaded again as at start (loadPlugins: manifest, schema, module, export shape; every
// module imported anew) and swapped into the process's LivePluginRegistry; tasks already running keep the
// plugins they started with. A set that does not load changes nothing and is reported with its problems.
//
// Hooks: a reloaded plugin's apply(hooks) taps a fresh, detached hooks object, so the lifecycle taps of
// the process stay those made at start; a change to what a plugin taps needs a restart.
import { createHash } from 'node:crypto';
import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BlockxConfig } from '../kernel/config-types.js';
import { PluginLoadError } from '../kernel/errors.js';
import { createKernelHooks } from '../kernel/hooks.js';
import { BUILTIN_PLUGIN_DIRS } from '../kernel/kernel.js';
import { discoverPlugins, loadPlugins } from '../kernel/plugin-loader.js';
import type { LivePluginRegistry } from '../kernel/plugin-registry.js';
import type { ConfigReloadOptions } from './config-reload.js';

/** At most this many files are looked at per package; a larger one is fingerprinted by its first ones. */
export const FINGERPRINT_MAX_FILES = 2_000;
/** Files up to this size are fingerprinted by their content, larger ones by size and modification time. */
export const FINGERPRINT_CONTENT_BYTES = 256 * 1024;

export interface PluginReloadOptions {
  readonly live: LivePluginRegistry;
  /** The config the process loaded its plugins with. */
  readonly running: BlockxConfig;
  readonly report: ConfigReloadOptions['report'];
}

/**
 * The plugin step of a config reload: loads the plugins again when the user's plugins changed. Call it
 * once before the first reload (it fingerprints the running set); never throws.
 */
export async function createPluginReload(
  opts: PluginReloadOptions,
): Promise<(next: BlockxConfig) => Promise<void>> {
  let seen = await pluginsFingerprint(opts.running);
  return async (next) => {
    let now: string;
    try {
      now = await pluginsFingerprint(next);
    } catch (err) {
      opts.report('error', `config reload: the plugin folders cannot be read: ${(err as Error).message}`);
      return;
    }
    if (now === seen) return;
    try {
      const registry = await loadPlugins({
        dirs: [...BUILTIN_PLUGIN_DIRS, ...next.plugins.dirs],
        packages: next.plugins.packages,
        baseDir: next.baseDir,
        hooks: createKernelHooks(),
        fresh: true,
      });
      opts.live.replace(registry);
      seen = now;
      opts.report(
        'info',
        `config reload: plugins loaded again; builders ${registry.builders.types().join(', ')}; ` +
          `writers ${registry.writers.types().join(', ')}; tasks already running keep the ones they started with`,
      );
    } catch (err) {
      const problems =
        err instanceof PluginLoadError ? err.errors.map((e) => e.message).join('; ') : (err as Error).message;
      opts.report(
        'error',
        `config reload: the plugins do not load; the running ones keep serving: ${problems}`,
      );
    }
  };
}

/** The fingerprint of the user's plugins (the header): equal while nothing of them changed. */
export async function pluginsFingerprint(config: BlockxConfig): Promise<string> {
  const { packagePaths } = await discoverPlugins({
    dirs: config.plugins.dirs,
    packages: config.plugins.packages,
    baseDir: config.baseDir,
  });
  const hash = createHash('sha256').update(JSON.stringify(config.plugins));
  for (const dir of packagePaths) {
    const root = await realpath(dir).catch(() => dir);
    hash.update(`\n${root}`);
    for (const line of await fileStamps(root)) hash.update(`\n${line}`);
  }
  return hash.digest('hex');
}

/** `path content-hash` (or `path size mtime`) of each file under `root` (sorted; node_modules and dot-files left out). */
async function fileStamps(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (out.length >= FINGERPRINT_MAX_FILES) return;
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) await walk(full);
      else {
        const s = await stat(full).catch(() => undefined);
        if (!s?.isFile()) continue;
        const content =
          s.size <= FINGERPRINT_CONTENT_BYTES ? await readFile(full).catch(() => undefined) : undefined;
        const stamp = content ? createHash('sha256').update(content).digest('hex') : `${s.size} ${s.mtimeMs}`;
        out.push(`${path.relative(root, full)} ${stamp}`);
      }
    }
  };
  await walk(root);
  return out;
}
