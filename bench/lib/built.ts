// The system under test as deployed: the compiled modules in dist/ (what `blockx` runs), when they are
// built (`npm run bench` builds first); otherwise the TypeScript sources, under this process's tsx.
// tsx-compiled sources carry esbuild's name-keeping helpers and loader hooks, which cost measurably on
// hot paths, so a bench that measures BlockX code loads it through here. One process must take every
// module that shares classes or registries from the same side: load them all through here.
//
//   import type * as RunWorkerModule from '../src/services/worker/app/run-worker.js';
//   const { runWorker } = await loadBuilt<typeof RunWorkerModule>('services/worker/app/run-worker');
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Whether dist/ holds a build (checked once). */
export const BUILT = existsSync(fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url)));

/** Imports `src/<modulePath>.ts`, from dist/ when built. */
export function loadBuilt<M>(modulePath: string): Promise<M> {
  const url = BUILT
    ? new URL(`../../dist/${modulePath}.js`, import.meta.url)
    : new URL(`../../src/${modulePath}.ts`, import.meta.url);
  return import(url.href) as Promise<M>;
}

/** For a bench's header line. */
export function builtLabel(): string {
  return BUILT ? 'BlockX from dist/ (built)' : 'BlockX from src/ under tsx (no build)';
}
