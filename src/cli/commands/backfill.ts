// `blockx backfill TEMPLATE.json --from N --to M [--per block|bundle] [--coordinator ADDR | --worker ADDR]
//  [--concurrency K] [--retries R] [--json] [--state-dir DIR] [--fresh]` (docs/backfill.md)
//
// 1. Read the template (a task whose builder — and writer, if it has one — carry a block selector:
//    `block: {number}` per block, `bundle: <id>` per bundle), plan the units of [N, M], and validate the
//    task of EVERY unit against the task schema and the plugins' schemas before anything runs.
// 2. Open the job's journal (`<state dir>/<job id>.jsonl`) and skip the units it records as done.
// 3. Run the rest through BlockxClient with task-level retries (runBackfill), at most K at a time.
// 4. Print one line per unit (text, or JSON with --json) and a live progress bar on a terminal; the last
//    line is the summary — with --json the object `{"summary": {...}}`.
// Ctrl-C once: no new units, the ones in flight finish (and are journaled); twice: cancel them too.
// Exit 0 when every block succeeded (skipped ones count as succeeded), 1 otherwise, 2 on usage errors and
// when the coordinator (or worker) cannot be reached within the connect timeout (src/cli/connect.ts).
import type { Command } from 'commander';
import type {
  BackfillPer,
  BackfillPlan,
  BackfillTemplate,
  BackfillUnit,
} from '../../client/backfill/plan.js';
import type { BackfillJournal } from '../../client/backfill/journal.js';
import type { SplitPlan } from '../../client/backfill/split-plan.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { BlockxClient } from '../../client/client.js';
import type { followTaskOf as FollowTaskOfFn } from '../../client/backfill/follow-loop.js';
import type {
  BackfillEvent,
  BackfillRunOptions,
  BackfillSummary,
  UnitReport,
} from '../../client/backfill/run-backfill.js';
import type nodePath from 'node:path';
import type { SchemaIssue } from '../../kernel/errors.js';
import type { PluginRegistry } from '../../kernel/plugin-registry.js';
import type * as taskValidation from '../../kernel/task-validation.js';
import { CONFIG_FLAG, COORDINATOR_FLAG, EXIT, WORKER_FLAG, UsageError, type CliIo } from '../io.js';
import { CONNECT_TIMEOUT_FLAG, checkReachable, connectTimeout } from '../connect.js';
import { ProgressLine, formatDuration, formatRate } from '../progress.js';
import { listenForStop } from '../stop-signals.js';
import type { RunHooks } from '../job-supervisor.js';
import { clientTlsOf, coordinatorAddressFromConfig } from './status.js';
import { pemCertificateIdentity } from '../../kernel/client-identity.js';
import { oneLine, parseRetries } from './submit.js';

type PathModule = typeof nodePath;

/** The flags of how a job runs on the cluster, as commander hands them over (`backfill`, `ingest`). */
export interface JobFlags {
  coordinator?: string;
  worker?: string;
  concurrency?: string;
  retries: string;
  json?: boolean;
  stateDir: string;
  fresh?: boolean;
  connectTimeout?: string;
}

export interface BackfillOptions extends JobFlags {
  config?: string;
  from?: string;
  to?: string;
  per: string;
  follow?: boolean;
  finality?: string;
  pollInterval?: string;
  waitForLock?: boolean;
}

/** The id a template is checked under (its own task id, if any, is ignored). */
const TEMPLATE_TASK_ID = 'backfill-template';

/**
 * Units in flight by default. A bundle is a thousand blocks' work: 8 at once keep two workers busy while
 * each still finishes well inside a bundle template's task timeout; blocks are small, so 64 (`submit`'s
 * default) hide the per-task latency.
 */
export const DEFAULT_CONCURRENCY = { block: 64, bundle: 8 } as const;

/** Default `--state-dir`, relative to the current folder. */
export const DEFAULT_STATE_DIR = '.blockx/backfill';

