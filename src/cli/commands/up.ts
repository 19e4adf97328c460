// `blockx up` (and `npm start`): the one-machine cluster. Validates the config and plugins, starts the
// storage, the registry, a Coordinator and N Workers with their Executors, prints the addresses (the
// dashboard's among them: docs/dashboard.md), runs the demo backfill through the Coordinator (up-demo.ts),
// then serves until SIGINT/SIGTERM.
// `--once` stops after the demo: exit 0 when it succeeded, 1 when it failed.
// Without it, the jobs of the config (`jobs:`) are started and kept running until the process stops
// (docs/follow.md § Jobs in the config).
// COORDINATOR_CPU_PROFILE / COORDINATOR_TRACE profile this process (the Coordinator); WORKER_* ones each
// Worker child, or nothing when the Workers run in this process (up.workerProcesses false;
// docs/performance.md § Profiling).
import type { Command } from 'commander';
import type { Registry } from 'prom-client';
import type { FlagOverride } from '../../kernel/config.js';
import type { BlockxConfig, JobConfig } from '../../kernel/config-types.js';
import type { JobStatus } from '../../services/follow/adapters/job-status.js';
import { CONFIG_FLAG, EXIT, UsageError, type CliIo } from '../io.js';
import { runDemo } from './up-demo.js';

interface UpOptions {
  config?: string;
  once?: boolean;
  listen?: string;
  workers?: string;
  demo?: boolean;
  /** `--dashboard ADDR` (a string), `--no-dashboard` (false), or neither (undefined). */
  dashboard?: string | boolean;
}

export function registerUpCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('up')
    .description('one-machine cluster: coordinator + workers + executors, in-process registry, SQLite')
    .option(...CONFIG_FLAG)
    .option(
      '--once',
      'run the demo (a backfill of a generated 20-block chain into token_transfers), print its result and exit: 0 when it succeeded, 1 otherwise',
    )
    .option('--listen <addr>', 'coordinator address (default: up.coordinatorListen)')
    .option('--workers <n>', 'number of workers (default: up.workers)')
    .option('--no-demo', 'skip the demo backfill')
    .option(
      '--dashboard <addr>',
      "web dashboard address (default: observability.dashboard.listenAddr, else 127.0.0.1 at the coordinator's port + 1)",
    )
    .option('--no-dashboard', 'serve no web dashboard')
    .action(async (opts: UpOptions) => {
      const { withProfiling } = await import('../../kernel/observability/profiling.js');
      setExit(await withProfiling('coordinator', 'blockx up', io, () => up(opts, io)));
    });
}

