// bench/block-pipeline: one block of 10,000 event rows end to end through a real Worker, on SQLite and on
// PostgreSQL, beside a plain SQL `INSERT ... SELECT` of the same rows in the same database as the floor.
//
//   npx tsx bench/block-pipeline.ts [--rows 10000] [--runs 5] [--only sqlite|postgres] [--read-copies N]
//                                   [--language js|python] [--python-function block_pipeline_row|erc20_transfers]
//
// `--language python` runs the calls on the Python Executor (docs/executor.md § Python functions on a
// Worker): the functions folder is a temp copy of bench/python-functions/block_pipeline_row.py (the same
// work as the TS function: one ctx.io.get, then the row), or with `--python-function erc20_transfers`
// of examples/python-functions/erc20_transfers.py (the same row, without the block read).
//
// `--read-copies 0` runs the executor without read copies (executor.readCopyMaxEntries 0): every
// ctx.io.get then travels to the Worker, as before read copies existed.
//
// Profiling: `node --cpu-prof --import tsx bench/block-pipeline.ts` profiles the Worker side (this
// process); BENCH_EXECUTOR_CPU_PROF=DIR also writes the Executor child's profile into DIR.
//
// The pipeline: SubmitTask (no slot_id) + WatchTasks over gRPC to a Worker assembled as `blockx worker`
// assembles it (bench/lib/pipeline-worker.ts: storage runtime, task IO scopes, the real Executor child,
// the repository's plugins), running
//   BlockTableCallConfig {function: block_pipeline_row, table: events, chainId: 1, block: {number: 1}}
//   → bench/functions/block_pipeline_row.ts, once per event; each call reads its block through
//     `ctx.io.get('blocks', ...)` (the task's read cache) and returns a token_transfers row
//   → BlockWriteResultHandler {table: token_transfers, chainId: 1, block: {number: 1}}.
// Time is submit → terminal update. The cache hit rate is the IO factory's Δhits / (Δhits + Δmisses)
// over the task (the builder's block lookup is a scan, whose rows seed the cache: every call's get can
// hit). After every run token_transfers must hold exactly `--rows` rows for the block.
//
// The floor: DELETE the block's token_transfers rows, then INSERT ... SELECT them from `events` (the same
// decoding in SQL), in one transaction as the backend's (SQLite BEGIN IMMEDIATE, synchronous=NORMAL,
// WAL; PostgreSQL SERIALIZABLE), through better-sqlite3 / pg directly. The floor and the pipeline are
// checked to leave identical rows.
//
// Data: a fresh SQLite file in a temp dir, and a fresh database on a throwaway PostgreSQL server
// (test/support/postgres.ts; skipped with a note when the Debian postgresql binaries are missing).
// Each backend: one warm-up run of each, then `--runs` runs alternating pipeline and floor; the table
// shows the median (and the pipeline's min). Goal (issue): the 10,000-row block in under 1 s on SQLite.
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TaskInput } from '../src/grpc/domain-types.js';
import { loadConfig } from '../src/kernel/config.js';
import { findPostgresBinDir, startPostgres, type PgServer } from '../test/support/postgres.js';
import { BUILT } from './lib/built.js';
import { cpuSnapshot } from './lib/proc-cpu.js';
import { startPipelineWorker, type PhaseTimes, type PipelineWorker } from './lib/pipeline-worker.js';
import { floorStatements, transferBlock, type TransferBlock } from './lib/transfer-block.js';

const REPO = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '5' },
    only: { type: 'string' },
    'read-copies': { type: 'string' },
    language: { type: 'string', default: 'js' },
    'python-function': { type: 'string', default: 'block_pipeline_row' },
  },
});
const LANGUAGE = values.language;
const PYTHON_FUNCTION = values['python-function'];
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);
/** executor.readCopyMaxEntries for the run (default: the config's); 0 shows the pipeline without copies. */
const READ_COPIES = values['read-copies'] === undefined ? undefined : Number(values['read-copies']);
if (
  !(Number.isSafeInteger(ROWS) && ROWS > 0 && Number.isSafeInteger(RUNS) && RUNS > 0) ||
  (READ_COPIES !== undefined && !(Number.isSafeInteger(READ_COPIES) && READ_COPIES >= 0)) ||
  (values.only !== undefined && values.only !== 'sqlite' && values.only !== 'postgres') ||
  (LANGUAGE !== 'js' && LANGUAGE !== 'python') ||
  (PYTHON_FUNCTION !== 'block_pipeline_row' && PYTHON_FUNCTION !== 'erc20_transfers')
) {
  console.error(
    'usage: bench/block-pipeline.ts [--rows N>0] [--runs N>0] [--only sqlite|postgres] [--read-copies N>=0] ' +
      '[--language js|python] [--python-function block_pipeline_row|erc20_transfers]',
  );
  process.exit(2);
}
const CHAIN = 1;
const NUMBER = 1;
/** The function each event row is given to. */
const FUNCTION = LANGUAGE === 'python' ? PYTHON_FUNCTION : 'block_pipeline_row';

