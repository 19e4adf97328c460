// bench/backfill: a generated chain (10,000 blocks by default) backfilled into token_transfers through a
// real cluster — `blockx coordinator` + 2 `blockx worker` processes on one etcd (test/support/cluster.ts)
// — on SQLite and on PostgreSQL, beside a hand-written floor measured in the same run on the same storage.
//
//   npx tsx bench/backfill.ts [--blocks 10000] [--only sqlite|postgres] [--concurrency 64]
//                             [--bundle-concurrency WORKERS] [--workers 2]
//   npm run bench -- --only backfill
//
// Rows of the table, per storage (token_transfers is cleared before each):
//   floor              bench/lib/backfill-floor.ts: one process reads each block's events (the template's
//                      selector filter), runs functions/erc20_transfers.ts on every row as the Executor
//                      would, and replaces the block's rows in one transaction, block after block, on the
//                      repository's storage backend (open-storage.ts: the Workers' SQL path).
//   blockx per-block   `blockx backfill examples/tasks/block-table-transfers.json --per block`: one task per
//                      block (BlockTableCallConfig → erc20_transfers → BlockWriteResultHandler).
//   blockx per-bundle  `blockx backfill examples/tasks/bundle-transfers.json --per bundle`: one task per
//                      aligned bundle of 1,000 blocks (BlockBundleCallConfig → BlockBundleWriteResultHandler).
// Both go through the coordinator. `seconds`, blocks/s, rows/s and the ratio are over the seconds the job's
// summary reports (the floor's clock likewise excludes process start); `command s` is the CLI's wall time,
// node start and kernel boot included. After every row the table must hold exactly the floor's row count
// (every block was written), or the bench fails.
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type * as ConfigModule from '../src/kernel/config.js';
import type * as OpenStorageModule from '../src/services/storage/open-storage.js';
import type { StorageBackend } from '../src/services/storage/types.js';
import { REPO, startCluster, type TestCluster } from '../test/support/cluster.js';
import { builtLabel, loadBuilt } from './lib/built.js';
import { countRows, runFloor, type FloorResult } from './lib/backfill-floor.js';
import { readTemplate, runBackfill, type BackfillRun } from './lib/backfill-run.js';
import {
  STORAGE_KINDS,
  STORAGE_NAMES,
  storageUnavailable,
  withFreshStorage,
  type StorageKind,
} from './lib/fresh-storage.js';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '10000' },
    only: { type: 'string' },
    concurrency: { type: 'string', default: '64' },
    'bundle-concurrency': { type: 'string' },
    workers: { type: 'string', default: '2' },
  },
});
const BLOCKS = Number(values.blocks);
const CONCURRENCY = Number(values.concurrency);
const WORKERS = Number(values.workers);
/** Bundles in flight: one per worker by default (a bundle task is parallel inside; 10 at once would time out). */
const BUNDLE_CONCURRENCY = Number(values['bundle-concurrency'] ?? WORKERS);
if (
  ![BLOCKS, CONCURRENCY, WORKERS, BUNDLE_CONCURRENCY].every((n) => Number.isSafeInteger(n) && n > 0) ||
  (values.only !== undefined && values.only !== 'sqlite' && values.only !== 'postgres')
) {
  console.error(
    'usage: bench/backfill.ts [--blocks N>0] [--only sqlite|postgres] [--concurrency N>0] ' +
      '[--bundle-concurrency N>0] [--workers N>0]',
  );
  process.exit(2);
}
const CHAIN = 1;
const OUTPUT_TABLE = 'token_transfers';
const BLOCK_TEMPLATE = path.join(REPO, 'examples/tasks/block-table-transfers.json');
const BUNDLE_TEMPLATE = path.join(REPO, 'examples/tasks/bundle-transfers.json');
const BUNDLE_SIZE = 1_000;

interface Row {
  readonly run: string;
  readonly storage: string;
  readonly blocks: number;
  readonly tasks?: number;
  readonly failed?: number;
  readonly attempts?: number;
  readonly seconds?: number;
  readonly commandSeconds?: number;
  readonly rows?: number;
  readonly ratio?: number;
  readonly note?: string;
}

async function openBackend(cluster: TestCluster): Promise<StorageBackend> {
  const { loadConfig } = await loadBuilt<typeof ConfigModule>('kernel/config');
  const { openStorage } = await loadBuilt<typeof OpenStorageModule>('services/storage/open-storage');
  const config = loadConfig({ configPath: cluster.configPath, env: cluster.env });
  return openStorage(config.storage, config.tables, { baseDir: config.baseDir });
}

const clear = (backend: StorageBackend): Promise<number> =>
  backend.transaction((tx) => tx.deleteWhere(OUTPUT_TABLE, { chain_id: CHAIN }));

