// A one-machine cluster of the built CLI for process tests: `blockx up --no-demo --workers 2` on a free
// port, with the environment a test gives it (BLOCKX_STORAGE_URL, ...). The red lines are raised to 1 so
// that a busy test machine does not make the Coordinator filter its Workers as overloaded.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './ports.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine, type OutputTail } from './processes.js';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(REPO, 'bin/blockx.js');

export interface BlockxUp {
  readonly child: ChildProcess;
  readonly output: OutputTail;
  readonly coordinator: string;
  readonly workers: readonly string[];
}

/** Starts `blockx up` (with `args` added); a port probed free may be taken before it binds, so a fresh one is tried then. */
export async function startBlockxUp(env: NodeJS.ProcessEnv, args: readonly string[] = []): Promise<BlockxUp> {
  for (let tries = 0; ; tries++) {
    const listen = `127.0.0.1:${await freePort()}`;
    const child = spawnTracked(
      process.execPath,
      [BIN, 'up', '--listen', listen, '--no-demo', '--workers', '2', ...args],
      {
        cwd: REPO,
        env: { ...env, COORDINATOR_CPU_RED_LINE: '1', COORDINATOR_MEMORY_RED_LINE: '1' },
      },
    );
    const output = captureOutput(child);
    try {
      await waitForLine(child, /^serving; press Ctrl-C/, 90_000);
    } catch (err) {
      await stopGroup(child, 'SIGKILL', 1_000);
      if (tries < 2 && /EADDRINUSE/.test(output.text())) continue;
      throw err;
    }
    const text = output.text();
    const coordinator = /coordinator listening on (\S+)/.exec(text)?.[1] ?? '';
    if (coordinator !== listen) throw new Error(`blockx up did not say it listens on ${listen}:\n${text}`);
    const workers = [...text.matchAll(/worker #\d+ listening on (\S+)/g)].map((m) => m[1] as string);
    return { child, output, coordinator, workers };
  }
}