/** The functions folder of the run: bench/functions, or a temp folder with the one Python function. */
async function functionsDirFor(tmp: string): Promise<string> {
  if (LANGUAGE === 'js') return path.join(REPO, 'bench', 'functions');
  const from =
    PYTHON_FUNCTION === 'erc20_transfers'
      ? path.join(REPO, 'examples', 'python-functions', 'erc20_transfers.py')
      : path.join(REPO, 'bench', 'python-functions', 'block_pipeline_row.py');
  await copyFile(from, path.join(tmp, `${PYTHON_FUNCTION}.py`));
  return tmp;
}

type Kind = 'sqlite' | 'postgres';

interface Floor {
  /** One DELETE + INSERT ... SELECT transaction; resolves with its wall time in ms. */
  run(): Promise<number>;
  close(): Promise<void>;
}

interface PipelineRun {
  readonly ms: number;
  readonly hits: number;
  readonly misses: number;
  readonly phases: PhaseTimes;
  /** CPU time of this process (the Worker: gRPC, dispatcher, IO scope, storage) during the run. */
  readonly workerCpuMs: number;
  /** CPU time of this process's child processes (the Executor) during the run; /proc, 10 ms ticks. */
  readonly executorCpuMs: number;
}

/**
 * CPU ms of this process's Executor child (and, in a PID namespace of its own, of the `unshare` that
 * starts it, whose child it then is), from /proc (bench/lib/proc-cpu.ts).
 */
function childrenCpuMs(): number {
  const snap = cpuSnapshot(process.pid);
  let ms = 0;
  for (const [pid, cpu] of snap.children) if (snap.executors.has(pid)) ms += cpu;
  return ms;
}

interface BackendResult {
  readonly name: string;
  readonly runs?: readonly PipelineRun[];
  readonly floorMs?: readonly number[];
  /** Why there are no figures (skipped or failed). */
  readonly note?: string;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

function sqliteFloor(file: string, data: TransferBlock): Floor {
  const db = new Database(file);
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const st = floorStatements('sqlite');
  const del = db.prepare(st.delete);
  const ins = db.prepare(st.insert);
  return {
    run: async () => {
      const t0 = performance.now();
      db.exec('BEGIN IMMEDIATE');
      try {
        del.run(data.chainId, data.number);
        const { changes } = ins.run(data.chainId, data.number, data.hash);
        db.exec('COMMIT');
        if (changes !== ROWS) throw new Error(`floor inserted ${changes} rows, expected ${ROWS}`);
      } catch (err) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw err;
      }
      return performance.now() - t0;
    },
    close: async () => void db.close(),
  };
}

async function postgresFloor(url: string, data: TransferBlock): Promise<Floor> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const st = floorStatements('postgres');
  return {
    run: async () => {
      const t0 = performance.now();
      await client.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
      try {
        await client.query(st.delete, [data.chainId, data.number]);
        const { rowCount } = await client.query(st.insert, [data.chainId, data.number, data.hash]);
        await client.query('COMMIT');
        if (rowCount !== ROWS) throw new Error(`floor inserted ${rowCount} rows, expected ${ROWS}`);
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
      return performance.now() - t0;
    },
    close: () => client.end(),
  };
}

/** The block's token_transfers rows in primary key order, as the backend decodes them. */
async function outputRows(w: PipelineWorker): Promise<unknown[]> {
  const rows: unknown[] = [];
  for await (const page of w.backend.scan('token_transfers', {
    where: { chain_id: CHAIN, block_number: NUMBER },
  }))
    rows.push(...page);
  return rows;
}

