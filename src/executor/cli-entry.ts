// Entry point of the executor process: `node --import tsx src/executor/cli-entry.ts --socket PATH ...`
// (tests, development) or, through the CLI, `blockx executor --socket PATH` (which fills in the config
// table's defaults for the flags not given, then calls `executorCommand`). Flags, all required but the
// secret's: --socket, --functions-dir, the settings of executor-settings.ts (--threads,
// --heartbeat-interval-ms, --cancel-hard-limit-ms, --max-calls-per-thread, --read-copy-max-entries,
// --isolation, --thread-heap-mb, --thread-memory-mb, --max-rss-mb), --secret-fd N.
// Exit codes: 0 after a normal stop, 1 on a runtime failure, 2 on bad flags (or an unreadable secret, or
// an EXECUTOR_CPU_PROFILE / EXECUTOR_TRACE file that cannot be written: docs/performance.md § Profiling).
//
// The secret (docs/security.md, "The executor socket"): the Worker serves only a connection whose Hello
// carries the secret it made for this spawn. It travels on a file descriptor, never in argv or the
// environment (a user function can read both): `--secret-fd N` reads fd N to its end, once, before any
// user code is loaded, and closes it. The supervisor passes `--secret-fd 3` on a pipe. By hand:
// `blockx executor --socket PATH --secret-fd 0 < secret-file` (or `3< secret-file` with `--secret-fd 3`).
// Without the flag the Hello carries no secret and a BlockX Worker refuses the connection.

import { closeSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { withProfiling } from '../kernel/observability/profiling.js';
import { runExecutor, type ExecutorOptions } from './executor-main.js';
import { EXECUTOR_SETTING_FLAGS, parseExecutorSettings } from './executor-settings.js';

export function executorCommand(argv: readonly string[]): Promise<number> {
  const io = { env: process.env, stderr: (s: string) => void process.stderr.write(s) };
  return withProfiling('executor', 'blockx executor', io, () => serveExecutor(argv));
}

async function serveExecutor(argv: readonly string[]): Promise<number> {
  let options: ExecutorOptions;
  try {
    const parsed = parseExecutorArgs(argv);
    options = parsed.secretFd === undefined ? parsed : { ...parsed, secret: readSecretOnce(parsed.secretFd) };
  } catch (err) {
    process.stderr.write(`blockx executor: ${(err as Error).message}\n`);
    return 2;
  }
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  // As PID 1 of its own PID namespace the kernel hands it a signal from its functions' child processes
  // only if it handles it (docs/security.md § An Executor as PID 1 of its own PID namespace): then no
  // SIGTERM or SIGINT handler (the Worker stops it by closing its socket), and SIGUSR1, which would open
  // Node's inspector to them, is taken and dropped.
  if (process.pid === 1) process.on('SIGUSR1', () => undefined);
  else {
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  try {
    const exit = await runExecutor({ ...options, signal: abort.signal });
    process.stderr.write(
      `${JSON.stringify({ level: 'info', time: Date.now(), component: 'executor', msg: `stopped: ${exit.reason}` })}\n`,
    );
    return 0;
  } catch (err) {
    process.stderr.write(`blockx executor: ${(err as Error)?.stack ?? String(err)}\n`);
    return 1;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

/** Flags as parsed: the options, and the fd the secret is still to be read from. */
export type ParsedExecutorArgs = ExecutorOptions & { readonly secretFd?: number };

/** Longest secret accepted from the fd (the Worker's are 64 hex characters). */
const MAX_SECRET_BYTES = 1024;

/** Read the spawn secret from `fd` to its end, close the fd, and return it trimmed. */
export function readSecretOnce(fd: number): string {
  let text: string;
  try {
    text = readFileSync(fd, 'utf8');
  } finally {
    try {
      closeSync(fd);
    } catch {
      // closed already
    }
  }
  const secret = text.trim();
  if (secret === '') throw new Error(`--secret-fd ${fd}: no secret to read`);
  if (Buffer.byteLength(secret) > MAX_SECRET_BYTES || /\s/.test(secret))
    throw new Error(`--secret-fd ${fd}: not a secret (one word of at most ${MAX_SECRET_BYTES} bytes)`);
  return secret;
}

export function parseExecutorArgs(argv: readonly string[]): ParsedExecutorArgs {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      socket: { type: 'string' },
      'functions-dir': { type: 'string' },
      ...Object.fromEntries(
        Object.values(EXECUTOR_SETTING_FLAGS).map(({ flag }) => [flag, { type: 'string' as const }]),
      ),
      'secret-fd': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (typeof values.socket !== 'string' || values.socket === '') throw new Error('--socket PATH is required');
  const functionsDir = values['functions-dir'];
  if (typeof functionsDir !== 'string' || functionsDir === '')
    throw new Error('--functions-dir DIR is required');
  const secretFdFlag = values['secret-fd'];
  if (secretFdFlag !== undefined && (typeof secretFdFlag !== 'string' || !/^\d+$/.test(secretFdFlag)))
    throw new Error(`--secret-fd must be a file descriptor number, got ${JSON.stringify(secretFdFlag)}`);
  return {
    socketPath: values.socket,
    functionsDir: resolve(functionsDir),
    ...parseExecutorSettings(values),
    ...(secretFdFlag !== undefined ? { secretFd: Number(secretFdFlag) } : {}),
  };
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  process.exitCode = await executorCommand(process.argv.slice(2));
  // Threads, the esbuild service or a stray function timer must not keep a stopped executor alive.
  process.exit();
}