export function registerBackfillCommand(program: Command, io: CliIo, setExit: (code: number) => void): void {
  program
    .command('backfill')
    .description('run a task template over every block (or bundle) of a range, resumably, with retries')
    .argument('<template>', 'task JSON whose builder/writer configs carry a block (or bundle) selector')
    .option(...CONFIG_FLAG)
    .requiredOption('--from <n>', 'first block of the range (inclusive)')
    .option('--to <n>', 'last block of the range (inclusive); optional with --follow')
    .option('--per <unit>', 'one task per block, or per aligned bundle (block | bundle)', 'block')
    .option(...COORDINATOR_FLAG)
    .option(...WORKER_FLAG)
    .option('--concurrency <n>', 'tasks in flight at once (default: 64 per block, 8 per bundle)')
    .option(
      '--retries <n>',
      'attempts after the first for a unit that failed retryably or lost its worker',
      '3',
    )
    .option('--json', 'one JSON object per unit; the last line is {"summary": {...}}')
    .option('--state-dir <dir>', 'where job journals live (what a rerun skips)', DEFAULT_STATE_DIR)
    .option('--fresh', "forget this job's journal and run every unit again")
    .option(...CONNECT_TIMEOUT_FLAG)
    .option('--follow', 'after the range, keep the output equal to the function over the canonical chain')
    .option('--finality <n>', 'with --follow: blocks at or below head − n are final (default 64)')
    .option('--poll-interval <ms>', 'with --follow: how often the blocks table is read (default 1000)')
    .option('--wait-for-lock', 'with --follow: wait while another runner holds the job (default: exit 1)')
    .addHelpText(
      'after',
      `
Examples:
  blockx backfill examples/tasks/block-table-transfers.json --from 1 --to 10000
  blockx backfill examples/tasks/bundle-transfers.json --from 1 --to 10000 --per bundle --json
  blockx backfill examples/tasks/block-table-transfers.json --from 1 --follow --finality 64`,
    )
    .action(async (template: string, opts: BackfillOptions) => setExit(await backfill(template, opts, io)));
}

/**
 * The flags every block job shares (backfill, ingest): tasks in flight (default per `per`), retries per
 * task, and the time allowed to reach the cluster.
 */
export async function runFlags(
  opts: { concurrency?: string | undefined; retries: string; connectTimeout?: string | undefined },
  per: BackfillPer,
  io: CliIo,
): Promise<{ concurrency: number; retries: number; connectTimeoutMs: number }> {
  return {
    concurrency: integerFlag(
      '--concurrency',
      opts.concurrency ?? String(DEFAULT_CONCURRENCY[per]),
      1,
      100_000,
    ),
    retries: parseRetries(opts.retries),
    connectTimeoutMs: await connectTimeout(opts.connectTimeout, io),
  };
}

