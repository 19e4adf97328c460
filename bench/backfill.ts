// bench/backfill: BlockX's main job against what a user would write instead (docs/performance.md § The
// backfill floor). A generated chain (`blockx data generate`, 3,000 blocks by default) is backfilled into
// token_transfers on a fresh SQLite file and on a PostgreSQL server the bench starts
// (test/support/postgres.ts), three ways, in one run on the same blocks:
//
//   npx tsx bench/backfill.ts [--blocks 3000] [--storage sqlite|postgres] [--workers 2]
//                             [--concurrency 64] [--bundle-concurrency WORKERS] [--per block|bundle]
//                             [--profile DIR]
//   npm run bench -- --only backfill        (both storages, the defaults)
//
//   floor              bench/lib/backfill-floor*.ts: one process, the raw driver (better-sqlite3 / pg), block
//                      after block: the canonical block's Transfer events, decoded as
//                      functions/erc20_transfers.ts does, the block's token_transfers rows replaced in one
//                      transaction. It imports nothing from src/: it is the baseline.
//   blockx per-block   `blockx backfill examples/tasks/block-table-transfers.json --per block` through the
//                      built CLI against `blockx up --workers 2` (bench/lib/backfill-up.ts): one task per
//                      block (BlockTableCallConfig → erc20_transfers → BlockWriteResultHandler).
//   blockx per-bundle  `blockx backfill examples/tasks/bundle-transfers.json --per bundle`: one task per
//                      aligned bundle of 1,000 blocks (BlockBundleCallConfig → BlockBundleWriteResultHandler).
//   per-block, no calls  the per-block job with a `where` no event matches: each task scans, runs no call
//                      and writes its block's (no) rows; what it costs is the path's per-task cost.
//
// token_transfers is cleared before each run. After each BlockX run the table must equal the floor's —
// same row count and the same SHA-256 over every row in key order (bench/lib/backfill-table.ts) — with
// 0 failed tasks, or the bench exits 1. `throughput blockx/floor` = floor seconds / BlockX seconds on
// the same blocks (≥ 1: BlockX was faster). Seconds are the job's own (the summary's `seconds`; the
// floor's clock likewise starts with its connection open); `command s` is the CLI's wall time, node
// start included. CPU (bench/lib/proc-cpu.ts, /proc/<pid>/stat, 10 ms ticks) is per block and per call
// (a call = one event decoded, the count the floor made): `main` is the floor's process on the floor
// row and the `blockx up` processes on BlockX rows (the Coordinator's, and each Worker's: `up` runs each
// Worker in a child process of its own, docs/architecture.md); `executors` are the Workers' children
// (one Executor per Worker; bench/lib/proc-cpu.ts tells them by their command line); `client` is the `blockx backfill` process (what the bench reaps of it) less
// its start, measured as a one-block job's CPU; `CPU ms/task` adds the three over the tasks, the whole
// path's cost of a task. The PostgreSQL server's own CPU is in none of them. `--per` runs one of the
// two BlockX rows only; `--profile DIR` sets COORDINATOR_CPU_PROFILE, WORKER_CPU_PROFILE and
// EXECUTOR_CPU_PROFILE on `blockx up` (DIR/<storage>-up.cpuprofile, DIR/<storage>-worker.<pid>.cpuprofile,
// DIR/<storage>-exec.<pid>.cpuprofile; docs/performance.md § Profiling).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { REPO, runBlockx } from '../test/support/cli.js';
import { TRANSFER_SELECTOR, type FloorJob, type FloorResult } from './lib/backfill-floor.js';
import { runPostgresFloor } from './lib/backfill-floor-postgres.js';
import { runSqliteFloor } from './lib/backfill-floor-sqlite.js';
import { readTemplate, runBackfill, type BackfillJob, type BackfillRun } from './lib/backfill-run.js';
import { openOutputTable, type OutputTable, type TableFingerprint } from './lib/backfill-table.js';
import { benchEnv, startUp, type UpCluster } from './lib/backfill-up.js';
import { builtLabel } from './lib/built.js';
import {
  STORAGE_KINDS,
  STORAGE_NAMES,
  storageUnavailable,
  withFreshStorage,
  type StorageKind,
} from './lib/fresh-storage.js';
import { cpuSnapshot, cpuSpent, reapedChildrenCpuMs, type CpuSpent } from './lib/proc-cpu.js';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '3000' },
    storage: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
    'bundle-concurrency': { type: 'string' },
    workers: { type: 'string', default: '2' },
    per: { type: 'string' },
    profile: { type: 'string' },
    // worker.fusion.maxTasks of the cluster (docs/task-fusion.md); default: the config's default (64).
    fusion: { type: 'string' },
  },
});
const PERS = (['block', 'bundle'] as const).filter((p) => values.per === undefined || values.per === p);
const BLOCKS = Number(values.blocks);
const CONCURRENCY = Number(values.concurrency);
const WORKERS = Number(values.workers);
/** Bundles in flight: one per worker by default (a bundle task is parallel inside). */
const BUNDLE_CONCURRENCY = Number(values['bundle-concurrency'] ?? WORKERS);
const FUSION = values.fusion === undefined ? undefined : Number(values.fusion);
if (
  ![BLOCKS, CONCURRENCY, WORKERS, BUNDLE_CONCURRENCY, FUSION ?? 1].every(
    (n) => Number.isSafeInteger(n) && n > 0,
  ) ||
  (values.storage !== undefined && !(STORAGE_KINDS as readonly string[]).includes(values.storage)) ||
  PERS.length === 0
) {
  console.error(
    'usage: bench/backfill.ts [--blocks N>0] [--storage sqlite|postgres] [--workers N>0] ' +
      '[--concurrency N>0] [--bundle-concurrency N>0] [--per block|bundle] [--profile DIR] [--fusion N>0]',
  );
  process.exit(2);
}
const CHAIN = 1;
const BLOCK_TEMPLATE = path.join(REPO, 'examples/tasks/block-table-transfers.json');
const BUNDLE_TEMPLATE = path.join(REPO, 'examples/tasks/bundle-transfers.json');
const BUNDLE_SIZE = 1_000;
const GENERATE_TIMEOUT_MS = 900_000;