async function up(opts: UpOptions, io: CliIo): Promise<number> {
  const flags: FlagOverride[] = [];
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
  if (typeof opts.dashboard === 'string') {
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]*):\d{1,5}$/.test(opts.dashboard))
      throw new UsageError(`--dashboard must be host:port, got ${opts.dashboard}`);
    flags.push({
      path: ['observability', 'dashboard', 'listenAddr'],
      value: opts.dashboard,
      flag: '--dashboard',
    });
  }
  const [
    { bootKernelWithConfig },
    { loadConfig },
    { describePlannedService, planUp },
    { runCluster, workersInChildren },
    { terminationSignal },
    { pino },
    { boundedPino },
    { createConfigReload, watchConfigFile },
    { LivePluginRegistry },
    { createPluginReload },
  ] = await Promise.all([
    import('../../kernel/kernel.js'),
    import('../../kernel/config.js'),
    import('../../kernel/service-plan.js'),
    import('../../app/run-cluster.js'),
    import('../../app/signals.js'),
    import('pino'),
    import('../../kernel/observability/logger.js'),
    import('../../app/config-reload.js'),
    import('../../kernel/plugin-registry.js'),
    import('../../app/plugin-reload.js'),
  ]);
  const config = loadConfig({ configPath: opts.config, cwd: io.cwd(), env: io.env, flags });
  const booted = await bootKernelWithConfig(config);
  // Plugins a config reload may load again (docs/plugins.md § Loading plugins again).
  const plugins = new LivePluginRegistry(booted.plugins);
  const kernel = { ...booted, plugins };
  // The console shows the cluster's own lines; service logs (JSON) go to stderr at `warn` unless the
  // user asked for a level with BLOCKX_LOG_LEVEL.
  const level = io.env.BLOCKX_LOG_LEVEL ? config.observability.logLevel : 'warn';
  // Secrets masked, long strings cut (docs/security.md § Logs).
  const logger = boundedPino({ level, base: { app: 'blockx-up' } }, pino.destination(2));

  if (!workersInChildren(config)) {
    const { PROFILING_VARIABLES } = await import('../../kernel/observability/profiling.js');
    for (const variable of Object.values(PROFILING_VARIABLES.worker))
      if (io.env[variable])
        io.stderr(
          `blockx up: ${variable} does not apply (the workers run in this process); ` +
            `${variable.replace('WORKER_', 'COORDINATOR_')} profiles it\n`,
        );
  }
  const plan = planUp(config);
  io.stdout(`blockx up: deployment "${plan.deployment}" from ${config.configFile}\n`);
  for (const s of plan.services) io.stdout(`  ${describePlannedService(s)}\n`);
  // The follow jobs on the dashboard: read from the job state once the job tables are opened (below).
  const jobBoard = new JobBoard();
  const cluster = await runCluster({
    kernel,
    logger,
    // Each Worker child loads the very config this process runs (docs/architecture.md § blockx up).
    workerConfig: { ...(opts.config === undefined ? {} : { configPath: opts.config }), cwd: io.cwd(), flags },
    followJobs: () => jobBoard.read(),
    ...(opts.dashboard === false ? { dashboardListen: '' } : {}),
    // An address in use is blamed on the flag that gave it, not on the config.
    ...(typeof opts.dashboard === 'string' ? { dashboardKey: '--dashboard' } : {}),
  });
  io.stdout(`coordinator listening on ${cluster.coordinatorAddress} (${cluster.registry} registry)\n`);
  cluster.workerAddresses.forEach((addr, i) => io.stdout(`worker #${i} listening on ${addr}\n`));
  io.stdout(`storage ${cluster.storage.displayUrl}\n`);
  if (cluster.metricsAddress !== '')
    io.stdout(`metrics on http://${cluster.metricsAddress}${config.observability.prometheus.path}\n`);
  if (cluster.dashboardUrl !== '') io.stdout(`dashboard  ${cluster.dashboardUrl}\n`);

  let ok = true;
  try {
    if (opts.demo !== false && config.up.demo)
      ok = await runDemo({
        coordinator: cluster.coordinatorAddress,
        kernel,
        backend: cluster.storage,
        dashboardUrl: cluster.dashboardUrl,
        once: opts.once === true,
        io,
      });
    // --once runs the demo only: a follow job never ends (docs/follow.md § Jobs in the config).
    if (opts.once) return ok ? EXIT.OK : EXIT.FAILED;
    // Listening before the line is printed: whoever waits for it may signal at once (a signal that came
    // between the two would find no handler and kill the process without its shutdown).
    const stopSignal = terminationSignal();
    const jobs = await startJobs(config, opts.config, cluster.coordinatorAddress, io, jobBoard);
    // Config changes without a restart: the file is read again when it changes, or on SIGHUP.
    const report = (level: 'info' | 'warn' | 'error', line: string): void =>
      level === 'info' ? io.stdout(`${line}\n`) : io.stderr(`${line}\n`);
    const stopWatching = watchConfigFile(
      config.configFile,
      createConfigReload({
        load: () => loadConfig({ configPath: config.configFile, cwd: io.cwd(), env: io.env, flags }),
        running: config,
        storage: cluster.storage,
        plugins: await createPluginReload({ live: plugins, running: config, report }),
        report,
      }),
    );
    const closeJobMetrics = await exportJobMetrics(
      config,
      cluster.metricsRegistryFor({ service: 'jobs', deployment: plan.deployment }),
      jobBoard,
    );
    io.stdout('serving; press Ctrl-C to stop\n');
    await stopSignal;
    stopWatching();
    io.stdout('stopping...\n');
    await jobs.stop();
    await closeJobMetrics();
    return EXIT.OK;
  } finally {
    await cluster.close();
  }
}

/**
 * Every entry of `jobs:` with a template, each kept running by a supervisor (src/cli/job-supervisor.ts)
 * against this cluster's coordinator. A job another runner holds is waited for (--wait-for-lock): the
 * cluster takes it over when that runner stops. `stop()` stops them as one Ctrl-C stops a follower (the
 * tasks in flight finish); a second SIGINT / SIGTERM meanwhile cancels those tasks.
 */
