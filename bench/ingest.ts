// bench/ingest: `blockx ingest` against the loop a user would write instead (docs/ingest.md § Benchmark). Anvil
// (the pinned dev dependency) is filled with N blocks (2,000 by default), each holding two token transfers, a
// transfer through a forwarder contract (a nested call frame) and an ETH transfer; then, in one run, on the
// same blocks (3 … N + 2, as a user would name them), into fresh SQLite files:
//
//   npx tsx bench/ingest.ts [--blocks 2000] [--workers 2] [--concurrency 64] [--bundle-sizes 50,200]
//   npm run bench -- --only ingest
//
//   viem loop        one process, block after block: viem's client asks for the block with its
//                    transactions, its receipts (eth_getBlockReceipts) and its traces (trace_block), three
//                    requests in turn; the rows (the same mapping, plugins/writers/chain-ingest-write) go into
//                    the four tables in one better-sqlite3 transaction per block (delete the height, insert).
//   blockx default   `blockx ingest --rpc URL --from --to --json` through the built CLI against
//                    `blockx up --workers N` (bench/lib/backfill-up.ts), no other flag: what a user gets
//                    (a range this long runs as bundles of the source's bundleSize, its edges per block:
//                    docs/ingest.md § Bundles by default).
//   blockx per block the same with `--bundle-size 1 --concurrency C`: one task per block.
//   blockx bundles S the same with `--bundle-size S`, for each S of --bundle-sizes (none by default).
//
// Every run talks to Anvil through a pass-through HTTP proxy in this process (test/support/rpc-fault-proxy.ts)
// that counts HTTP requests and the JSON-RPC calls they carry: reported per block. After the runs the four
// tables of the files must hold the same rows (read back through the storage layer, compared as sorted
// JSON) and BlockX must report 0 failed blocks, or the bench exits 1. The loop runs twice, before and after
// the BlockX runs, into fresh files: the load of a shared box drifts within a run, and the baseline is the
// mean of the two. `throughput blockx/loop` = that mean / BlockX seconds (≥ 1.5 is the goal on a 2-core box).
// BlockX's seconds are the job's own (its summary); the loop's clock starts with its client made.
// CPU ms per block (bench/lib/proc-cpu.ts, 10 ms ticks): `CPU` is the loop's process (the loop and the proxy),
// or for BlockX the `blockx up` process tree (Coordinator, Worker children, Executors), the `blockx ingest`
// process and this one (the proxy); `Anvil` is the node's, apart, since it serves both alike.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createPublicClient, http } from 'viem';
import { rowsOfBlock } from '../plugins/writers/chain-ingest-write/src/index.js';
import { loadConfig } from '../src/kernel/config.js';
import type { RawBlock } from '../src/services/chain-rpc/adapters/block-fetcher.js';
import { openStorage } from '../src/services/storage/open-storage.js';
import { ANVIL_CHAIN_ID, populateChain, startAnvil } from '../test/support/anvil.js';
import { REPO, runBlockx } from '../test/support/cli.js';
import { startFaultProxy } from '../test/support/rpc-fault-proxy.js';
import { benchEnv, startUp } from './lib/backfill-up.js';
import { reapedChildrenCpuMs, treeCpuMs } from './lib/proc-cpu.js';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '2000' },
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '64' },
    'bundle-sizes': { type: 'string', default: '' },
  },
});
const BLOCKS = Number(values.blocks);
const WORKERS = Number(values.workers);
const CONCURRENCY = Number(values.concurrency);
const SIZES = values['bundle-sizes'] === '' ? [] : values['bundle-sizes'].split(',').map(Number);
if (![BLOCKS, WORKERS, CONCURRENCY, ...SIZES].every((n) => Number.isSafeInteger(n) && n > 0)) {
  console.error(
    'usage: bench/ingest.ts [--blocks N>0] [--workers N>0] [--concurrency N>0] [--bundle-sizes S,S,...]',
  );
  process.exit(2);
}

const TABLES = ['blocks', 'transactions', 'events', 'traces'] as const;
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-bench-ingest-'));
const CONFIG = path.join(REPO, 'blockx.config.yaml');
const config = loadConfig({ configPath: CONFIG, env: {} });

interface Counted {
  requests: number;
  calls: number;
}

/** HTTP requests and JSON-RPC calls the proxy saw since `from` (an index into its bodies). */
function counted(bodies: readonly string[], from: number): Counted {
  let calls = 0;
  for (const b of bodies.slice(from)) {
    const parsed = JSON.parse(b) as unknown;
    calls += Array.isArray(parsed) ? parsed.length : 1;
  }
  return { requests: bodies.length - from, calls };
}

interface LoopRun {
  readonly seconds: number;
  readonly cpuMs: number;
  readonly anvilMs: number;
}

