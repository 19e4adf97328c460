import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Four tiers (see test/README.md): unit (pure and adapter tests: no sockets, no servers, no sleeps),
// integration (in-process adapters on real loopback sockets, gRPC servers, child processes that are not
// the built CLI), process (spawn the built `blockx` CLI), e2e (real etcd / PostgreSQL / several
// processes). scripts/test.mjs runs them one at a time in this order (its TIERS list). `forks` is the
// safe pool: `threads` breaks process.chdir and leaks spawned children on worker teardown.
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
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          pool: 'forks',
          testTimeout: 30_000,
          hookTimeout: 30_000,
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
