// `blockx up` (and `npm start`): the one-machine cluster. Validates the config and plugins, starts the
// registry, a Coordinator and N Workers with their Executors, runs the demo task through the Coordinator
// (reserve → submit → watch), prints the addresses and results, then serves until SIGINT/SIGTERM.
// `--once` stops after the demo: exit 0 when it succeeded, 1 when it failed.
import type { Command } from 'commander';
import { CONFIG_FLAG, EXIT, UsageError, type CliIo } from '../io.js';

interface UpOptions {
  config?: string;
  once?: boolean;
  listen?: string;
  workers?: string;
  demo?: boolean;
}

export function registerUpCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('up')
    .description('one-machine cluster: coordinator + workers + executors, in-process registry, SQLite')
    .option(...CONFIG_FLAG)
    .option('--once', 'run the demo task, print its result and exit')
    .option('--listen <addr>', 'coordinator address (default: up.coordinatorListen)')
    .option('--workers <n>', 'number of workers (default: up.workers)')
    .option('--no-demo', 'skip the demo task')
    .action(async (opts: UpOptions) => setExit(await up(opts, io)));
}

async function up(opts: UpOptions, io: CliIo): Promise<number> {
  const flags = [];
  if (opts.workers !== undefined) {
    const n = Number(opts.workers);
    if (!Number.isInteger(n) || n < 1 || n > 64)
      throw new UsageError(`--workers must be an integer in 1..64, got ${opts.workers}`);
    flags.push({ path: ['up', 'workers'], value: n, flag: '--workers' });
  }
  if (opts.listen !== undefined) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):\d{1,5}$/.test(opts.listen))
      throw new UsageError(`--listen must be host:port, got ${opts.listen}`);
    flags.push({ path: ['up', 'coordinatorListen'], value: opts.listen, flag: '--listen' });
  }
  const [
    { bootKernelWithConfig },
    { loadConfig },
    { describePlannedService, planUp },
    { runCluster },
    { pino },
  ] = await Promise.all([
    import('../../kernel/kernel.js'),
    import('../../kernel/config.js'),
    import('../../kernel/service-plan.js'),
    import('../../kernel/run-cluster.js'),
    import('pino'),
  ]);
  const config = loadConfig({ configPath: opts.config, cwd: io.cwd(), env: io.env, flags });
  const kernel = await bootKernelWithConfig(config);
  // The console shows the cluster's own lines; service logs (JSON) go to stderr at `warn` unless the
  // user asked for a level with BLOCKX_LOG_LEVEL.
  const level = io.env.BLOCKX_LOG_LEVEL ? config.observability.logLevel : 'warn';
  const logger = pino({ level, base: { app: 'blockx-up' } }, pino.destination(2));

  const plan = planUp(config);
  io.stdout(`blockx up: deployment "${plan.deployment}" from ${config.configFile}\n`);
  for (const s of plan.services) io.stdout(`  ${describePlannedService(s)}\n`);
  const cluster = await runCluster({ kernel, logger });
  io.stdout(`coordinator listening on ${cluster.coordinatorAddress} (${cluster.registry} registry)\n`);
  cluster.workerAddresses.forEach((addr, i) => io.stdout(`worker #${i} listening on ${addr}\n`));

  let ok = true;
  try {
    if (opts.demo !== false && config.up.demo)
      ok = await runDemo(
        cluster.coordinatorAddress,
        config.deployments[plan.deployment]!.coordinator.slotTtlMs,
        io,
      );
    if (opts.once) return ok ? EXIT.OK : EXIT.FAILED;
    io.stdout('serving; press Ctrl-C to stop\n');
    await waitForSignal();
    io.stdout('stopping...\n');
    return EXIT.OK;
  } finally {
    await cluster.close();
  }
}

async function runDemo(coordinator: string, slotTtlMs: number, io: CliIo): Promise<boolean> {
  const { runTask, newTaskId } = await import('../../client/task-client.js');
  const task = {
    taskId: newTaskId(),
    functionCallConfig: {
      type: 'CallListCallConfig',
      config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
    },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    taskTimeoutMs: 30_000,
  };
  io.stdout(`demo: hello_world over CallListCallConfig → ReturnValueResultHandler (task ${task.taskId})\n`);
  const started = Date.now();
  const { update, workerAddr } = await runTask(task, {
    coordinator,
    slotTtlMs,
    signal: AbortSignal.timeout(60_000),
  });
  const result = update.result;
  const plugin = result?.executeResult.pluginResults[0];
  if (update.state === 'SUCCEEDED') {
    io.stdout(
      `demo: SUCCEEDED on ${workerAddr} in ${Date.now() - started} ms: ${JSON.stringify(plugin?.result)}\n`,
    );
    return true;
  }
  const er = result?.executeResult;
  io.stdout(
    `demo: ${update.state} on ${workerAddr}: ${er?.failureCode || update.error} (retryable=${er?.retryable}) ${er?.failureMessage ?? ''}\n`,
  );
  return false;
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.once('SIGINT', done);
    process.once('SIGTERM', done);
  });
}