/** The viem loop: sequential, three requests per block, one better-sqlite3 transaction per block. */
async function viemLoop(
  url: string,
  anvilPid: number,
  file: string,
  from: number,
  to: number,
): Promise<LoopRun> {
  const db = new Database(file);
  const statements = new Map<string, Database.Statement>();
  const insert = (table: string, row: Record<string, unknown>) => {
    const cols = Object.keys(row);
    const key = `${table}:${cols.join(',')}`;
    let st = statements.get(key);
    if (st === undefined) {
      st = db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
      statements.set(key, st);
    }
    st.run(...cols.map((c) => sqliteValue(row[c])));
  };
  const deletes = TABLES.map((t) => {
    const blockColumn = config.tables[t]?.blockColumn as string;
    return db.prepare(`DELETE FROM ${t} WHERE chain_id = ? AND ${blockColumn} = ?`);
  });
  const write = db.transaction((rows: ReturnType<typeof rowsOfBlock>, n: number) => {
    for (const d of deletes) d.run(ANVIL_CHAIN_ID, n);
    for (const t of TABLES) for (const row of rows[t] ?? []) insert(t, row);
  });
  const started = performance.now();
  const cpu = process.cpuUsage();
  const anvilBefore = treeCpuMs(anvilPid);
  const client = createPublicClient({ transport: http(url) });
  for (let n = from; n <= to; n++) {
    const tag = `0x${n.toString(16)}` as const;
    const block = await client.request({ method: 'eth_getBlockByNumber', params: [tag, true] });
    const receipts = await client.request({ method: 'eth_getBlockReceipts', params: [tag] } as never);
    const traces = await client.request({ method: 'trace_block', params: [tag] } as never);
    const raw: RawBlock = {
      number: n,
      block: block as unknown as Record<string, unknown>,
      receipts: receipts as Record<string, unknown>[],
      traces: { source: 'trace_block', data: traces },
    };
    write(rowsOfBlock(raw, ANVIL_CHAIN_ID), n);
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const anvilMs = treeCpuMs(anvilPid) - anvilBefore;
  db.close();
  return { seconds, cpuMs: (used.user + used.system) / 1000, anvilMs };
}

function sqliteValue(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v !== null && typeof v === 'object') return JSON.stringify(v);
  return v;
}

/** Every row of the four tables, per table, as sorted JSON (read back through the storage layer). */
async function tableRows(storageUrl: string): Promise<Record<string, string[]>> {
  const backend = await openStorage({ ...config.storage, url: storageUrl }, config.tables, {
    baseDir: config.baseDir,
  });
  try {
    const out: Record<string, string[]> = {};
    for (const t of TABLES) {
      const rows: string[] = [];
      for await (const page of backend.scan(t, { where: { chain_id: ANVIL_CHAIN_ID } })) {
        for (const r of page) rows.push(JSON.stringify(r));
      }
      out[t] = rows.sort();
    }
    return out;
  } finally {
    await backend.close();
  }
}