async function startJobs(
  config: BlockxConfig,
  configPath: string | undefined,
  coordinator: string,
  io: CliIo,
  board: JobBoard,
): Promise<{ stop(): Promise<void> }> {
  const names = Object.keys(config.jobs).filter((name) => config.jobs[name]?.template !== undefined);
  if (names.length === 0) return { stop: () => Promise.resolve() };
  const [{ runConfiguredJob, superviseJob }, { DEFAULT_CONCURRENCY }, { onTermination }] = await Promise.all([
    import('../job-supervisor.js'),
    import('./backfill.js'),
    import('../../app/signals.js'),
  ]);
  const stop = new AbortController();
  const cancel = new AbortController();
  const signals = { stop: stop.signal, cancel: cancel.signal };
  const settings = {
    ...(configPath === undefined ? {} : { configPath }),
    coordinator,
    concurrency: String(DEFAULT_CONCURRENCY.block),
    retries: '3',
    waitForLock: true,
  };
  const running = names.map((name) => {
    const job = config.jobs[name] as JobConfig;
    const jobIo = jobLines(name, io);
    io.stdout(`job ${name}: following ${job.template} from block ${job.from}\n`);
    let jobId: string | undefined;
    return superviseJob({
      name,
      job,
      runOnce: (hooks) => runConfiguredJob(name, job, config.baseDir, settings, jobIo, hooks),
      signals,
      observer: {
        leaseHeld: (id) => void (jobId = board.supervising(id)),
        following: (id) => void (jobId = board.supervising(id)),
      },
      onRestart: () => {
        if (jobId !== undefined) board.restarted(jobId);
      },
      io: jobIo,
    });
  });
  return {
    stop: async () => {
      stop.abort();
      const off = onTermination(() => cancel.abort());
      try {
        await Promise.all(running);
      } finally {
        off();
      }
    },
  };
}

/**
 * A job's lines on `blockx up`'s console, each prefixed with the job's name. The per-block lines and the
 * "caught up" line that follows each new block are left out (`blockx jobs list` and the dashboard show
 * where a job is); reorgs, failures, the lease and the stop are printed.
 */
function jobLines(name: string, io: CliIo): CliIo {
  const quiet = /^(block \d+ (SUCCEEDED|REMOVED)|caught up:)/;
  const prefixed =
    (write: (text: string) => void) =>
    (text: string): void => {
      for (const line of text.split('\n'))
        if (line !== '' && !quiet.test(line)) write(`job ${name}: ${line}\n`);
    };
  return { ...io, stdout: prefixed(io.stdout.bind(io)), stderr: prefixed(io.stderr.bind(io)) };
}

/**
 * The follow jobs of the storage database on the cluster's Prometheus endpoint (docs/follow.md § Watching a
 * job), read from their state at each scrape. Returns what closes the connections it keeps.
 */
async function exportJobMetrics(
  config: BlockxConfig,
  registry: Registry,
  board: JobBoard,
): Promise<() => Promise<void>> {
  const [{ JobStore }, { openJobLeases }, { readJobStatuses }, { registerFollowMetrics }, { openStorage }] =
    await Promise.all([
      import('../../services/follow/adapters/job-store.js'),
      import('../../services/follow/adapters/job-lease.js'),
      import('../../services/follow/adapters/job-status.js'),
      import('../../services/follow/adapters/follow-metrics.js'),
      import('../../services/storage/open-storage.js'),
    ]);
  const store = await JobStore.open(config.storage, config.baseDir);
  const leases = await openJobLeases(config, store.backend);
  const chain = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  const read = (): Promise<JobStatus[]> => readJobStatuses(store, leases, chain, Date.now());
  registerFollowMetrics(registry, read);
  board.readFrom(read);
  return async () => {
    board.readFrom(undefined);
    await chain.close();
    await leases.close();
    await store.close();
  };
}

/**
 * The follow jobs as the dashboard shows them (docs/dashboard.md § Follow jobs): their status, read from
 * the job state once `readFrom` is given a reader (none before the job tables are opened, nor with
 * --once), and how many times this process's supervisors restarted each one's runner.
 */
class JobBoard {
  private reader: (() => Promise<readonly JobStatus[]>) | undefined;
  private readonly restarts = new Map<string, number>();

  readFrom(reader: (() => Promise<readonly JobStatus[]>) | undefined): void {
    this.reader = reader;
  }

  /** A job this process supervises: it shows 0 restarts until its first. Returns the id. */
  supervising(jobId: string): string {
    if (!this.restarts.has(jobId)) this.restarts.set(jobId, 0);
    return jobId;
  }

  restarted(jobId: string): void {
    this.restarts.set(jobId, (this.restarts.get(jobId) ?? 0) + 1);
  }

  /** Each job's status with `restarts` (null: not supervised here), the dashboard's FollowJobView. */
  async read(): Promise<(JobStatus & { readonly restarts: number | null })[]> {
    const statuses = this.reader === undefined ? [] : await this.reader();
    return statuses.map((j) => ({ ...j, restarts: this.restarts.get(j.jobId) ?? null }));
  }
}