interface Row {
  readonly run: string;
  readonly blocks: number;
  readonly tasks?: number;
  readonly failed?: number;
  readonly attempts?: number;
  readonly seconds?: number;
  readonly commandSeconds?: number;
  readonly calls?: number;
  readonly table?: TableFingerprint;
  readonly sameRows?: boolean;
  readonly ratio?: number;
  readonly mainCpuMs?: number;
  readonly executorCpuMs?: number;
  /** The `blockx backfill` process, its start (`clientStartCpuMs`) included. */
  readonly clientCpuMs?: number;
  readonly clientStartCpuMs?: number;
  readonly note?: string;
}

/** The floor reproduces the per-block template's scan: check the template still asks for it. */
function checkTemplate(): void {
  const { table, where } = readTemplate(BLOCK_TEMPLATE);
  if (table !== 'events' || where.selector !== TRANSFER_SELECTOR || Object.keys(where).length !== 1)
    throw new Error(`${BLOCK_TEMPLATE} no longer scans events by the Transfer selector: update the floor`);
}

function runFloor(kind: StorageKind, storageUrl: string, job: FloorJob): Promise<FloorResult> {
  return kind === 'sqlite'
    ? runSqliteFloor(storageUrl.slice('sqlite:'.length), job)
    : runPostgresFloor(storageUrl, job);
}