async function migrate(storageUrl: string): Promise<void> {
  const r = await runBlockx(['db', 'migrate'], { env: benchEnv(storageUrl), timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`blockx db migrate failed: ${r.stderr}`);
}

interface IngestRun {
  readonly seconds: number;
  readonly failed: number;
  readonly count: Counted;
  /** The `blockx up` tree, the `blockx ingest` process and this one (the proxy), over the job. */
  readonly cpuMs: number;
  readonly anvilMs: number;
}

/** `blockx ingest` of [from, to] against a fresh `blockx up` on `storageUrl`, through the counting proxy. */
async function runIngest(
  proxy: { url: string; bodies: readonly string[] },
  anvilPid: number,
  storageUrl: string,
  from: number,
  to: number,
  more: string[],
): Promise<IngestRun> {
  const up = await startUp({ storageUrl, workers: WORKERS });
  try {
    const mark = proxy.bodies.length;
    const args = ['ingest', '--rpc', proxy.url, '--from', String(from), '--to', String(to), '--json'];
    const state = ['--fresh', '--state-dir', path.join(dir, 'state')];
    const upBefore = treeCpuMs(up.pid);
    const anvilBefore = treeCpuMs(anvilPid);
    const cliBefore = reapedChildrenCpuMs();
    const own = process.cpuUsage();
    const r = await up.cli([...args, ...state, ...more], { timeoutMs: 1_800_000 });
    const ownUsed = process.cpuUsage(own);
    const anvilMs = treeCpuMs(anvilPid) - anvilBefore;
    const cpuMs =
      treeCpuMs(up.pid) -
      upBefore +
      (reapedChildrenCpuMs() - cliBefore) +
      (ownUsed.user + ownUsed.system) / 1000;
    const last = r.stdout.trim().split('\n').at(-1) ?? '{}';
    const summary = (JSON.parse(last) as { summary?: { seconds: number; failed: number; succeeded: number } })
      .summary;
    if (summary === undefined) throw new Error(`no summary: ${r.stderr}\n${up.output()}`);
    return {
      seconds: summary.seconds,
      failed: summary.failed,
      count: counted(proxy.bodies, mark),
      cpuMs,
      anvilMs,
    };
  } finally {
    await up.stop();
  }
}

async function main(): Promise<number> {
  const anvil = await startAnvil();
  const proxy = await startFaultProxy(anvil.url);
  try {
    const fillStarted = performance.now();
    const chain = await populateChain(anvil, { blocks: BLOCKS, transfersPerBlock: 2 });
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const { from, to } = chain;

    const urls = { loop: 'loop', loopAfter: 'loop-after' } as const;
    const variants: { name: string; file: string; args: string[] }[] = [
      { name: 'default', file: 'default', args: [] },
      {
        name: `per block (--bundle-size 1 --concurrency ${CONCURRENCY})`,
        file: 'per-block',
        args: ['--bundle-size', '1', '--concurrency', String(CONCURRENCY)],
      },
      ...SIZES.map((size) => ({
        name: `bundles of ${size} (--bundle-size ${size})`,
        file: `bundles-${size}`,
        args: ['--bundle-size', String(size)],
      })),
    ];
    const storage = (name: string) => `sqlite:${path.join(dir, `${name}.db`)}`;
    for (const name of [...Object.values(urls), ...variants.map((v) => v.file)]) await migrate(storage(name));

    const loopMark = proxy.bodies.length;
    const loopBefore = await viemLoop(proxy.url, anvil.pid, path.join(dir, `${urls.loop}.db`), from, to);
    const loopCount = counted(proxy.bodies, loopMark);

    const runs: { name: string; file: string; run: IngestRun }[] = [];
    for (const v of variants) {
      runs.push({ ...v, run: await runIngest(proxy, anvil.pid, storage(v.file), from, to, v.args) });
    }
    const loopAfter = await viemLoop(proxy.url, anvil.pid, path.join(dir, `${urls.loopAfter}.db`), from, to);
    const loopSeconds = (loopBefore.seconds + loopAfter.seconds) / 2;

    const loopRows = await tableRows(storage(urls.loop));
    const blocks = to - from + 1;
    const rate = (sec: number) => (blocks / sec).toFixed(1);
    const perBlock = (n: number) => (n / blocks).toFixed(2);
    const cpuPerBlock = (ms: number) => (ms / blocks).toFixed(2);
    const rowCounts = TABLES.map((t) => `${t} ${loopRows[t]?.length}`).join(', ');
    console.log(
      `## ingest — ${blocks} Anvil blocks ${from}..${to} (${rowCounts}), ${WORKERS} workers, ` +
        `load ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} at the end (chain filled in ${fillSeconds.toFixed(1)} s)\n`,
    );
    console.log(
      "| run | seconds | blocks/s | HTTP requests/block | RPC calls/block | CPU ms/block | Anvil CPU ms/block | failed | tables equal the loop's | throughput blockx/loop |",
    );
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    const afterRows = await tableRows(storage(urls.loopAfter));
    let ok = TABLES.every((t) => JSON.stringify(loopRows[t]) === JSON.stringify(afterRows[t]));
    for (const [name, loop] of [
      ['viem loop, before', loopBefore],
      ['viem loop, after', loopAfter],
    ] as const) {
      console.log(
        `| ${name} | ${loop.seconds.toFixed(2)} | ${rate(loop.seconds)} | ${perBlock(loopCount.requests)} | ${perBlock(loopCount.calls)} | ${cpuPerBlock(loop.cpuMs)} | ${cpuPerBlock(loop.anvilMs)} | 0 | ${name.endsWith('after') ? (ok ? 'yes' : 'NO') : ''} | (baseline: the mean, ${loopSeconds.toFixed(2)} s) |`,
      );
    }
    for (const { name, file, run } of runs) {
      const rows = await tableRows(storage(file));
      const same = TABLES.every((t) => JSON.stringify(loopRows[t]) === JSON.stringify(rows[t]));
      ok &&= same && run.failed === 0;
      console.log(
        `| blockx ${name} | ${run.seconds.toFixed(2)} | ${rate(run.seconds)} | ${perBlock(run.count.requests)} | ${perBlock(run.count.calls)} | ${cpuPerBlock(run.cpuMs)} | ${cpuPerBlock(run.anvilMs)} | ${run.failed} | ${same ? 'yes' : 'NO'} | ${(loopSeconds / run.seconds).toFixed(2)}× |`,
      );
    }
    console.log(
      "\nSeconds: the loop from its client made; BlockX the job's own (its summary). Throughput against the " +
        "mean of the two loop runs (before and after the BlockX runs). Requests include the CLI's probe " +
        "(eth_chainId, eth_blockNumber). CPU: the loop's process (with the proxy); BlockX's blockx up tree, " +
        'the ingest CLI and the proxy. Anvil apart.\n',
    );
    return ok ? 0 : 1;
  } finally {
    await proxy.close();
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