export function integerFlag(
  name: string,
  text: string | undefined,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = Number(text);
  if (text === undefined || text.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${name} must be an integer in ${min}..${max}, got ${text ?? '(none)'}`);
  }
  return n;
}

/**
 * `blockx backfill TEMPLATE …` with its flags parsed by commander (also `blockx jobs run NAME` and the jobs
 * `blockx up` keeps running, which pass the stop signals of their supervisor: src/cli/job-supervisor.ts).
 */
export async function backfill(
  templatePath: string,
  opts: BackfillOptions,
  io: CliIo,
  extra: { readonly follow?: RunHooks } = {},
): Promise<number> {
  if (opts.coordinator !== undefined && opts.worker !== undefined) {
    throw new UsageError('give --coordinator or --worker, not both');
  }
  if (opts.per !== 'block' && opts.per !== 'bundle') {
    throw new UsageError(`--per must be block or bundle, got ${opts.per}`);
  }
  const per: BackfillPer = opts.per;
  const from = integerFlag('--from', opts.from, 0, Number.MAX_SAFE_INTEGER);
  if (opts.follow === true && per !== 'block')
    throw new UsageError('--follow runs per block: drop --per bundle');
  if (opts.to === undefined && opts.follow !== true) {
    throw new UsageError("required option '--to <n>' not specified");
  }
  const to = opts.to === undefined ? from : integerFlag('--to', opts.to, 0, Number.MAX_SAFE_INTEGER);
  const { concurrency, retries, connectTimeoutMs } = await runFlags(opts, per, io);

  const [{ readTaskSources }, { bootKernel }, { validateTaskInput, normalizeTaskInput }] = await Promise.all([
    import('../../client/task-files.js'),
    import('../../kernel/kernel.js'),
    import('../../kernel/task-validation.js'),
  ]);
  const read = readTaskSources([templatePath], { cwd: io.cwd() });
  const problem = read.problems[0];
  if (problem !== undefined) {
    io.stderr(`${problem.where}: ${problem.message}\n`);
    return EXIT.FAILED;
  }
  const json = read.tasks[0]?.json;
  if (!isRecord(json)) {
    io.stderr(`${templatePath}: the template must be one JSON task object\n`);
    return EXIT.FAILED;
  }
  const kernel = await bootKernel({ configPath: opts.config, cwd: io.cwd(), env: io.env });
  const template = templateOf(json, kernel, templatePath, io, { validateTaskInput, normalizeTaskInput });
  if (template === undefined) return EXIT.FAILED;
  return runBlockJob({
    command: 'backfill',
    where: templatePath,
    template,
    range: { from, to },
    per,
    run: { ...opts, concurrency, retries, connectTimeoutMs },
    kernel,
    io,
    ...(opts.follow
      ? {
          follow: {
            ...(opts.finality === undefined ? {} : { finality: opts.finality }),
            ...(opts.pollInterval === undefined ? {} : { pollInterval: opts.pollInterval }),
            waitForLock: opts.waitForLock === true,
            ...(extra.follow === undefined ? {} : { hooks: extra.follow }),
          },
        }
      : {}),
  });
}

/** The task checks a template goes through (loaded lazily by the commands). */
type TemplateChecks = Pick<typeof taskValidation, 'validateTaskInput' | 'normalizeTaskInput'>;

/**
 * A template checked and normalised like any task, under a stand-in id (its own task id, if any, is
 * ignored); undefined, with every problem printed, when it is invalid. `blockx up`'s demo uses it too.
 */
export function templateOf(
  json: Record<string, unknown>,
  kernel: Kernel,
  where: string,
  io: CliIo,
  checks: TemplateChecks,
): BackfillTemplate | undefined {
  const { task_id: _id, taskId: _alias, ...body } = json;
  const asTask = { ...body, task_id: TEMPLATE_TASK_ID };
  const issues = checks.validateTaskInput(asTask, kernel.plugins);
  if (issues.length > 0) {
    for (const i of issues) io.stderr(`${where}: ${i.path || '/'}: ${i.message} (rule: ${i.rule})\n`);
    io.stderr('invalid: nothing submitted\n');
    return undefined;
  }
  const { taskId: _standIn, ...template } = checks.normalizeTaskInput(asTask);
  return template;
}

/** How a job runs: the flags `blockx backfill` and `blockx ingest` share, parsed. */
export interface BlockJobRunOptions {
  readonly coordinator?: string;
  readonly worker?: string;
  readonly concurrency: number;
  readonly retries: number;
  readonly json?: boolean;
  readonly stateDir: string;
  readonly fresh?: boolean;
  readonly connectTimeoutMs: number;
}

export interface BlockJob {
  /** The command, in messages and the summary line (`backfill`, `ingest`). */
  readonly command: string;
  /** Where the template came from, in messages about it. */
  readonly where: string;
  readonly template: BackfillTemplate;
  readonly range: { readonly from: number; readonly to: number };
  readonly per: BackfillPer;
  readonly run: BlockJobRunOptions;
  readonly kernel: Kernel;
  readonly io: CliIo;
  /** Keep the output current after the range (`backfill --follow`, docs/follow.md). */
  readonly follow?: FollowFlags;
  /** A failure that is the job's, not a unit's: the first one stops the run (BackfillRunOptions.stopOn). */
  readonly stopOn?: BackfillRunOptions['stopOn'];
  /**
   * Run the whole aligned bundles of a range of more than `longerThan` blocks as bundle tasks and its edges
   * per block (`blockx ingest`, src/client/backfill/split-plan.ts): `template` is the per-block one (per
   * `block`). A shorter range, or one that holds no whole bundle, runs per block.
   */
  readonly split?: {
    readonly bundleTemplate: BackfillTemplate;
    readonly bundleSize: number;
    readonly longerThan: number;
  };
}

/** The --follow flags, as given. */
export interface FollowFlags {
  readonly finality?: string;
  readonly pollInterval?: string;
  readonly waitForLock: boolean;
  /** A supervisor's stop signals (in place of the process's SIGINT / SIGTERM) and observer. */
  readonly hooks?: RunHooks;
}

/**
 * Plans a job over a range, validates every unit's task, then runs it through the cluster with the job's
 * journal, printing a line per unit and the summary: steps 1 (after the template) to 4 above. `blockx
 * ingest` runs its jobs through here too (docs/ingest.md § On the cluster).
 */
export async function runBlockJob(job: BlockJob): Promise<number> {
  const { template, per, kernel, io, where: templatePath } = job;
  const { from, to } = job.range;
  const opts = job.run;
  const { concurrency, retries } = opts;
  const [plans, splits, path, { validateTaskInput }, { storageIdentity, maskStorageUrl }] = await Promise.all(
    [
      import('../../client/backfill/plan.js'),
      import('../../client/backfill/split-plan.js'),
      import('node:path'),
      import('../../kernel/task-validation.js'),
      import('../../services/storage/open-storage.js'),
    ],
  );
  // The rows go to the configured storage (BLOCKX_STORAGE_URL applied): part of the job's identity, so a
  // journal of one database never skips units of another (docs/backfill.md § Resuming).
  const storage = storageIdentity(kernel.config.storage.url, kernel.config.baseDir);
  let plan: BackfillPlan;
  let split: SplitPlan | undefined;
  try {
    split =
      job.split === undefined || to - from + 1 <= job.split.longerThan
        ? undefined
        : splits.planSplit({ ...job.split, blockTemplate: template, from, to, storage });
    plan = split ?? plans.planBackfill({ template, from, to, per, storage });
  } catch (err) {
    if (err instanceof plans.BackfillPlanError) {
      if (err.where.startsWith('--')) throw new UsageError(err.message);
      io.stderr(`${templatePath}: ${err.where}: ${err.message}\n`);
      return EXIT.FAILED;
    }
    throw err;
  }
  const invalid = job.follow
    ? validateFollowTasks(
        template,
        (await import('../../client/backfill/follow-loop.js')).followTaskOf,
        kernel.plugins.writers,
        (json) => validateTaskInput(json, kernel.plugins),
        templatePath,
        from,
      )
    : validateUnits(plan, (json) => validateTaskInput(json, kernel.plugins), templatePath);
  if (invalid.length > 0) {
    for (const line of invalid) io.stderr(`${line}\n`);
    io.stderr('invalid: nothing submitted\n');
    return EXIT.FAILED;
  }

  const { FileJournal, JournalOwnerError } = await import('../../client/backfill/journal.js');
  const config = kernel.config;
  // The journal first: a run of another identity is refused before anything is dialled (exit 2). A split
  // plan keeps one journal per part, each its own job's.
  let files: InstanceType<typeof FileJournal>[] = [];
  let journal: BackfillJournal | undefined;
  if (!job.follow) {
    const parts: [BackfillPlan, BackfillPer, BackfillTemplate][] =
      split === undefined
        ? [[plan, per, template]]
        : [
            [split.parts.block, 'block', template],
            [split.parts.bundle, 'bundle', job.split?.bundleTemplate ?? template],
          ];
    try {
      files = parts.map(
        ([part, partPer, partTemplate]) =>
          new FileJournal(
            path.resolve(io.cwd(), opts.stateDir),
            {
              jobId: part.jobId,
              per: partPer,
              template: partTemplate,
              storage: maskStorageUrl(config.storage.url),
              ...clientIdentityOf(config),
            },
            { fresh: opts.fresh === true },
          ),
      );
    } catch (err) {
      if (!(err instanceof JournalOwnerError)) throw err;
      io.stderr(`${job.command}: ${err.message}\n`);
      return EXIT.USAGE;
    }
    for (const f of files.filter((j) => j.shortRunId)) {
      io.stderr(
        `${job.command}: warning: the journal ${f.file} has the short run tag ${f.runId} of an older blockx: ` +
          'its task ids can be guessed and taken first by another client; when this job is done, rerun with --fresh for a 128-bit tag\n',
      );
    }
    const [first, second] = files as [InstanceType<typeof FileJournal>, InstanceType<typeof FileJournal>];
    journal = first;
    if (split !== undefined) {
      const journals = { block: first, bundle: second };
      journal = splits.splitJournal(split, journals);
      plan = split.withRuns({ block: first.runId, bundle: second.runId });
    }
  }
  const closeJournals = (): void => files.forEach((f) => f.close());
  const client = await connectJobClient(kernel, opts, job.command, io);
  if (typeof client === 'number') {
    closeJournals();
    return client;
  }

  if (job.follow) {
    const { followJob } = await import('./backfill-follow.js');
    try {
      return await followJob(
        client,
        {
          ...job.follow,
          template,
          backfillJobId: plan.jobId,
          from,
          concurrency,
          retries,
          json: opts.json === true,
          config,
        },
        io,
      );
    } finally {
      client.close();
    }
  }

  if (journal === undefined) throw new Error('unreachable: a backfill without --follow has a journal');
  const { stop, cancel, release } = listenForStop(io, job.command);

  const unitName = split !== undefined ? 'tasks' : per === 'block' ? 'blocks' : 'bundles';
  const progress =
    io.isTTY && !opts.json ? new ProgressLine((s) => io.stdout(s), plan.units.length) : undefined;
  const counts = {
    total: plan.units.length,
    succeeded: 0,
    failed: 0,
    running: 0,
    skipped: 0,
    rows: 0,
    sameJobFailure: 0,
  };
  const emit = (line: string): void => (progress ? progress.print(line) : io.stdout(line));
  let summary: BackfillSummary | undefined;
  try {
    const events = client.backfill(plan, {
      concurrency,
      retries,
      journal,
      stop: stop.signal,
      signal: cancel.signal,
      ...(job.stopOn ? { stopOn: job.stopOn } : {}),
      // Why the dashboard lags or lacks this job (docs/dashboard-data.md § Backfill jobs), said once.
      warn: (m: string, f: Record<string, unknown>) =>
        io.stderr(`blockx: warning: ${m} ${JSON.stringify(f)}\n`),
    });
    for await (const e of events) {
      summary = onEvent(e, { per, json: opts.json === true, emit, counts, plan }) ?? summary;
      progress?.update({
        ...counts,
        running: Math.max(
          0,
          Math.min(concurrency, counts.total - counts.succeeded - counts.failed - counts.skipped),
        ),
        unit: unitName,
      });
    }
  } finally {
    release();
    progress?.finish();
    client.close();
    closeJournals();
  }
  if (summary === undefined) return EXIT.FAILED;
  if (summary.stoppedBy !== undefined) {
    const more =
      counts.sameJobFailure > 1 ? ` (${counts.sameJobFailure - 1} more in flight failed the same way)` : '';
    io.stderr(`blockx ${job.command}: stopped, nothing more started: ${oneLine(summary.stoppedBy)}${more}\n`);
  }
  io.stdout(
    opts.json
      ? `${JSON.stringify({ summary })}\n`
      : `${summaryLine(
          job.command,
          summary,
          files.map((f) => f.file),
          io.cwd(),
          path,
        )}\n`,
  );
  const allDone = summary.failed === 0 && summary.remaining === 0;
  return allDone ? EXIT.OK : EXIT.FAILED;
}

/**
 * Who this process is to the services (its TLS certificate's identity, docs/security.md § Roles), for the
 * journal's owner; nothing without TLS.
 */
function clientIdentityOf(config: Kernel['config']): { client?: string } {
  const { tls } = clientTlsOf(config);
  const identity = tls === undefined ? undefined : pemCertificateIdentity(tls.cert);
  return identity === undefined ? {} : { client: identity };
}

/**
 * The client a job's tasks go through (--worker, else --coordinator or the config's), checked reachable
 * within --connect-timeout; an unreachable target is said and its exit code returned.
 */
export async function connectJobClient(
  kernel: Kernel,
  run: Pick<BlockJobRunOptions, 'coordinator' | 'worker' | 'connectTimeoutMs'>,
  command: string,
  io: CliIo,
): Promise<BlockxClient | number> {
  const [{ BlockxClient }, { dialAddress }, { CLI_REUSE_SLOTS }] = await Promise.all([
    import('../../client/client.js'),
    import('../../client/address.js'),
    import('../../client/options.js'),
  ]);
  const config = kernel.config;
  const slotTtlMs = config.deployments[config.up.deployment]?.coordinator.slotTtlMs ?? 5_000;
  const target =
    run.worker !== undefined
      ? { worker: dialAddress(run.worker) }
      : { coordinator: dialAddress(run.coordinator ?? coordinatorAddressFromConfig(config, io.env)) };
  const tls = clientTlsOf(config);
  const client = new BlockxClient({ ...target, slotTtlMs, reuseSlots: CLI_REUSE_SLOTS, ...tls });
  const unreachable = await checkReachable(
    client,
    {
      command,
      timeoutMs: run.connectTimeoutMs,
      tls: tls.tls !== undefined,
      ...(tls.tls ? { tlsMaterial: tls.tls } : {}),
    },
    io,
  );
  if (unreachable === undefined) return client;
  client.close();
  return unreachable;
}

interface EventSink {
  readonly per: BackfillPer;
  readonly json: boolean;
  readonly emit: (line: string) => void;
  readonly counts: {
    succeeded: number;
    failed: number;
    skipped: number;
    rows: number;
    /** Units that failed the job's way (`jobFailure`): only the first is listed in text mode. */
    sameJobFailure: number;
  };
  readonly plan: BackfillPlan;
}

function onEvent(e: BackfillEvent, sink: EventSink): BackfillSummary | undefined {
  switch (e.type) {
    case 'start':
      return undefined;
    case 'retry':
      if (!sink.json) {
        sink.emit(
          `${unitLabel(sink.per, e.unit)} retry ${e.attempt + 1} in ${formatDuration(e.delayMs)} ` +
            `(${e.reason}: ${oneLine(e.failure)})\n`,
        );
      }
      return undefined;
    case 'unit':
      if (e.state === 'SUCCEEDED') sink.counts.succeeded++;
      else if (e.state === 'FAILED') sink.counts.failed++;
      else sink.counts.skipped++;
      sink.counts.rows += e.rows ?? 0;
      if (e.jobFailure !== undefined) sink.counts.sameJobFailure++;
      // Skipped units are counted, not listed, in text mode: a resumed job would print thousands of lines;
      // nor are the units after the first that failed the job's way (the run says it once when it stops).
      if (sink.json) sink.emit(`${JSON.stringify(unitJson(sink.per, e))}\n`);
      else if (e.state !== 'SKIPPED' && (e.jobFailure === undefined || sink.counts.sameJobFailure === 1)) {
        sink.emit(unitText(sink.per, e));
      }
      return undefined;
    case 'summary':
      return e.summary;
    default: {
      const _exhaustive: never = e;
      throw new Error(`unknown backfill event ${JSON.stringify(_exhaustive)}`);
    }
  }
}

/** A unit's kind and key: its own in a plan of blocks and bundles (`part`), else the job's. */
function unitIs(jobPer: BackfillPer, unit: BackfillUnit): { per: BackfillPer; key: number } {
  return unit.part ?? { per: jobPer, key: unit.key };
}

function unitLabel(jobPer: BackfillPer, unit: BackfillUnit): string {
  const { per, key } = unitIs(jobPer, unit);
  return per === 'block' ? `block ${key}` : `bundle ${key}`;
}

function unitText(jobPer: BackfillPer, e: UnitReport): string {
  const label = unitLabel(jobPer, e.unit);
  if (e.state === 'SUCCEEDED') {
    const rows = e.rows === undefined ? '' : ` ${e.rows} rows`;
    const tries = e.attempts > 1 ? ` (attempt ${e.attempts})` : '';
    return `${label} SUCCEEDED${rows}${tries}\n`;
  }
  return `${label} FAILED ${e.failureCode} ${oneLine(e.failureMessage) || '-'} (${e.attempts} attempt(s), ${e.gaveUp ?? 'failed'})\n`;
}

function unitJson(jobPer: BackfillPer, e: UnitReport): Record<string, unknown> {
  const { per, key } = unitIs(jobPer, e.unit);
  return {
    ...(per === 'block'
      ? { block: key }
      : { bundle: key, fromBlock: e.unit.firstBlock, toBlock: e.unit.lastBlock }),
    state: e.state,
    taskId: e.taskId,
    attempts: e.attempts,
    rows: e.rows ?? null,
    workerAddr: e.workerAddr,
    failureCode: e.failureCode,
    failureMessage: e.failureMessage,
    ...(e.gaveUp === undefined ? {} : { gaveUp: e.gaveUp }),
    ...(e.jobFailure === undefined ? {} : { jobFailure: e.jobFailure }),
    durationMs: e.durationMs,
  };
}

function summaryLine(
  command: string,
  s: BackfillSummary,
  journalFiles: readonly string[],
  cwd: string,
  path: PathModule,
): string {
  const rate = s.seconds > 0 ? (s.succeeded + s.failed) / s.seconds : 0;
  const shown = journalFiles.map((file) => {
    const rel = path.relative(cwd, file);
    return rel.startsWith('..') ? file : rel;
  });
  const parts = [
    `${command} ${s.jobId}: ${s.blocks} block(s): ${s.succeeded} succeeded, ${s.failed} failed, ${s.skipped} skipped`,
  ];
  if (s.remaining > 0) parts.push(`${s.remaining} not run (interrupted: rerun the same command to resume)`);
  parts.push(
    `${s.attempts} attempt(s), ${s.rows} rows in ${formatDuration(s.seconds * 1000)} ` +
      `(${formatRate(rate)} blocks/s); journal${shown.length > 1 ? 's' : ''} ${shown.join(' and ')}`,
  );
  return parts.join('; ');
}

/** Every unit's task validated; the first problems, each naming its unit and the rule. */
function validateUnits(
  plan: BackfillPlan,
  validate: (json: unknown) => readonly SchemaIssue[],
  where: string,
): string[] {
  const lines: string[] = [];
  let invalidUnits = 0;
  for (const unit of plan.units) {
    const task = plan.taskOf(unit);
    const json = {
      task_id: plan.taskIdOf(unit, 1, '000000'),
      functionCallConfig: task.functionCallConfig,
      ...(task.resultHandler ? { resultHandler: task.resultHandler } : {}),
      ...(task.taskTimeoutMs ? { taskTimeoutMs: task.taskTimeoutMs } : {}),
    };
    const issues = validate(json);
    if (issues.length === 0) continue;
    invalidUnits++;
    if (lines.length < 20) {
      for (const i of issues) {
        lines.push(
          `${where} (${unitLabel(plan.per, unit)}): ${i.path || '/'}: ${i.message} (rule: ${i.rule})`,
        );
      }
    }
  }
  if (invalidUnits > 1) lines.push(`${invalidUnits} unit(s) invalid`);
  return lines;
}

type FollowTaskOf = typeof FollowTaskOfFn;

/** With --follow: the task of a height (by block hash) and of a removal, checked like any task. */
function validateFollowTasks(
  template: BackfillTemplate,
  followTaskOf: FollowTaskOf,
  writers: PluginRegistry['writers'],
  validate: (json: unknown) => readonly SchemaIssue[],
  where: string,
  from: number,
): string[] {
  const writerType = template.resultHandler?.type;
  if (writerType === undefined) return [`${where}: --follow needs a block writer (resultHandler)`];
  // Every write of a follow job is fenced (docs/follow.md § Fencing): a writer that cannot check its
  // runner's term is refused here, before anything runs. An unknown type is left to the checks below.
  const writer = writers.get(writerType);
  if (writer !== undefined && !writer.accepts.includes('fence')) {
    return [
      `${where}: --follow needs a writer that accepts a fence, and the writer ${writerType} ` +
        `(${writer.name} at ${writer.packagePath}) does not: a follow job's runner sends every write its ` +
        `fence {jobId, term}; a writer that follows declares "accepts": ["fence"] in the blockx field of ` +
        `its package.json and calls tx.checkFence(config.fence) first in its transaction ` +
        `(docs/plugins.md § Writers that follow)`,
    ];
  }
  const lines: string[] = [];
  const sampleHash = `0x${'0'.repeat(64)}`;
  for (const [label, hash] of [
    ['a block by hash', sampleHash],
    ['a removal', null],
  ] as const) {
    const task = followTaskOf(template, from, hash, { jobId: 'fl-check', term: 1 });
    const issues = validate({ task_id: 'follow-check', ...task });
    for (const i of issues) {
      lines.push(`${where} (--follow, ${label}): ${i.path || '/'}: ${i.message} (rule: ${i.rule})`);
    }
  }
  return lines;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