/** One BlockX job on a cleared table: what it ran, what each process spent on it, what it left. */
async function measuredJob(
  up: UpCluster,
  table: OutputTable,
  job: BackfillJob,
  label: string,
  clientStartCpuMs: number,
): Promise<{ readonly row: Row; readonly stored: TableFingerprint; readonly tail: string }> {
  await table.clear(CHAIN);
  const before = cpuSnapshot(up.pid);
  const clientBefore = reapedChildrenCpuMs();
  const run: BackfillRun = await runBackfill(up, job);
  const cpu: CpuSpent = cpuSpent(before, cpuSnapshot(up.pid));
  const clientCpuMs = reapedChildrenCpuMs() - clientBefore;
  const stored = await table.fingerprint();
  const row: Row = {
    run: label,
    blocks: BLOCKS,
    tasks: run.tasks,
    failed: run.failed,
    attempts: run.attempts,
    seconds: run.jobSeconds,
    commandSeconds: run.wallSeconds,
    table: stored,
    // The Coordinator and the Workers: the up process and (each Worker in a process of its own) its
    // Worker children; the Executors are the Workers' children.
    mainCpuMs: cpu.mainMs + cpu.othersMs,
    executorCpuMs: cpu.executorMs,
    clientCpuMs,
    clientStartCpuMs,
    ...(cpu.executors === WORKERS ? {} : { note: `${cpu.executors} executor processes at the end` }),
  };
  return { row, stored, tail: run.tail };
}

async function blockxRow(
  up: UpCluster,
  table: OutputTable,
  floor: { result: FloorResult; table: TableFingerprint },
  kind: StorageKind,
  per: 'block' | 'bundle',
  clientStartCpuMs: number,
): Promise<Row> {
  const job: BackfillJob = {
    template: per === 'block' ? BLOCK_TEMPLATE : BUNDLE_TEMPLATE,
    per,
    from: 1,
    // --per bundle takes whole bundles; past BLOCKS there are no blocks, so no rows either.
    to: per === 'block' ? BLOCKS : Math.ceil(BLOCKS / BUNDLE_SIZE) * BUNDLE_SIZE,
    concurrency: per === 'block' ? CONCURRENCY : BUNDLE_CONCURRENCY,
  };
  const { row, stored, tail } = await measuredJob(
    up,
    table,
    job,
    `blockx ${kind} per-${per}`,
    clientStartCpuMs,
  );
  const sameRows = stored.rows === floor.table.rows && stored.sha256 === floor.table.sha256;
  if (!sameRows || (row.failed ?? 0) > 0)
    console.error(
      `${STORAGE_NAMES[kind]} per-${per}: ${row.failed} failed task(s), ${stored.rows} rows ` +
        `(floor ${floor.table.rows}, ${sameRows ? 'same' : 'different'} rows); output tail:\n${tail}`,
    );
  return {
    ...row,
    calls: floor.result.events,
    sameRows,
    ratio: floor.result.seconds / (row.seconds ?? Number.NaN),
  };
}

/**
 * The per-task cost of the path alone: the per-block job again with a `where` that matches no event, so
 * every task scans its block, runs no call and replaces the block's rows with none (one writer
 * transaction). Everything it spends is paid per task (docs/performance.md § Per-task costs of a
 * per-block backfill).
 */
async function noCallsRow(
  up: UpCluster,
  table: OutputTable,
  kind: StorageKind,
  clientStartCpuMs: number,
): Promise<Row> {
  const template = JSON.parse(readFileSync(BLOCK_TEMPLATE, 'utf8')) as {
    functionCallConfig: { config: { where: Record<string, unknown> } };
  };
  template.functionCallConfig.config.where = { selector: `0x${'0'.repeat(64)}` };
  const dir = mkdtempSync(path.join(tmpdir(), 'blockx-bench-no-calls-'));
  const file = path.join(dir, 'no-calls.json');
  writeFileSync(file, JSON.stringify(template));
  const job: BackfillJob = { template: file, per: 'block', from: 1, to: BLOCKS, concurrency: CONCURRENCY };
  const { row, stored, tail } = await measuredJob(
    up,
    table,
    job,
    `blockx ${kind} per-block, no calls`,
    clientStartCpuMs,
  ).finally(() => rmSync(dir, { recursive: true, force: true }));
  if ((row.failed ?? 0) > 0 || stored.rows !== 0)
    console.error(
      `${STORAGE_NAMES[kind]} per-block, no calls: ${row.failed} failed, ${stored.rows} rows:\n${tail}`,
    );
  // No rows is what it must leave; the floor's rows are not what it is compared with.
  return { ...row, calls: 0, ...(stored.rows === 0 ? {} : { sameRows: false }) };
}

