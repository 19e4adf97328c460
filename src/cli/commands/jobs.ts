// `blockx jobs list | show ID | stop ID` (docs/follow.md § Jobs): the jobs whose state lives in the
// configured storage database (BLOCKX_STORAGE_URL applied) — today the follow jobs of
// `blockx backfill --follow`. `stop` asks the job's runner to stop (it finishes its tasks in flight and
// exits 0); a job nobody runs is only marked stopped.
import type { Command } from 'commander';
import type { JobRecord, JobStore } from '../../services/follow/adapters/job-store.js';
import type { JobLeases, LeaseHolder } from '../../services/follow/adapters/job-lease.js';
import { CONFIG_FLAG, COORDINATOR_FLAG, EXIT, UsageError, type CliIo } from '../io.js';
import { renderTable } from '../table.js';
import { loadCliConfig } from './db.js';
import { DEFAULT_CONCURRENCY } from './backfill.js';

interface JobsOptions {
  config?: string;
  json?: boolean;
}

export function registerJobsCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  const jobs = program
    .command('jobs')
    .description('list, show and stop the jobs kept in the storage database (backfill --follow)');
  jobs
    .command('list')
    .description('every job: state, cursor, head, lag, reorgs, who runs it')
    .option(...CONFIG_FLAG)
    .option('--json', 'one JSON object per job')
    .action(async (opts: JobsOptions) => setExit(await list(opts, io)));
  jobs
    .command('show')
    .description('one job: what it runs and where it is')
    .argument('<id>', 'the job id (fl-…)')
    .option(...CONFIG_FLAG)
    .action(async (id: string, opts: JobsOptions) => setExit(await show(id, opts, io)));
  jobs
    .command('run')
    .description('run a job of the config (jobs.<name>): its template from its first block, followed')
    .argument('<name>', 'the job, as named under jobs: in the config')
    .option(...CONFIG_FLAG)
    .option(...COORDINATOR_FLAG)
    .option('--concurrency <n>', 'heights in flight at once', String(DEFAULT_CONCURRENCY.block))
    .option('--retries <n>', 'attempts after the first, per height', '3')
    .option('--wait-for-lock', 'wait while another runner holds the job (default: exit 1)')
    .option('--json', 'one JSON object per event; the last line is {"summary": {...}}')
    .action(async (name: string, opts: JobsRunOptions) => setExit(await run(name, opts, io)));
  jobs
    .command('stop')
    .description("ask a job's runner to stop after its tasks in flight")
    .argument('<id>', 'the job id (fl-…)')
    .option(...CONFIG_FLAG)
    .action(async (id: string, opts: JobsOptions) => setExit(await stop(id, opts, io)));
}

interface JobsRunOptions extends JobsOptions {
  coordinator?: string;
  concurrency: string;
  retries: string;
  waitForLock?: boolean;
}

/**
 * `jobs.<name>` of the config, run as `blockx backfill TEMPLATE --from N --follow` would run it, and run
 * again with backoff when it fails (src/cli/job-supervisor.ts) until it is asked to stop.
 */
async function run(name: string, opts: JobsRunOptions, io: CliIo): Promise<number> {
  const config = await loadCliConfig(opts.config, io);
  const job = config.jobs[name];
  if (job === undefined) {
    const names = Object.keys(config.jobs);
    throw new UsageError(
      `no job ${name} under jobs: in the config` + (names.length > 0 ? ` (it has ${names.join(', ')})` : ''),
    );
  }
  if (job.template === undefined) throw new UsageError(`jobs.${name}.template is not set`);
  const [{ runConfiguredJob, superviseJob }, { listenForStop }] = await Promise.all([
    import('../job-supervisor.js'),
    import('../stop-signals.js'),
  ]);
  const settings = {
    ...(opts.config === undefined ? {} : { configPath: opts.config }),
    ...(opts.coordinator === undefined ? {} : { coordinator: opts.coordinator }),
    concurrency: opts.concurrency,
    retries: opts.retries,
    ...(opts.json ? { json: true } : {}),
    ...(opts.waitForLock ? { waitForLock: true } : {}),
  };
  const { stop, cancel, release } = listenForStop(io, `jobs run ${name}`);
  try {
    return await superviseJob({
      name,
      job,
      runOnce: (hooks) => runConfiguredJob(name, job, config.baseDir, settings, io, hooks),
      signals: { stop: stop.signal, cancel: cancel.signal },
      // Without --wait-for-lock, a job another runner holds is not ours to wait for: exit 1 as backfill does.
      exitWhenHeld: opts.waitForLock !== true,
      io,
    });
  } finally {
    release();
  }
}