/** The three rows of one storage, in one cluster. */
async function measure(kind: StorageKind, storageUrl: string): Promise<Row[]> {
  const storage = STORAGE_NAMES[kind];
  const cluster = await startCluster({ workers: WORKERS, storageUrl });
  let backend: StorageBackend | undefined;
  try {
    await cluster.generateChain(BLOCKS, { chain: CHAIN });
    backend = await openBackend(cluster);
    const template = readTemplate(BLOCK_TEMPLATE);
    await clear(backend);
    const floor: FloorResult = await runFloor(backend, {
      chainId: CHAIN,
      from: 1,
      to: BLOCKS,
      where: template.where,
      sourceTable: template.table,
      outputTable: OUTPUT_TABLE,
    });
    const floorRows = await countRows(backend, OUTPUT_TABLE, 'log_idx');
    if (floorRows !== floor.rows)
      throw new Error(`${storage} floor: wrote ${floor.rows} rows, the table holds ${floorRows}`);
    const rows: Row[] = [
      { run: `floor ${kind}`, storage, blocks: BLOCKS, seconds: floor.seconds, rows: floorRows, ratio: 1 },
    ];
    for (const per of ['block', 'bundle'] as const) {
      await clear(backend);
      const run: BackfillRun = await runBackfill(cluster, {
        template: per === 'block' ? BLOCK_TEMPLATE : BUNDLE_TEMPLATE,
        per,
        from: 1,
        // --per bundle takes whole bundles; past BLOCKS there are no blocks, so no rows either.
        to: per === 'block' ? BLOCKS : Math.ceil(BLOCKS / BUNDLE_SIZE) * BUNDLE_SIZE,
        concurrency: per === 'block' ? CONCURRENCY : BUNDLE_CONCURRENCY,
      });
      const stored = await countRows(backend, OUTPUT_TABLE, 'log_idx');
      rows.push({
        run: `blockx ${kind} per-${per}`,
        storage,
        blocks: BLOCKS,
        tasks: run.tasks,
        failed: run.failed,
        attempts: run.attempts,
        seconds: run.jobSeconds,
        commandSeconds: run.wallSeconds,
        rows: stored,
        ratio: run.jobSeconds / floor.seconds,
        ...(stored === floorRows ? {} : { note: `ROW COUNT ${stored} ≠ floor ${floorRows}` }),
      });
      if (stored !== floorRows || run.failed > 0) {
        console.error(`${storage} per-${per}: ${run.failed} failed task(s); output tail:\n${run.tail}`);
      }
    }
    return rows;
  } catch (err) {
    console.error(`${storage}: ${err instanceof Error ? err.message : String(err)}\n${cluster.output()}`);
    throw err;
  } finally {
    await backend?.close();
    await cluster.stop();
  }
}

const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined
    ? ''
    : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function report(rows: readonly Row[]): void {
  console.log(
    '| run | blocks | tasks | failed tasks | attempts | seconds | command s | blocks/s | rows/s | token_transfers rows | time blockx/floor |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) {
    const perSecond = (n: number): string => (r.seconds === undefined ? '' : fmt(n / r.seconds));
    console.log(
      `| ${r.run} | ${fmt(r.blocks)} | ${fmt(r.tasks)} | ${fmt(r.failed)} | ${fmt(r.attempts)} | ${fmt(r.seconds, 1)} | ` +
        `${fmt(r.commandSeconds, 1)} | ${perSecond(r.blocks)} | ${r.rows === undefined ? '' : perSecond(r.rows)} | ` +
        `${fmt(r.rows)} | ${r.ratio === undefined ? '' : `${r.ratio.toFixed(1)}×`}${r.note ? ` ${r.note}` : ''} |`,
    );
  }
}

async function main(): Promise<number> {
  const loadBefore = loadavg()[0] ?? 0;
  const rows: Row[] = [];
  let failed = false;
  for (const kind of STORAGE_KINDS.filter((k) => values.only === undefined || values.only === k)) {
    const skipped = storageUnavailable(kind);
    if (skipped !== undefined) {
      rows.push({ run: kind, storage: STORAGE_NAMES[kind], blocks: BLOCKS, note: skipped });
      continue;
    }
    try {
      rows.push(...(await withFreshStorage(kind, 'blockx_backfill', (url) => measure(kind, url))));
    } catch (err) {
      failed = true;
      const message = err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
      rows.push({ run: kind, storage: STORAGE_NAMES[kind], blocks: BLOCKS, note: `failed: ${message}` });
    }
  }
  failed ||= rows.some((r) => (r.failed ?? 0) > 0 || r.note?.startsWith('ROW COUNT') === true);
  console.log(
    `\nbackfill: chain ${CHAIN}, ${BLOCKS.toLocaleString('en-US')} generated blocks (\`blockx data generate\`), ` +
      `erc20_transfers into ${OUTPUT_TABLE}; cluster: coordinator + ${WORKERS} workers on etcd, ` +
      `--concurrency ${CONCURRENCY} per block, ${BUNDLE_CONCURRENCY} per bundle; ${builtLabel()}; floor: one process, one transaction per block; ` +
      `Node ${process.version}; ${cpus().length} cores, load average ${loadBefore.toFixed(2)} before the run, ` +
      `${(loadavg()[0] ?? 0).toFixed(2)} after (the machine is shared: compare rows of one run)\n`,
  );
  report(rows);
  return failed ? 1 : 0;
}

process.exitCode = await main();
