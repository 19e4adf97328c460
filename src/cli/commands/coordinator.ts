// `blockx coordinator --deployment NAME`: the Coordinator of one deployment, until SIGINT/SIGTERM. The
// implementation lives in the app layer (src/app/coordinator-command.ts); it is imported only when the
// command runs: registering must stay cheap (`blockx --help` loads every command module), and it pulls
// in grpc-js, etcd3 and pino.
import type { Command } from 'commander';
import { CONFIG_FLAG, type CliIo } from '../io.js';

export function registerCoordinatorCommand(
  program: Command,
  io: CliIo,
  setExit: (code: number) => void,
): void {
  program
    .command('coordinator')
    .description('run the Coordinator of one deployment')
    .option(...CONFIG_FLAG)
    .requiredOption('--deployment <name>', 'block | bundle')
    .action(async (opts: { config?: string; deployment: string }) => {
      const { coordinatorCommand } = await import('../../app/coordinator-command.js');
      setExit(
        await coordinatorCommand(
          { ...(opts.config ? { config: opts.config } : {}), deployment: opts.deployment },
          io,
        ),
      );
    });
}
