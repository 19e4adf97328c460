// bench/task-costs: the per-task CPU of a task's lifecycle, without its calls, for this build and
// optionally another beside it, alternating in one run (docs/performance.md § Per-task costs of a
// per-block backfill).
//
//   npx tsx bench/task-costs.ts [--blocks 3000] [--rounds 3] [--warmup 1] [--base DIR] [--profile DIR]
//                               [--workers 2] [--concurrency 64] [--env NAME=VALUE ...]
//
// The job is bench/backfill's "per-block, no calls" row: examples/tasks/block-table-transfers.json with
// a `where` that matches no event, one task per block over `--blocks` generated blocks on SQLite, so each
// task is admitted, scans its block, runs no call and replaces its block's rows with none in one writer
// transaction, and the client journals it and prints its line. Everything it spends is paid per task.
// Per round and build: a fresh `blockx up --workers N` of that build (bin/blockx.js of its checkout), one
// one-block job (the client's start, subtracted as bench/backfill does), `--warmup` unmeasured runs of
// the job (the cluster's code optimised, as in a cluster that has been up a while) and the measured one,
// then the cluster stops. Each job's client is a fresh process: its figure includes optimising its own
// hot paths, as every `blockx backfill` pays. CPU from /proc: `blockx up`, its Executors, and the `blockx backfill` process (reaped).
//
// `--base DIR`: a checkout with a build (DIR/bin/blockx.js → DIR/dist) to compare with, e.g. main's; the
// two builds alternate (base, this, this, base, …) on the same database, and the table ends with the
// medians and this build's ratio to the base's. `--profile DIR` records each cluster
// (COORDINATOR_CPU_PROFILE) and each job's client (Node's --cpu-prof) as DIR/<build>-<round>-up.cpuprofile
// and DIR/<build>-<round>-client/. `--env NAME=VALUE` (repeatable) is set for every `blockx up` (to see
// what a setting costs, e.g. WORKER_CAPACITY_HEARTBEAT_MS=0). `--perf DIR` runs `perf record` (Linux perf,
// on-CPU samples only) on `blockx up` and on the client for the job, both under node's --perf-basic-prof so
// JS frames have names: DIR/<build>-<round>-up.perf.data and -client.perf.data (read them with
// `perf report -i FILE --no-children --sort symbol`). A V8 sampling profile (--profile) counts the time a
// process waits to be scheduled on a busy box as time in whatever runs next; perf counts CPU alone.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO, cleanEnv, runBlockx, type CliRun } from '../test/support/cli.js';
import { freePort } from '../test/support/ports.js';
import { captureOutput, spawnTracked, stopGroup, waitForLine } from '../test/support/processes.js';
import { runBackfill, type BackfillJob, type BackfillTarget } from './lib/backfill-run.js';
import { cpuSnapshot, cpuSpent, reapedChildrenCpuMs } from './lib/proc-cpu.js';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    base: { type: 'string' },
    profile: { type: 'string' },
    perf: { type: 'string' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '64' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
/** `--env NAME=VALUE` (repeatable): more environment for every `blockx up` (a setting to compare). */
const UP_ENV: Record<string, string> = Object.fromEntries(
  (values.env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const BLOCKS = Number(values.blocks);
const ROUNDS = Number(values.rounds);
const WORKERS = Number(values.workers);
const CONCURRENCY = Number(values.concurrency);
const WARMUP = Number(values.warmup);
if (
  ![BLOCKS, ROUNDS, WORKERS, CONCURRENCY].every((n) => Number.isSafeInteger(n) && n > 0) ||
  !Number.isSafeInteger(WARMUP) ||
  WARMUP < 0
) {
  console.error(
    'usage: bench/task-costs.ts [--blocks N>0] [--rounds N>0] [--base DIR] [--profile DIR] ' +
      '[--workers N>0] [--concurrency N>0] [--warmup N>=0] [--perf DIR] [--env NAME=VALUE ...]',
  );
  process.exit(2);
}
const CHAIN = 1;
const START_TIMEOUT_MS = 90_000;
const JOB_TIMEOUT_MS = 3_600_000;

interface Build {
  readonly name: string;
  readonly dir: string;
}

interface Measured {
  readonly build: string;
  readonly round: number;
  readonly tasks: number;
  readonly failed: number;
  readonly seconds: number;
  readonly upMs: number;
  readonly executorsMs: number;
  readonly clientMs: number;
  /** The one-block job's client CPU (its start), ms. */
  readonly clientStartMs: number;
}

/** `perf record` of process `pid` into `file` until stop(). */
function perfRecord(file: string, pid: number): { stop(): Promise<void> } {
  const child = spawn('perf', ['record', '-F', '499', '-g', '-o', file, '-p', String(pid)], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    stop: async () => {
      child.kill('SIGINT');
      await exited;
    },
  };
}

/** `node DIR/bin/blockx.js ARGS` with `env` (under `perf record` into `perfFile` when given). */
function runCli(
  build: Build,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  nodeArgs: readonly string[] = [],
  perfFile?: string,
): Promise<CliRun> {
  const node = [process.execPath, ...nodeArgs, path.join(build.dir, 'bin/blockx.js')];
  const command =
    perfFile === undefined ? node : ['perf', 'record', '-F', '499', '-g', '-o', perfFile, '--', ...node];
  return runBlockx(args, { cwd: build.dir, env, command, timeoutMs: JOB_TIMEOUT_MS });
}

/** The per-block template with a `where` no event matches, in a temp file. */
function noCallsTemplate(dir: string): string {
  const template = JSON.parse(
    readFileSync(path.join(REPO, 'examples/tasks/block-table-transfers.json'), 'utf8'),
  ) as { functionCallConfig: { config: { where: Record<string, unknown> } } };
  template.functionCallConfig.config.where = { selector: `0x${'0'.repeat(64)}` };
  const file = path.join(dir, 'no-calls.json');
  writeFileSync(file, JSON.stringify(template));
  return file;
}

async function measureRound(
  build: Build,
  round: number,
  storageUrl: string,
  template: string,
): Promise<Measured> {
  const profileDir = values.profile === undefined ? undefined : path.resolve(values.profile);
  const label = `${build.name}-${round}`;
  const listen = `127.0.0.1:${await freePort()}`;
  const perfDir = values.perf === undefined ? undefined : path.resolve(values.perf);
  const nodeArgs = perfDir === undefined ? [] : ['--perf-basic-prof'];
  const up = spawnTracked(
    process.execPath,
    [
      ...nodeArgs,
      path.join(build.dir, 'bin/blockx.js'),
      'up',
      '--listen',
      listen,
      '--workers',
      String(WORKERS),
    ].concat(['--no-demo', '--no-dashboard']),
    {
      cwd: build.dir,
      env: cleanEnv({
        BLOCKX_STORAGE_URL: storageUrl,
        COORDINATOR_CPU_RED_LINE: '1',
        COORDINATOR_MEMORY_RED_LINE: '1',
        ...UP_ENV,
        ...(profileDir === undefined
          ? {}
          : { COORDINATOR_CPU_PROFILE: path.join(profileDir, `${label}-up.cpuprofile`) }),
      }),
    },
  );
  const tail = captureOutput(up);
  try {
    await waitForLine(up, /^serving; press Ctrl-C/, START_TIMEOUT_MS);
    const env = cleanEnv({ BLOCKX_STORAGE_URL: storageUrl, COORDINATOR_LISTEN: listen });
    const target = (nodeArgs: readonly string[], perfFile?: string): BackfillTarget => ({
      coordinatorAddr: listen,
      cli: (args) => runCli(build, args, env, nodeArgs, perfFile),
    });
    const job = (to: number): BackfillJob => ({
      template,
      per: 'block',
      from: 1,
      to,
      concurrency: to === 1 ? 1 : CONCURRENCY,
    });
    const startBefore = reapedChildrenCpuMs();
    await runBackfill(target([]), job(1));
    const clientStartMs = reapedChildrenCpuMs() - startBefore;
    // A long-running cluster has its hot paths optimised: V8's optimising compiler took about a third
    // of a fresh `blockx up`'s CPU over its first 3,000 tasks (perf, docs/performance.md).
    for (let w = 0; w < WARMUP; w++) await runBackfill(target([]), job(BLOCKS));
    const clientArgs = [
      ...nodeArgs,
      ...(profileDir === undefined
        ? []
        : ['--cpu-prof', '--cpu-prof-dir', path.join(profileDir, `${label}-client`)]),
    ];
    const perf =
      perfDir === undefined
        ? undefined
        : perfRecord(path.join(perfDir, `${label}-up.perf.data`), up.pid as number);
    const before = cpuSnapshot(up.pid as number);
    const clientBefore = reapedChildrenCpuMs();
    const clientPerf = perfDir === undefined ? undefined : path.join(perfDir, `${label}-client.perf.data`);
    const run = await runBackfill(target(clientArgs, clientPerf), job(BLOCKS));
    const cpu = cpuSpent(before, cpuSnapshot(up.pid as number));
    await perf?.stop();
    const clientMs = reapedChildrenCpuMs() - clientBefore - clientStartMs;
    if (run.failed > 0) console.error(`${label}: ${run.failed} failed task(s):\n${run.tail}`);
    return {
      build: build.name,
      round,
      tasks: run.tasks,
      failed: run.failed,
      seconds: run.jobSeconds,
      // `blockx up` runs each Worker in a child process: the Coordinator's and the Workers' CPU together.
      upMs: cpu.mainMs + cpu.othersMs,
      executorsMs: cpu.executorMs,
      clientMs,
      clientStartMs,
    };
  } catch (err) {
    console.error(`--- blockx up (${label}) ---\n${tail.text()}`);
    throw err;
  } finally {
    await stopGroup(up, 'SIGTERM', 15_000);
  }
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(3));

/** The figures of a row: CPU ms per task of each process, and the client's start and whole job. */
const COLUMNS: readonly { readonly head: string; readonly of: (r: Measured) => number }[] = [
  { head: '`blockx up` ms/task', of: (r) => r.upMs / r.tasks },
  { head: 'Executors ms/task', of: (r) => r.executorsMs / r.tasks },
  { head: 'client ms/task', of: (r) => r.clientMs / r.tasks },
  { head: 'all ms/task', of: (r) => (r.upMs + r.executorsMs + r.clientMs) / r.tasks },
  { head: 'client start ms', of: (r) => r.clientStartMs },
  { head: 'client whole job ms', of: (r) => r.clientStartMs + r.clientMs },
];

function report(rows: readonly Measured[], builds: readonly Build[]): void {
  const line = (cells: readonly string[]): void => console.log(`| ${cells.join(' | ')} |`);
  line(['build', 'round', 'tasks', 'failed', 'job s', ...COLUMNS.map((c) => c.head)]);
  line(['---', ...Array.from({ length: 4 + COLUMNS.length }, () => '---:')]);
  for (const r of rows)
    line([
      r.build,
      String(r.round),
      String(r.tasks),
      String(r.failed),
      r.seconds.toFixed(2),
      ...COLUMNS.map((c) => ms(c.of(r))),
    ]);
  const medians = builds.map((b) => {
    const own = rows.filter((r) => r.build === b.name);
    return { name: b.name, values: COLUMNS.map((c) => median(own.map(c.of))) };
  });
  for (const m of medians) line([m.name, 'median', '', '', '', ...m.values.map(ms)]);
  const [base, self] = medians.length === 2 ? medians : [];
  if (base !== undefined && self !== undefined)
    line([
      `${self.name} / ${base.name}`,
      'ratio',
      '',
      '',
      '',
      ...self.values.map((v, i) => `${(v / (base.values[i] as number)).toFixed(2)}×`),
    ]);
}

async function main(): Promise<void> {
  const self: Build = { name: 'this', dir: REPO };
  const builds: Build[] =
    values.base === undefined ? [self] : [{ name: 'base', dir: path.resolve(values.base) }, self];
  for (const dir of [values.profile, values.perf]) if (dir !== undefined) mkdirSync(dir, { recursive: true });
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-task-costs-'));
  try {
    const storageUrl = `sqlite:${path.join(dir, 'task-costs.db')}`;
    const generated = await runCli(
      self,
      ['data', 'generate', '--chain', String(CHAIN), '--blocks', String(BLOCKS)],
      cleanEnv({ BLOCKX_STORAGE_URL: storageUrl }),
    );
    if (generated.code !== 0)
      throw new Error(`blockx data generate exited ${generated.code}:\n${generated.stderr}`);
    const template = noCallsTemplate(dir);
    const load = loadavg()[0]?.toFixed(1);
    const rows: Measured[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which build goes first, so neither always runs on the warmer (or busier) box.
      const order = round % 2 === 1 ? builds : [...builds].reverse();
      for (const build of order) rows.push(await measureRound(build, round, storageUrl, template));
    }
    console.log(
      `\nbench/task-costs: ${BLOCKS} per-block tasks with no calls, SQLite, ${WORKERS} workers, ` +
        `concurrency ${CONCURRENCY}; load ${load} → ${loadavg()[0]?.toFixed(1)}\n`,
    );
    report(rows, builds);
    if (rows.some((r) => r.failed > 0)) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
