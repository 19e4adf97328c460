// The `blockx` command: parses flags, loads the config, calls into the kernel or a service's app.
// Exit codes (EXIT in io.ts): 0 success, 1 a failed task or validation, 2 usage (bad flags, unknown
// command), a config that cannot be loaded, an address already in use, or an unreachable coordinator or
// worker. A user's mistake prints one line; only an unexpected error (a bug) prints its stack.
import { Command, CommanderError } from 'commander';
import { BlockxError } from '../kernel/errors.js';
import { redactText } from '../kernel/redact.js';
import { registerConfigCommand } from './commands/config.js';
import { registerPluginsCommand } from './commands/plugins.js';
import { registerValidateCommand } from './commands/validate.js';
import { registerSubmitCommand } from './commands/submit.js';
import { registerBackfillCommand } from './commands/backfill.js';
import { registerIngestCommand } from './commands/ingest.js';
import { registerJobsCommand } from './commands/jobs.js';
import { registerStatusCommand } from './commands/status.js';
import { registerExecutorHelp, withExecutorDefaults } from './commands/executor.js';
import { registerWorkerCommand } from './commands/worker.js';
import { registerUpCommand } from './commands/up.js';
import { registerDataCommand } from './commands/data.js';
import { registerDbCommand } from './commands/db.js';
import { registerCertsCommand } from './commands/certs.js';
import { registerInitCommand } from './commands/init.js';
import { registerCoordinatorCommand } from './commands/coordinator.js';
import { registerFunctionsCommand } from './commands/functions.js';
import { describeCliError } from './errors.js';
import { addHelpExamples } from './help-examples.js';
import { EXIT, UsageError, type CliIo } from './io.js';
import { readPackageVersion } from '../kernel/package-root.js';

export async function main(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  // The executor is spawned by its Worker, often: skip commander and the kernel's config loading (fast
  // start); only the flags not given are filled in from the config table's defaults.
  if (argv[0] === 'executor' && !argv.includes('--help') && !argv.includes('-h')) {
    const { executorCommand } = await import('../executor/cli-entry.js');
    return executorCommand(withExecutorDefaults(argv.slice(1), process.env));
  }
  const program = new Command('blockx')
    .description('BlockX: run user functions over blockchain block data as distributed tasks.')
    .version(readPackageVersion(), '-V, --version')
    .showHelpAfterError('(run `blockx --help` for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s), writeErr: (s) => io.stderr(s) });

  let exitCode: number = EXIT.OK;
  const setExit = (code: number) => {
    exitCode = code;
  };
  registerValidateCommand(program, io, setExit);
  registerPluginsCommand(program, io, setExit);
  registerConfigCommand(program, io, setExit);
  registerInitCommand(program, io, setExit);
  registerUpCommand(program, io, setExit);
  registerCoordinatorCommand(program, io, setExit);
  registerWorkerCommand(program, io, setExit);
  registerExecutorHelp(program);
  registerDataCommand(program, io, setExit);
  registerDbCommand(program, io, setExit);
  registerSubmitCommand(program, io, setExit);
  registerBackfillCommand(program, io, setExit);
  registerIngestCommand(program, io, setExit);
  registerJobsCommand(program, io, setExit);
  registerStatusCommand(program, io, setExit);
  registerFunctionsCommand(program, io, setExit);
  registerCertsCommand(program, io, setExit);

  const command = argv.find((a) => !a.startsWith('-'));
  if (command === 'up' || command === 'coordinator' || command === 'worker') {
    (await import('./grpc-log.js')).installGrpcLogger();
  }
  // After every registration: each command's --help ends with its examples (help-examples.ts).
  addHelpExamples(program);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help / --version exit with 0; everything else commander rejects is a usage error.
      return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    // Every message is masked: a config or connection error may quote a URL with its password.
    if (err instanceof UsageError) {
      io.stderr(`blockx: ${redactText(err.message)}\n`);
      return EXIT.USAGE;
    }
    const known = describeCliError(err, command);
    if (known !== undefined) {
      io.stderr(`blockx: ${redactText(known.line)}\n`);
      return known.exitCode;
    }
    if (err instanceof BlockxError) {
      io.stderr(`blockx: ${redactText(err.message)}\n`);
      return err.code === 'CONFIG_INVALID' || err.code === 'CONFIG_NOT_FOUND' ? EXIT.USAGE : EXIT.FAILED;
    }
    io.stderr(`blockx: unexpected error: ${redactText((err as Error)?.stack ?? String(err))}\n`);
    return EXIT.FAILED;
  }
}

function processIo(): CliIo {
  return {
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    env: process.env,
    cwd: () => process.cwd(),
    isTTY: Boolean(process.stdout.isTTY),
  };
}
