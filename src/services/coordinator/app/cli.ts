// `blockx coordinator --deployment <name>` (docs/architecture.md § CLI): load the config with the
// COORDINATOR_* env overrides applied to that deployment, run the Coordinator, stop gracefully on
// SIGINT/SIGTERM, exit 0. A config problem throws ConfigError, which the CLI reports with exit code 2.

import type { Command } from 'commander';

/** The slice of the CLI's io (src/cli/io.ts CliIo) this command uses. */
export interface CoordinatorCommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  cwd(): string;
}

export interface CoordinatorCommandOptions {
  /** `--config FILE`. */
  readonly config?: string;
  /** `--deployment NAME`: a deployment declared in the config (block or bundle kind). */
  readonly deployment: string;
}

/**
 * Runs until `until` settles (default: the first SIGINT or SIGTERM), then shuts down. Resolves with the
 * exit code.
 */
export async function coordinatorCommand(
  opts: CoordinatorCommandOptions,
  io: CoordinatorCommandIo,
  until?: Promise<unknown>,
): Promise<number> {
  if (!opts.deployment) {
    io.stderr('blockx coordinator: --deployment <name> is required (block | bundle)\n');
    return 2;
  }
  // Imported here, not at the top: registering the command must stay cheap (`blockx --help` loads every
  // command module), and these pull in grpc-js, etcd3 and pino.
  const { loadConfig } = await import('../../../kernel/config.js');
  const { createCoordinatorLogger, runCoordinator } = await import('./run-coordinator.js');
  const config = loadConfig({
    ...(opts.config === undefined ? {} : { configPath: opts.config }),
    env: io.env,
    cwd: io.cwd(),
    deployments: [opts.deployment],
  });
  const logger = createCoordinatorLogger(config, opts.deployment);
  // Its own Prometheus endpoint, as every service has (observability.prometheus.listenAddr; empty: none).
  const prometheusListen = config.observability.prometheus.listenAddr.trim();
  const running = await runCoordinator({
    config,
    deployment: opts.deployment,
    logger,
    ...(prometheusListen === '' ? {} : { prometheusListen }),
  });
  // Signal handlers only once the Coordinator runs: a config error must not leave them installed.
  const reason = await (until ?? terminationSignal());
  logger.info({ signal: String(reason) }, 'shutting down');
  await running.close();
  return 0;
}

/** Registers the command on a commander program (the shape of src/cli/commands/*). */
export function registerCoordinatorCommand(
  program: Command,
  io: CoordinatorCommandIo,
  setExit: (code: number) => void,
): void {
  program
    .command('coordinator')
    .description('run the Coordinator of one deployment')
    .option(
      '-c, --config <file>',
      'config file (default: BLOCKX_CONFIG, or blockx.config.yaml found from the cwd)',
    )
    .requiredOption('--deployment <name>', 'block | bundle')
    .action(async (opts: CoordinatorCommandOptions) => {
      setExit(await coordinatorCommand(opts, io));
    });
}

/** Resolves with the name of the first SIGINT or SIGTERM received. */
export function terminationSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];
    const on = (signal: NodeJS.Signals): void => {
      for (const s of signals) process.off(s, on);
      resolve(signal);
    };
    for (const s of signals) process.on(s, on);
  });
}
