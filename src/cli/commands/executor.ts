// `blockx executor --socket PATH`: normally spawned and supervised by its Worker. main() dispatches it
// before commander parses anything (a fast start matters on every restart); this declaration exists so
// that `blockx --help` and `blockx executor --help` document it.
import type { Command } from 'commander';

export function registerExecutorHelp(program: Command): void {
  program
    .command('executor')
    .description('run an Executor process (normally spawned by its Worker)')
    .requiredOption('--socket <path>', "the Worker's Unix socket to connect to (at most 107 bytes)")
    .option('--functions-dir <dir>', 'function modules (default: BLOCKX_FUNCTIONS_DIR or ./functions)')
    .option('--threads <n>', 'execution threads (default 2)')
    .option('--heartbeat-interval-ms <ms>', 'heartbeat period to the Worker (default 500)')
    .option(
      '--cancel-hard-limit-ms <ms>',
      'a cancelled call still running after this loses its thread (default 1000)',
    )
    .option('--max-calls-per-thread <n>', 'calls running at once on one thread (default 256)')
    .option(
      '--secret-fd <n>',
      "read the Worker's per-spawn secret from this file descriptor, then close it (the Worker passes 3; see docs/security.md)",
    );
}