interface JobView {
  readonly record: JobRecord;
  readonly runner: LeaseHolder | undefined;
}

/** The job store and the job leases (etcd's when configured) of the configured storage database. */
interface Jobs {
  readonly store: JobStore;
  readonly leases: JobLeases;
}

async function withJobs<T>(
  opts: JobsOptions,
  io: CliIo,
  fn: (jobs: Jobs, now: number) => Promise<T>,
): Promise<T> {
  const config = await loadCliConfig(opts.config, io);
  const [{ JobStore }, { openJobLeases }] = await Promise.all([
    import('../../services/follow/adapters/job-store.js'),
    import('../../services/follow/adapters/job-lease.js'),
  ]);
  const store = await JobStore.open(config.storage, config.baseDir);
  try {
    const leases = await openJobLeases(config, store.backend);
    try {
      return await fn({ store, leases }, Date.now());
    } finally {
      await leases.close();
    }
  } finally {
    await store.close();
  }
}

async function viewOf(jobs: Jobs, record: JobRecord, now: number): Promise<JobView> {
  return { record, runner: await jobs.leases.holderOf(record.jobId, now) };
}

function jsonOf(v: JobView): Record<string, unknown> {
  const r = v.record;
  return {
    jobId: r.jobId,
    kind: r.kind,
    state: v.runner === undefined && r.state === 'running' ? 'stopped' : r.state,
    runner: v.runner?.info ?? null,
    cursor: r.cursor,
    head: r.head,
    lagBlocks: r.head === null ? null : Math.max(0, r.head - r.cursor + 1),
    reorgs: r.reorgs,
    deepestReorg: r.deepestReorg,
    lastError: r.lastError,
    updatedAt: new Date(r.updatedMs).toISOString(),
    spec: r.spec,
  };
}

async function list(opts: JobsOptions, io: CliIo): Promise<number> {
  const views = await withJobs(opts, io, async (jobs, now) =>
    Promise.all((await jobs.store.list()).map((r) => viewOf(jobs, r, now))),
  );
  if (opts.json) {
    for (const v of views) io.stdout(`${JSON.stringify(jsonOf(v))}\n`);
    return EXIT.OK;
  }
  if (views.length === 0) {
    io.stdout('no jobs in this storage database\n');
    return EXIT.OK;
  }
  const rows = views.map((v) => {
    const j = jsonOf(v);
    return {
      job: v.record.jobId,
      state: String(j.state),
      chain: String(v.record.spec.chainId),
      cursor: String(v.record.cursor),
      head: v.record.head === null ? '-' : String(v.record.head),
      lag: j.lagBlocks === null ? '-' : String(j.lagBlocks),
      reorgs: `${v.record.reorgs} (deepest ${v.record.deepestReorg})`,
      runner: v.runner?.info ?? '-',
      'last error': v.record.lastError ?? '',
    };
  });
  io.stdout(
    renderTable(['job', 'state', 'chain', 'cursor', 'head', 'lag', 'reorgs', 'runner', 'last error'], rows),
  );
  return EXIT.OK;
}

async function show(id: string, opts: JobsOptions, io: CliIo): Promise<number> {
  const view = await withJobs(opts, io, async (jobs, now) => {
    const r = await jobs.store.get(id);
    return r === undefined ? undefined : viewOf(jobs, r, now);
  });
  if (view === undefined) {
    io.stderr(`blockx jobs: no job ${id} in this storage database (blockx jobs list shows them)\n`);
    return EXIT.FAILED;
  }
  io.stdout(`${JSON.stringify(jsonOf(view), null, 2)}\n`);
  return EXIT.OK;
}

async function stop(id: string, opts: JobsOptions, io: CliIo): Promise<number> {
  return withJobs(opts, io, async (jobs, now) => {
    const { store } = jobs;
    const record = await store.get(id);
    if (record === undefined) {
      io.stderr(`blockx jobs: no job ${id} in this storage database (blockx jobs list shows them)\n`);
      return EXIT.FAILED;
    }
    const { runner } = await viewOf(jobs, record, now);
    if (runner === undefined) {
      if (record.state === 'running') await store.update(id, { state: 'stopped' });
      io.stdout(
        `job ${id} is not running (state ${record.state === 'running' ? 'stopped' : record.state})\n`,
      );
      return EXIT.OK;
    }
    await store.requestStop(id);
    io.stdout(`asked job ${id} to stop: its runner (${runner.info}) stops after its tasks in flight\n`);
    return EXIT.OK;
  });
}
