import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Three tiers (see test/README.md): unit (pure and adapter tests, no servers), process (spawn the built
// `blockx` CLI), e2e (real etcd / PostgreSQL / several processes). `forks` is the safe pool: `threads`
// breaks process.chdir and leaks spawned children on worker teardown.
const alias = { blockx: fileURLToPath(new URL('./src/index.ts', import.meta.url)) };

export default defineConfig({
  resolve: { alias },
  test: {
    pool: 'forks',
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'plugins/**/test/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 15_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'process',
          include: ['test/process/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
