import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

// Four tiers (see test/README.md): unit (pure and adapter tests: no sockets, no servers, no sleeps),
// integration (in-process adapters on real loopback sockets, gRPC servers, child processes that are not
// the built CLI), process (spawn the built `blockx` CLI), e2e (real etcd / PostgreSQL / several
// processes). scripts/test.mjs runs them one at a time in this order (its TIERS list). `forks` is the
// safe pool: `threads` breaks process.chdir and leaks spawned children on worker teardown.
// `blockx` and its subpaths (`blockx/plugin`, ...) as the package's exports name them, read from source: the
// `blockx-source` condition of each entry of package.json#exports.
const packageExports = (
  JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
    exports: Record<string, string | Record<string, string>>;
  }
).exports;
const alias = Object.entries(packageExports).flatMap(([subpath, target]) =>
  typeof target === 'object' && target['blockx-source']
    ? [
        {
          find: new RegExp(`^blockx${subpath.slice(1).replace(/[/.]/g, '\\$&')}$`),
          replacement: fileURLToPath(new URL(target['blockx-source'], import.meta.url)),
        },
      ]
    : [],
);

// Test files run side by side, one per core. Vitest's own default is one fewer than the cores, which is
// one at a time on a 2-core box; every file starts its servers on free ports in temp dirs (test/README.md,
// "Running side by side"), so files share nothing but the CPU.
const FILES_AT_ONCE = Math.max(2, availableParallelism());

// The e2e files that must have the machine to themselves: they bound a duration that a second file's
// load would stretch (a reconnect within 3.5 s, a lease expiring within 4.5 s, reservations spread
// evenly over workers that heartbeat every 100 ms, 256 writes in flight through pools of 16 connections
// with a bounded admission wait, a worker back in rotation within 2 s of its executor's restart, an etcd
// outage with no failed reservation).
// The `e2e-alone` project runs them one at a time after the others (vitest runs a project without file
// parallelism in a group of its own, last). Files that kill a server and start it again on the same port
// run beside the others: etcd and cluster workers take ports below the kernel's ephemeral range, which no
// other file's connection or listener can take while the server is down (test/support/ports.ts). So does
// partitions.test.ts (7 test hosts, 3 workers): it bounds nothing a neighbour's load would stretch (its
// cuts outlast every timeout they must trip by seconds), and it starts first, as one of the largest files.
const E2E_ALONE = [
  'test/e2e/backfill.test.ts',
  'test/e2e/etcd-outage.test.ts',
  'test/e2e/executor-restart.test.ts',
  'test/e2e/heartbeat-publisher.test.ts',
  'test/e2e/placement.test.ts',
  'test/e2e/storage/concurrent-writes.test.ts',
];
const E2E_TIMEOUTS = { testTimeout: 120_000, hookTimeout: 120_000 };

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
          maxWorkers: FILES_AT_ONCE,
          testTimeout: 15_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          pool: 'forks',
          maxWorkers: FILES_AT_ONCE,
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
          maxWorkers: FILES_AT_ONCE,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...E2E_ALONE],
          // One PostgreSQL server for the run; the IO files make databases of their own on it.
          globalSetup: ['test/support/postgres-global-setup.ts'],
          pool: 'forks',
          maxWorkers: FILES_AT_ONCE,
          ...E2E_TIMEOUTS,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'e2e-alone',
          include: E2E_ALONE,
          pool: 'forks',
          fileParallelism: false,
          ...E2E_TIMEOUTS,
        },
      },
    ],
  },
});
