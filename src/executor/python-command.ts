// The command that starts the Python Executor (docs/executor.md, "The Python Executor"): the contract
// between the executor and whoever spawns it (the Worker's supervisor). The Python side is standard
// library only and is shipped as source in `src/executor/python/` (the build compiles only .ts, so the
// installed package reads it from there; `packagePath` resolves the same folder from src/ and dist/).
//
// The supervisor appends the same flags it gives a JS executor (`--socket PATH --secret-fd 3
// --functions-dir DIR [--threads N] [--heartbeat-interval-ms N] [--cancel-hard-limit-ms N]
// [--max-calls-per-thread N] [--read-copy-max-entries N] [--isolation task|none] [--thread-heap-mb N]
// [--thread-memory-mb N] [--max-rss-mb N]`), leaves fd 3 open with the secret on it, and passes its
// environment (`BLOCKX_LOG_LEVEL` is honoured as by the JS executor). `--threads` is the number of
// execution processes.

import { join } from 'node:path';
import { packagePath } from '../kernel/package-root.js';

/** Environment variable naming the Python interpreter (a command on PATH or an absolute path). */
export const PYTHON_ENV_VAR = 'BLOCKX_PYTHON';

/** The interpreter used when neither the config nor `BLOCKX_PYTHON` names one. */
export const DEFAULT_PYTHON = 'python3';

/** The oldest Python the executor supports (it checks at start and exits 2 on an older one). */
export const MIN_PYTHON_VERSION = '3.9';

export interface PythonCommandOptions {
  /** The interpreter from the config (`executor.python`); wins over the environment. */
  readonly python?: string;
  /** Where `BLOCKX_PYTHON` is read from. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

/** The folder that holds the Python executor (`blockx_executor/`) and the function SDK (`blockx/`). */
export function pythonExecutorDir(): string {
  return packagePath('src', 'executor', 'python');
}

/** The interpreter: `options.python`, else `$BLOCKX_PYTHON`, else `python3` (empty strings count as unset). */
export function pythonInterpreter(options: PythonCommandOptions = {}): string {
  const fromConfig = options.python?.trim();
  if (fromConfig) return fromConfig;
  const fromEnv = (options.env ?? process.env)[PYTHON_ENV_VAR]?.trim();
  return fromEnv ? fromEnv : DEFAULT_PYTHON;
}

/**
 * The Python executor command without its flags, for `ExecutorSupervisorOptions.command`:
 * `[python, '-B', <package>/src/executor/python/blockx-executor.py]`. `-B`: no `.pyc` files are
 * written next to the shipped sources (the package folder may be read-only). The script's folder is
 * the first entry of `sys.path`, so `blockx_executor` and the SDK module `blockx` import from there.
 */
export function pythonExecutorCommand(options: PythonCommandOptions = {}): string[] {
  return [pythonInterpreter(options), '-B', join(pythonExecutorDir(), 'blockx-executor.py')];
}
