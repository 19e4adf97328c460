// What a command may touch of the outside world, injected so in-process tests can capture it.
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd(): string;
  isTTY: boolean;
}

/**
 * Exit codes (docs/architecture.md § CLI): 0 success; 1 a task that ran and failed, or an invalid task or
 * validation; 2 usage (bad flags), a config that cannot be loaded, an address already in use, or a
 * coordinator/worker that cannot be reached — the run never started.
 */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2, UNREACHABLE: 2 } as const;

/** A problem with how the command was called (exit 2). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** `--config FILE` is accepted by every command (docs/architecture.md § CLI). */
export const CONFIG_FLAG = [
  '-c, --config <file>',
  'config file (default: BLOCKX_CONFIG, or blockx.config.yaml found from the cwd)',
] as const;

/** Where a client command sends its tasks: a coordinator, or straight to one worker. */
export const COORDINATOR_FLAG = [
  '--coordinator <addr>',
  'reserve through this coordinator (default: COORDINATOR_LISTEN, else from the config)',
] as const;
export const WORKER_FLAG = ['--worker <addr>', 'submit directly to this worker (no coordinator)'] as const;