/**
 * The CPU of the CLI's own start and end (node, config, plugin schemas, channels), which a job pays once:
 * a one-block job's client CPU. The per-task client figures are the job's less this.
 */
async function clientStart(up: UpCluster): Promise<number> {
  const before = reapedChildrenCpuMs();
  const run = await runBackfill(up, {
    template: BLOCK_TEMPLATE,
    per: 'block',
    from: 1,
    to: 1,
    concurrency: 1,
  });
  if (run.failed > 0) throw new Error(`a one-block backfill failed:\n${run.tail}`);
  return reapedChildrenCpuMs() - before;
}

/** The three rows of one storage. */
async function measure(kind: StorageKind, storageUrl: string): Promise<Row[]> {
  const generated = await runBlockx(
    ['data', 'generate', '--chain', String(CHAIN), '--blocks', String(BLOCKS)],
    { env: benchEnv(storageUrl), timeoutMs: GENERATE_TIMEOUT_MS },
  );
  if (generated.code !== 0)
    throw new Error(`blockx data generate exited ${generated.code}:\n${generated.stdout}${generated.stderr}`);
  const table = await openOutputTable(storageUrl);
  let up: UpCluster | undefined;
  try {
    await table.clear(CHAIN);
    const result = await runFloor(kind, storageUrl, { chainId: CHAIN, from: 1, to: BLOCKS });
    const floor = { result, table: await table.fingerprint() };
    if (floor.table.rows !== result.rows)
      throw new Error(`floor: wrote ${result.rows} rows, the table holds ${floor.table.rows}`);
    const rows: Row[] = [
      {
        run: `floor ${kind}`,
        blocks: BLOCKS,
        seconds: result.seconds,
        calls: result.events,
        table: floor.table,
        ratio: 1,
        mainCpuMs: result.cpuMs,
      },
    ];
    const profile =
      values.profile === undefined
        ? {}
        : {
            COORDINATOR_CPU_PROFILE: path.resolve(values.profile, `${kind}-up.cpuprofile`),
            EXECUTOR_CPU_PROFILE: path.resolve(values.profile, `${kind}-exec.cpuprofile`),
            WORKER_CPU_PROFILE: path.resolve(values.profile, `${kind}-worker.cpuprofile`),
          };
    const fusion = FUSION === undefined ? {} : { WORKER_FUSION_MAX_TASKS: String(FUSION) };
    up = await startUp({ storageUrl, workers: WORKERS, env: { ...profile, ...fusion } });
    const clientStartCpuMs = await clientStart(up);
    for (const per of PERS) rows.push(await blockxRow(up, table, floor, kind, per, clientStartCpuMs));
    if (PERS.includes('block')) rows.push(await noCallsRow(up, table, kind, clientStartCpuMs));
    return rows;
  } catch (err) {
    if (up !== undefined) console.error(`--- blockx up ---\n${up.output()}`);
    throw err;
  } finally {
    await up?.stop();
    await table.close();
  }
}

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined || !Number.isFinite(n)
    ? ''
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function report(rows: readonly Row[]): void {
  console.log(
    '| run | blocks | tasks | failed tasks | attempts | seconds | command s | blocks/s | calls | token_transfers rows | ' +
      'same rows as floor | throughput blockx/floor | main CPU ms/block | main CPU µs/call | ' +
      'executors CPU ms/block | executors CPU µs/call | client CPU ms/block | CPU ms/task, all processes |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const perBlock = (ms: number | undefined): string => fmt(ms === undefined ? ms : ms / r.blocks, 2);
    const perCall = (ms: number | undefined): string =>
      fmt(ms === undefined || r.calls === undefined ? undefined : (ms * 1000) / r.calls, 1);
    const same = r.sameRows === undefined ? '' : r.sameRows ? 'yes' : '**NO**';
    const client =
      r.clientCpuMs === undefined || r.clientStartCpuMs === undefined
        ? undefined
        : r.clientCpuMs - r.clientStartCpuMs;
    const perTask =
      client === undefined || r.tasks === undefined || r.tasks === 0
        ? ''
        : fmt(((r.mainCpuMs ?? 0) + (r.executorCpuMs ?? 0) + client) / r.tasks, 2);
    console.log(
      `| ${r.run} | ${fmt(r.blocks)} | ${fmt(r.tasks)} | ${fmt(r.failed)} | ${fmt(r.attempts)} | ` +
        `${fmt(r.seconds, 2)} | ${fmt(r.commandSeconds, 1)} | ` +
        `${r.seconds === undefined ? '' : fmt(r.blocks / r.seconds)} | ${fmt(r.calls)} | ${fmt(r.table?.rows)} | ` +
        `${same} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}×`} | ${perBlock(r.mainCpuMs)} | ` +
        `${perCall(r.mainCpuMs)} | ${perBlock(r.executorCpuMs)} | ${perCall(r.executorCpuMs)} | ` +
        `${perBlock(client)} | ${perTask} |` +
        `${r.note ? ` ${r.note}` : ''}`,
    );
  }
}

async function main(): Promise<number> {
  checkTemplate();
  const loadBefore = loadavg()[0] ?? 0;
  const rows: Row[] = [];
  let failed = false;
  for (const kind of STORAGE_KINDS.filter((k) => values.storage === undefined || values.storage === k)) {
    const skipped = storageUnavailable(kind);
    if (skipped !== undefined) {
      rows.push({ run: kind, blocks: BLOCKS, note: skipped });
      continue;
    }
    try {
      rows.push(...(await withFreshStorage(kind, 'blockx_backfill', (url) => measure(kind, url))));
    } catch (err) {
      failed = true;
      console.error(`${STORAGE_NAMES[kind]}: ${err instanceof Error ? err.message : String(err)}`);
      const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
      rows.push({ run: kind, blocks: BLOCKS, note: `failed: ${message}` });
    }
  }
  failed ||= rows.some((r) => (r.failed ?? 0) > 0 || r.sameRows === false);
  console.log(
    `\nbackfill: chain ${CHAIN}, ${BLOCKS.toLocaleString('en-US')} generated blocks (\`blockx data generate\`), ` +
      `erc20_transfers into token_transfers; BlockX: \`blockx up --workers ${WORKERS}\` (built CLI), ` +
      `--concurrency ${CONCURRENCY} per block, ${BUNDLE_CONCURRENCY} per bundle; ${builtLabel()}; ${FUSION === undefined ? '' : `worker.fusion.maxTasks ${FUSION}; `}` +
      `floor: one process on the raw driver, one transaction per block; calls = events decoded; ` +
      `main = the floor's process / the \`blockx up\` Coordinator and Worker processes, executors = the Workers' children, client = the ` +
      `\`blockx backfill\` process less its start (a one-block job's CPU, ${fmt(rows.find((r) => r.clientStartCpuMs !== undefined)?.clientStartCpuMs)} ms); ` +
      `CPU ms/task = main + executors + client over the tasks; ` +
      `Node ${process.version}; ${cpus().length} cores, load average ${loadBefore.toFixed(2)} before the run, ` +
      `${(loadavg()[0] ?? 0).toFixed(2)} after (the machine is shared: compare rows of one run)\n`,
  );
  report(rows);
  return failed ? 1 : 0;
}

process.exitCode = await main();
