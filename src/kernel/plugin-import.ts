// Importing a plugin package's main module, with `blockx` and `blockx/*` resolving to the running BlockX.
//
// A plugin package imports BlockX by its public subpaths (`blockx/plugin`, docs/plugins.md). Node would
// look for a `blockx` folder in the node_modules above the plugin's real path, and a package that a
// user's project links in (`npm install ../my-writer` makes a symlink) or lists in `plugins.dirs` from
// outside the project has none there: "Cannot find package 'blockx'". A plugin is a part of the BlockX
// that loads it, the way a peer dependency is, so the resolve hook below answers every `blockx` import with
// this package's own entry (a self-reference from its root), whatever folder the importing file is in:
// the same copy the kernel runs, never a second, possibly older one that happens to sit beside the plugin.
//
// The hook is a self-contained JS string registered as a `data:` URL (as the Executor's epoch hooks are,
// src/executor/epoch-loader-hooks.ts): the hooks thread then needs no TypeScript loader, whether BlockX
// runs from src/ (tests, under tsx) or from dist/. Running from src/, the `blockx-source` export condition
// picks the TypeScript sources (package.json#exports), so the plugins and the kernel read the same code.
import { readdirSync, statSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from './package-root.js';

export const BLOCKX_RESOLVE_HOOKS_SOURCE = `
let parentURL;
let conditions;
export async function initialize(data) {
  parentURL = data.parentURL;
  conditions = data.conditions;
}
export async function resolve(specifier, context, next) {
  if (specifier === 'blockx' || specifier.startsWith('blockx/')) {
    return next(specifier, { ...context, parentURL, conditions: [...(context.conditions ?? []), ...conditions] });
  }
  return next(specifier, context);
}
`;

/** Running from the TypeScript sources (vitest, tsx) rather than the build in dist/. */
const FROM_SOURCES = import.meta.url.endsWith('.ts');

let registered = false;

/** Registers the `blockx` resolve hook once per process (before the first plugin module is imported). */
function registerBlockxResolution(): void {
  if (registered) return;
  registered = true;
  register(`data:text/javascript,${encodeURIComponent(BLOCKX_RESOLVE_HOOKS_SOURCE)}`, {
    data: {
      parentURL: pathToFileURL(path.join(PACKAGE_ROOT, 'package.json')).href,
      conditions: FROM_SOURCES ? ['blockx-source'] : [],
    },
  });
}

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.tsx']);

/**
 * A built-in plugin's module as `npm run build` compiled it (tsconfig.plugins.json: plugins/… →
 * dist/plugins/…/*.js), when BlockX runs from dist/ and that build is not older than any TypeScript file
 * beside the entry (a plugin edited since the last build is loaded from its sources, as before);
 * undefined otherwise. It is imported natively: under dist/ its nearest package.json is BlockX's own, so its `blockx/…` imports
 * resolve to this package by self-reference, and neither the resolve hook nor tsx is needed. Node runs
 * module hooks on a thread of their own, and starting it was a large part of every CLI run's start
 * (docs/performance.md § What a CLI run spends at start).
 */
export function compiledBuiltin(
  file: string,
  root = PACKAGE_ROOT,
  fromSources = FROM_SOURCES,
): string | undefined {
  if (fromSources) return undefined;
  const relative = path.relative(root, file);
  if (!relative.startsWith(`plugins${path.sep}`) || path.extname(file) !== '.ts') return undefined;
  const compiled = path.join(root, 'dist', relative.replace(/\.ts$/, '.js'));
  const mtime = (p: string): number => statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? Number.NaN;
  const sources = readdirSync(path.dirname(file)).filter((name) => name.endsWith('.ts'));
  const current = sources.every(
    (name) =>
      mtime(path.join(path.dirname(compiled), name.replace(/\.ts$/, '.js'))) >=
      mtime(path.join(path.dirname(file), name)),
  );
  return current ? compiled : undefined;
}

/**
 * Imports a plugin's main module: a built-in one from its build (compiledBuiltin), any other TypeScript
 * through tsx (no build step for plugin authors), JS natively; the resolve hook is registered before the
 * first module that is not a built-in's build.
 * `fresh`: the package is loaded again while the process runs (docs/plugins.md § Loading plugins again),
 * so JS goes through tsx as well: each tsImport call resolves the module and everything it imports
 * under a namespace of its own, where a native import would answer the cached module. The earlier
 * modules stay in memory (Node cannot unload a module).
 */
export async function importPluginModule(file: string, fresh = false): Promise<unknown> {
  const builtin = fresh ? undefined : compiledBuiltin(file);
  if (builtin !== undefined) return import(pathToFileURL(builtin).href);
  registerBlockxResolution();
  const url = pathToFileURL(file).href;
  if (fresh || TS_EXTENSIONS.has(path.extname(file))) {
    // tsx (and esbuild behind it) is loaded only when a TypeScript plugin is: it costs ~100 ms at startup.
    const { tsImport } = await import('tsx/esm/api');
    return tsImport(url, import.meta.url);
  }
  return import(url);
}
