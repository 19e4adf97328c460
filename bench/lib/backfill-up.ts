// The cluster side of bench/backfill: `blockx up --workers N --no-demo --no-dashboard` from the built CLI
// (bin/blockx.js → dist/) on a given storage, as an operator on one machine runs it: one process for the
// Coordinator and the Workers, one Executor child per Worker. The red lines are raised to 1
// (COORDINATOR_CPU/MEMORY_RED_LINE): a loaded bench machine must not make the Coordinator filter its own
// Workers out. stop() sends SIGTERM to the group (SIGKILL after a bound).
import type { ChildProcess } from 'node:child_process';
import { BIN, REPO, cleanEnv, runBlockx, type CliRun } from '../../test/support/cli.js';
import { freePort } from '../../test/support/ports.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../../test/support/processes.js';

export interface UpCluster {
  /** The `blockx up` process (Coordinator + Workers). */
  readonly pid: number;
  readonly coordinatorAddr: string;
  /** `blockx ARGS` with the cluster's storage and coordinator in its environment. */
  cli(args: readonly string[], opts?: { timeoutMs?: number }): Promise<CliRun>;
  /** The last lines of its output. */
  output(): string;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 90_000;
const PORT_ATTEMPTS = 3;

/** The environment every command of the bench gets: the storage, and nothing of the caller's BlockX variables. */
export const benchEnv = (storageUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv =>
  cleanEnv({ BLOCKX_STORAGE_URL: storageUrl, ...extra });

export async function startUp(opts: {
  storageUrl: string;
  workers: number;
  /** More environment for `blockx up` (the profiling variables). */
  env?: NodeJS.ProcessEnv;
}): Promise<UpCluster> {
  for (let attempt = 1; ; attempt++) {
    const listen = `127.0.0.1:${await freePort()}`;
    const child: ChildProcess = spawnTracked(
      process.execPath,
      [BIN, 'up', '--listen', listen, '--workers', String(opts.workers), '--no-demo', '--no-dashboard'],
      {
        cwd: REPO,
        env: benchEnv(opts.storageUrl, {
          COORDINATOR_CPU_RED_LINE: '1',
          COORDINATOR_MEMORY_RED_LINE: '1',
          ...opts.env,
        }),
      },
    );
    const tail = captureOutput(child);
    try {
      await waitForLine(child, /^serving; press Ctrl-C/, START_TIMEOUT_MS);
    } catch (err) {
      await stopGroup(child, 'SIGKILL', 1_000);
      if (attempt < PORT_ATTEMPTS && /EADDRINUSE/.test(tail.text())) continue;
      throw new Error(`blockx up did not start: ${(err as Error).message}\n${tail.text()}`, {
        cause: err,
      });
    }
    const env = benchEnv(opts.storageUrl, { COORDINATOR_LISTEN: listen });
    return {
      pid: child.pid as number,
      coordinatorAddr: listen,
      cli: (args, o = {}) => runBlockx(args, { env, timeoutMs: o.timeoutMs ?? 60_000 }),
      output: () => tail.text(),
      stop: () => stopGroup(child, 'SIGTERM', 15_000),
    };
  }
}