let taskSeq = 0;
async function runPipeline(w: PipelineWorker): Promise<PipelineRun> {
  const taskId = `block-pipeline-${process.pid}-${++taskSeq}`;
  const task: TaskInput = {
    taskId,
    functionCallConfig: {
      type: 'BlockTableCallConfig',
      config: { function: FUNCTION, table: 'events', chainId: CHAIN, block: { number: NUMBER } },
    },
    resultHandler: {
      type: 'BlockWriteResultHandler',
      config: { table: 'token_transfers', chainId: CHAIN, block: { number: NUMBER } },
    },
    taskTimeoutMs: 120_000,
  };
  const before = w.io.stats();
  const cpu0 = process.cpuUsage();
  const exCpu0 = childrenCpuMs();
  const t0 = performance.now();
  const update = await w.submitAndWatch(task);
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const executorCpuMs = childrenCpuMs() - exCpu0;
  const after = w.io.stats();
  const ex = update.result?.executeResult;
  if (update.state !== 'SUCCEEDED' || ex === undefined) {
    throw new Error(
      `task ${taskId}: ${update.state} ${ex?.failureCode ?? ''} ${ex?.failureMessage ?? update.error}`,
    );
  }
  const written = (ex.pluginResults[0]?.result as { rows?: unknown } | undefined)?.rows;
  const stored = (await outputRows(w)).length;
  if (written !== ROWS || stored !== ROWS) {
    throw new Error(
      `task ${taskId}: writer reported ${String(written)} rows, table holds ${stored}; expected ${ROWS}`,
    );
  }
  return {
    ms,
    hits: after.cacheHits - before.cacheHits,
    misses: after.cacheMisses - before.cacheMisses,
    phases: w.phasesOf(taskId),
    workerCpuMs: (cpu.user + cpu.system) / 1000,
    executorCpuMs,
  };
}

async function measureBackend(kind: Kind, url: string, floor: () => Promise<Floor>, data: TransferBlock) {
  const fnTmp = await mkdtemp(path.join(tmpdir(), 'blockx-bench-fn-'));
  try {
    return await measureBackendIn(kind, url, floor, data, await functionsDirFor(fnTmp));
  } finally {
    await rm(fnTmp, { recursive: true, force: true });
  }
}

async function measureBackendIn(
  kind: Kind,
  url: string,
  floor: () => Promise<Floor>,
  data: TransferBlock,
  functionsDir: string,
) {
  const loaded = loadConfig({
    configPath: path.join(REPO, 'blockx.config.yaml'),
    env: { BLOCKX_STORAGE_URL: url, BLOCKX_FUNCTIONS_DIR: functionsDir },
  });
  const block = loaded.deployments.block!;
  const config =
    READ_COPIES === undefined
      ? loaded
      : {
          ...loaded,
          deployments: {
            ...loaded.deployments,
            block: { ...block, executor: { ...block.executor, readCopyMaxEntries: READ_COPIES } },
          },
        };
  const profDir = process.env.BENCH_EXECUTOR_CPU_PROF;
  const w = await startPipelineWorker(config, profDir ? { executorCpuProfDir: profDir } : {});
  let f: Floor | undefined;
  try {
    await w.backend.transaction(async (tx) => {
      await tx.insertRows('blocks', [data.block]);
      await tx.insertRows('events', data.events);
    });
    f = await floor();
    // Warm-up, and the check that both paths leave the same rows.
    await runPipeline(w);
    const byPipeline = JSON.stringify(await outputRows(w));
    await f.run();
    if (JSON.stringify(await outputRows(w)) !== byPipeline) {
      throw new Error(`${kind}: the INSERT ... SELECT floor wrote other rows than the pipeline`);
    }
    const runs: PipelineRun[] = [];
    const floorMs: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      runs.push(await runPipeline(w));
      floorMs.push(await f.run());
    }
    return { runs, floorMs };
  } finally {
    await f?.close();
    await w.close();
  }
}

