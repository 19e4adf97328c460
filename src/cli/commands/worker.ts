// `blockx worker --deployment NAME`: one Worker with its supervised Executor, until SIGTERM (drain) or
// SIGINT; SIGHUP or a change of the config file reloads it (docs/configuration.md § Changing the
// config of a running process). The implementation lives in the app layer (src/app/worker-command.ts);
// it is imported only when the command runs.
import type { Command } from 'commander';
import { CONFIG_FLAG, type CliIo } from '../io.js';

export function registerWorkerCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('worker')
    .description(
      'run a Worker (spawns and supervises its Executor); SIGTERM drains, then exits 0; SIGHUP reads the config file again',
    )
    .option(...CONFIG_FLAG)
    .requiredOption('--deployment <name>', 'the deployment to serve (block | bundle)')
    .action(async (opts: { config?: string; deployment: string }) => {
      const { workerCommand } = await import('../../app/worker-command.js');
      setExit(
        await workerCommand(
          { ...(opts.config ? { config: opts.config } : {}), deployment: opts.deployment },
          io,
        ),
      );
    });
}
