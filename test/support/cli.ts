// Runs the built CLI (bin/blockx.js → dist/) as a child process for the process and e2e tiers: collects
// stdout and stderr, ends stdin (with `input` if given), and kills the child after `timeoutMs`.
import { spawn } from 'node:child_process';
import path from 'node:path';

export const REPO = path.resolve(import.meta.dirname, '../..');
export const BIN = path.join(REPO, 'bin/blockx.js');

/** Variables that change what the CLI does; a test sets the ones it means. */
const CONFIG_VARS =
  /^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_|GRPC_|TASK_DEADLINE_MS|MAX_TASK_TIMEOUT_MS|RESULT_RETENTION_MS)/;

/** This process's environment without the CLI's config variables, plus `extra`. */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !CONFIG_VARS.test(k)));
  return { ...env, ...extra };
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall time from spawn to close. */
  readonly ms: number;
}

export interface CliOptions {
  /** Default: the repository. */
  readonly cwd?: string;
  /** The whole environment. Default: cleanEnv(). */
  readonly env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed. */
  readonly input?: string;
  /** Default 40 s. */
  readonly timeoutMs?: number;
  /** What runs before ARGS. Default: this process's node and BIN (another build's bin, a wrapper). */
  readonly command?: readonly string[];
}

/** `blockx ARGS…`; rejects (after killing it) when it outlives `timeoutMs`. */
export function runBlockx(args: readonly string[], opts: CliOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const [file, ...head] = opts.command ?? [process.execPath, BIN];
    const child = spawn(file as string, [...head, ...args], {
      cwd: opts.cwd ?? REPO,
      env: opts.env ?? cleanEnv(),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`blockx ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, opts.timeoutMs ?? 40_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
    child.stdin.end(opts.input ?? '');
  });
}