async function sqlite(data: TransferBlock): Promise<BackendResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'blockx-bench-'));
  const file = path.join(dir, 'bench.db');
  try {
    const r = await measureBackend('sqlite', `sqlite:${file}`, async () => sqliteFloor(file, data), data);
    return { name: 'SQLite', ...r };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function postgres(data: TransferBlock): Promise<BackendResult> {
  if (findPostgresBinDir() === undefined) {
    return {
      name: 'PostgreSQL',
      note: 'skipped: no PostgreSQL binaries under /usr/lib/postgresql (apt-get install postgresql)',
    };
  }
  let server: PgServer | undefined;
  try {
    server = await startPostgres();
    const url = await server.createDatabase('blockx_bench');
    const r = await measureBackend('postgres', url, () => postgresFloor(url, data), data);
    return { name: 'PostgreSQL', ...r };
  } finally {
    await server?.stop();
  }
}

function report(results: readonly BackendResult[]): void {
  console.log(
    '| backend | pipeline median (ms) | pipeline min (ms) | rows/s | cache hit rate | INSERT…SELECT floor (ms) | ratio pipeline/floor |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const r of results) {
    if (r.runs === undefined || r.floorMs === undefined) {
      console.log(`| ${r.name} | ${r.note ?? 'no figures'} | | | | | |`);
      continue;
    }
    const ms = median(r.runs.map((x) => x.ms));
    const min = Math.min(...r.runs.map((x) => x.ms));
    const hits = r.runs.reduce((s, x) => s + x.hits, 0);
    const reads = hits + r.runs.reduce((s, x) => s + x.misses, 0);
    const floor = median(r.floorMs);
    const rate = Math.round(ROWS / (ms / 1000)).toLocaleString('en-US');
    const hitRate = reads === 0 ? 'n/a' : `${((100 * hits) / reads).toFixed(2)} %`;
    console.log(
      `| ${r.name} | ${ms.toFixed(0)} | ${min.toFixed(0)} | ${rate} | ${hitRate} | ${floor.toFixed(1)} | ${(ms / floor).toFixed(1)}× |`,
    );
  }
  console.log(
    '\nWhere a pipeline run goes (medians over the measured runs, ms; phases include admission waits; ' +
      'worker process CPU is user + system time of this process, all threads, during the run; executor ' +
      'CPU the same for the Executor child; µs per row is both over the rows):\n',
  );
  console.log(
    '| backend | builder (scan) | calls | writer | rest (submit, scheduling, gRPC, watch) | worker process CPU | executor CPU | CPU µs per row | writer / floor | writer share of pipeline |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    if (r.runs === undefined || r.floorMs === undefined) continue;
    const phase = (p: keyof PhaseTimes) => median(r.runs!.map((x) => x.phases[p] ?? 0));
    const rest = median(
      r.runs.map((x) => x.ms - (x.phases.builder ?? 0) - (x.phases.calls ?? 0) - (x.phases.plugin ?? 0)),
    );
    const cpu = median(r.runs.map((x) => x.workerCpuMs));
    // The writer phase (delete the block + write its rows, in the writer plugin's one transaction) against
    // the whole floor (delete + INSERT ... SELECT, which also decodes the rows), and its part of the run.
    const writer = phase('plugin');
    const share = writer / median(r.runs.map((x) => x.ms));
    const exCpu = median(r.runs.map((x) => x.executorCpuMs));
    const perRow = (1000 * median(r.runs.map((x) => x.workerCpuMs + x.executorCpuMs))) / ROWS;
    console.log(
      `| ${r.name} | ${phase('builder').toFixed(0)} | ${phase('calls').toFixed(0)} | ${writer.toFixed(0)} | ` +
        `${rest.toFixed(0)} | ${cpu.toFixed(0)} | ${exCpu.toFixed(0)} | ${perRow.toFixed(1)} | ` +
        `${(writer / median(r.floorMs)).toFixed(2)}× | ${(100 * share).toFixed(0)} % |`,
    );
  }
  const lite = results.find((r) => r.name === 'SQLite' && r.runs !== undefined);
  if (lite?.runs !== undefined) {
    const ms = median(lite.runs.map((x) => x.ms));
    console.log(
      `\n${ROWS.toLocaleString('en-US')}-row block on SQLite in ${ms.toFixed(0)} ms: goal < 1000 ms ${ms < 1000 ? 'met' : 'NOT met'}`,
    );
  }
}

async function main(): Promise<number> {
  const loadBefore = loadavg()[0] ?? 0;
  const data = transferBlock(CHAIN, NUMBER, ROWS);
  const results: BackendResult[] = [];
  let failed = false;
  for (const [kind, run] of [
    ['sqlite', sqlite],
    ['postgres', postgres],
  ] as const) {
    if (values.only !== undefined && values.only !== kind) continue;
    try {
      results.push(await run(data));
    } catch (err) {
      failed = true;
      console.error(err);
      const name = kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
      results.push({ name, note: `failed: ${err instanceof Error ? err.message : String(err)}` });
    }
  }
  console.log(
    `\nblock-pipeline: ${ROWS.toLocaleString('en-US')} rows, 1 warm-up + ${RUNS} measured runs per backend; ` +
      `real Worker (gRPC on 127.0.0.1) + ${LANGUAGE === 'python' ? `Python Executor (${FUNCTION}.py)` : 'Executor child'} ` +
      `(${BUILT ? 'built' : 'src/ under tsx'}; ` +
      `read copies ${READ_COPIES === undefined ? 'as configured' : READ_COPIES === 0 ? 'off' : `max ${READ_COPIES}`}); ` +
      `Node ${process.version}; ${cpus().length} cores, ` +
      `load average ${loadBefore.toFixed(2)} before the run\n`,
  );
  report(results);
  return failed ? 1 : 0;
}

process.exitCode = await main();
