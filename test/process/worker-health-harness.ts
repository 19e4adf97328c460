// Shared by test/process/executor-pause.test.ts and test/e2e/worker-health.test.ts (not a test file): the
// built `blockx worker` as its own process (so it can be SIGSTOPped), with its supervised Executor, a
// temp config derived from the repo's (executor timings overridden, plugin dirs made absolute), temp
// functions and a temp SQLite file. Kill everything in afterAll with `stop()`.
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseDocument } from 'yaml';
import { createWorkerClient } from '../../src/grpc/clients.js';
import type { WorkerServiceClient } from '../../src/grpc/proto.js';
import {
  captureOutput,
  spawnTracked,
  stopGroup,
  waitForLine,
  type OutputTail,
} from '../support/processes.js';
import { REPO, makeFunctionsDir, removeDir } from '../support/worker-tasks.js';

const CLI = path.join(REPO, 'bin/blockx.js');

export interface SpawnedWorker {
  readonly child: ChildProcess;
  readonly addr: string;
  readonly client: WorkerServiceClient;
  readonly output: OutputTail;
  /** pids from the worker's `executor ready` log lines, in order. */
  readonly executorPids: number[];
  stop(): Promise<void>;
}

export interface SpawnWorkerOptions {
  readonly functions: Record<string, string>;
  /** Overrides of `deployments.block.executor`. */
  readonly executor?: Record<string, number>;
  readonly env?: Record<string, string>;
}

/** The environment without any BlockX / etcd variable of the caller's shell. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) => !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_|CALL_DEADLINE_MS)/.test(k),
    ),
  );
}

export function ensureBuilt(): void {
  if (!existsSync(path.join(REPO, 'dist/cli/main.js')))
    execFileSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'ignore' });
}

export async function spawnWorker(opts: SpawnWorkerOptions): Promise<SpawnedWorker> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bx-whealth-'));
  const functionsDir = makeFunctionsDir(opts.functions);
  const doc = parseDocument(readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8'));
  doc.setIn(['plugins', 'dirs'], [path.join(REPO, 'plugins/builders'), path.join(REPO, 'plugins/writers')]);
  for (const [k, v] of Object.entries(opts.executor ?? {}))
    doc.setIn(['deployments', 'block', 'executor', k], v);
  const configPath = path.join(dir, 'blockx.config.yaml');
  writeFileSync(configPath, doc.toString());
  const child = spawnTracked(
    process.execPath,
    [CLI, 'worker', '--deployment', 'block', '--config', configPath],
    {
      cwd: dir,
      env: {
        ...cleanEnv(),
        WORKER_LISTEN: '127.0.0.1:0',
        BLOCKX_FUNCTIONS_DIR: functionsDir,
        BLOCKX_STORAGE_URL: `sqlite:${path.join(dir, 'blockx.db')}`,
        BLOCKX_LOG_LEVEL: 'info',
        ...opts.env,
      },
    },
  );
  const output = captureOutput(child);
  const executorPids: number[] = [];
  if (child.stderr !== null)
    createInterface({ input: child.stderr }).on('line', (line) => {
      const m = /"pid":(\d+).*"msg":"executor ready"/.exec(line);
      if (m !== null) executorPids.push(Number(m[1]));
    });
  const stop = async (): Promise<void> => {
    await stopGroup(child, 'SIGKILL', 1_000);
    // The Executor runs in its own process group; it exits when its socket closes, but make sure.
    for (const pid of executorPids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    removeDir(functionsDir);
    removeDir(dir);
  };
  try {
    const line = await waitForLine(child, /^worker listening on \S+/, 60_000);
    const addr = /^worker listening on (\S+)/.exec(line)?.[1] ?? '';
    return { child, addr, client: createWorkerClient(addr), output, executorPids, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** True while a process with this pid exists (signal 0). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
