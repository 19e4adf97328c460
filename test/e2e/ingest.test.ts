// `blockx ingest` end to end (issue 29): Anvil with 200 blocks of transfers and a nested call each, a
// Coordinator and 2 Workers on etcd, the built CLI, a source whose bundleThreshold (100) the range passes, so
// the command runs it as it runs any long range by default: bundles of the source's bundleSize (20) in the
// middle, the edges per block (docs/ingest.md § Bundles by default). One Worker is SIGKILLed half-way; the
// command still finishes (its tasks are retried on the other Worker); the same command again skips
// everything; per block (--bundle-size 1) runs only what the split run did not journal as blocks; a --fresh
// run whose CLI is SIGKILLed half-way is resumed by the next. The four chain tables then equal what the node
// returns, with no duplicate rows — on SQLite and PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOfBlock } from '../../plugins/writers/chain-ingest-write/src/index.js';
import { BlockFetcher } from '../../src/services/chain-rpc/adapters/block-fetcher.js';
import { RpcClient } from '../../src/services/chain-rpc/adapters/rpc-client.js';
import { defaultSource, rpcSettingsOf } from '../../src/services/chain-rpc/source-settings.js';
import { loadConfig } from '../../src/kernel/config.js';
import { openStorage } from '../../src/services/storage/open-storage.js';
import {
  ANVIL_CHAIN_ID,
  populateChain,
  startAnvil,
  type AnvilNode,
  type PopulatedChain,
} from '../support/anvil.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { sharedPostgres, type TestPostgres } from '../support/shared-postgres.js';

const BLOCKS = 200;
/** The source's bundles: the range 0..202 runs as block 0, bundles 1..10 (blocks 1..200), blocks 201, 202. */
const BUNDLING = { bundleSize: 20, bundleThreshold: 100 };
const TABLES = ['blocks', 'transactions', 'events', 'traces'] as const;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let anvil: AnvilNode;
let chain: PopulatedChain;
let etcd: EtcdServer;
let pg: TestPostgres;
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-ingest-'));
/** The rows the node's answers map to, per table, as sorted JSON lines: what every database must hold. */
let expected: Record<string, string[]>;

beforeAll(async () => {
  [anvil, etcd, pg] = await Promise.all([startAnvil(), startEtcd(), sharedPostgres()]);
  chain = await populateChain(anvil, { blocks: BLOCKS, transfersPerBlock: 2 });
  const client = new RpcClient(rpcSettingsOf('expected', { ...defaultSource(), rpcUrl: anvil.url }));
  const fetcher = new BlockFetcher(client);
  expected = { blocks: [], transactions: [], events: [], traces: [] };
  for (let n = 0; n <= chain.to; n++) {
    const rows = rowsOfBlock(await fetcher.fetch(n, { traces: true }), ANVIL_CHAIN_ID);
    for (const t of TABLES) expected[t]?.push(...(rows[t] ?? []).map((r) => JSON.stringify(sortKeys(r))));
  }
  client.close();
  for (const t of TABLES) expected[t]?.sort();
}, 120_000);

afterAll(async () => {
  await anvil?.stop();
  await etcd?.stop();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function sortKeys(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).sort(([a], [b]) => a.localeCompare(b)));
}

async function tableRows(cluster: TestCluster): Promise<Record<string, string[]>> {
  const config = loadConfig({ configPath: cluster.configPath, env: cluster.env });
  const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  try {
    const out: Record<string, string[]> = {};
    for (const t of TABLES) {
      const rows: string[] = [];
      for await (const page of backend.scan(t, { where: { chain_id: ANVIL_CHAIN_ID } })) {
        for (const r of page) rows.push(JSON.stringify(sortKeys(r as Record<string, unknown>)));
      }
      out[t] = rows.sort();
    }
    return out;
  } finally {
    await backend.close();
  }
}

function ingestArgs(stateDir: string, more: string[] = []): string[] {
  return [
    'ingest',
    '--source',
    'anvil',
    '--from',
    '0',
    '--to',
    String(chain.to),
    '--json',
    '--state-dir',
    stateDir,
    ...more,
  ];
}

interface UnitLine {
  block?: number;
  bundle?: number;
  fromBlock?: number;
  toBlock?: number;
  state: string;
  workerAddr: string;
}

interface Summary {
  succeeded: number;
  failed: number;
  skipped: number;
  attempts: number;
  units: number;
}

function linesOf(stdout: string): { units: UnitLine[]; summary: Summary } {
  const lines = stdout.trim().split('\n');
  const last = JSON.parse(lines.at(-1) as string) as { summary: Summary };
  return { units: lines.slice(0, -1).map((l) => JSON.parse(l) as UnitLine), summary: last.summary };
}

/** `blockx ingest ARGS` spawned, and a way to wait for its end; `lines()` counts its stdout lines so far. */
function spawnIngest(cluster: TestCluster, args: string[]) {
  const child = cluster.spawnCli(args);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Run>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr })),
  );
  const lines = () => stdout.split('\n').length - 1;
  const waitLines = async (n: number) => {
    for (let i = 0; i < 600 && lines() < n; i++) await new Promise((r) => setTimeout(r, 50));
  };
  return { child, done, lines, waitLines };
}

const BACKENDS: readonly [string, () => Promise<string | undefined>][] = [
  ['SQLite', () => Promise.resolve(undefined)],
  ['PostgreSQL', () => pg.createDatabase('ingest')],
];

describe.each(BACKENDS)('blockx ingest on %s', (_name, storage) => {
  let cluster: TestCluster;

  beforeAll(async () => {
    const storageUrl = await storage();
    cluster = await startCluster({
      workers: 2,
      etcd,
      ...(storageUrl !== undefined ? { storageUrl } : {}),
      configPatch: (doc) => {
        doc['sources'] = { anvil: { rpcUrl: anvil.url, ...BUNDLING } };
      },
    });
    const migrate = await cluster.cli(['db', 'migrate']);
    expect(migrate.code, migrate.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('ingests 203 blocks as bundles and edges through 2 workers, survives a SIGKILLed worker, and reruns change nothing', async () => {
    const stateDir = path.join(dir, `state-${_name}`);
    const run = spawnIngest(cluster, ingestArgs(stateDir));
    // Half-way (by the unit lines printed: 13 units), a crash of worker 0.
    await run.waitLines(6);
    const linesAtKill = run.lines();
    await cluster.workers[0]?.kill('SIGKILL');
    const first = await run.done;
    expect(first.code, `${first.stderr}\n${cluster.output()}`).toBe(0);
    expect(linesAtKill).toBeLessThan(13);
    const { units, summary } = linesOf(first.stdout);
    // One line per task: block 0, bundles 1..10 of 20 blocks, blocks 201 and 202; each once, SUCCEEDED.
    const shape = units.map((u) =>
      u.block !== undefined ? `b${u.block}` : `u${u.bundle}:${u.fromBlock}-${u.toBlock}`,
    );
    const want = [
      'b0',
      ...Array.from({ length: 10 }, (_, i) => `u${i + 1}:${i * 20 + 1}-${i * 20 + 20}`),
      'b201',
      'b202',
    ];
    expect(shape.sort()).toEqual(want.sort());
    expect(units.every((u) => u.state === 'SUCCEEDED')).toBe(true);
    // Both workers had ingested tasks.
    expect(new Set(units.map((u) => u.workerAddr))).toEqual(new Set(cluster.workers.map((w) => w.addr)));
    expect(summary).toMatchObject({ succeeded: BLOCKS + 3, failed: 0, skipped: 0, units: 13 });
    expect(await tableRows(cluster)).toEqual(expected);

    // The same command again: both parts' journals hold every task, so nothing runs.
    const again = await cluster.cli(ingestArgs(stateDir), { timeoutMs: 110_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(linesOf(again.stdout).summary).toMatchObject({ skipped: BLOCKS + 3, succeeded: 0, attempts: 0 });
    expect(await tableRows(cluster)).toEqual(expected);

    // Per block: the per-block job is the split run's block part, so its edges (0, 201, 202) are skipped.
    const perBlock = await cluster.cli(ingestArgs(stateDir, ['--bundle-size', '1']), { timeoutMs: 110_000 });
    expect(perBlock.code, perBlock.stderr).toBe(0);
    const blockLines = linesOf(perBlock.stdout);
    expect(blockLines.units).toHaveLength(BLOCKS + 3);
    expect(blockLines.units.every((u) => u.block !== undefined)).toBe(true);
    expect(blockLines.summary).toMatchObject({ skipped: 3, succeeded: BLOCKS, failed: 0 });
    expect(await tableRows(cluster)).toEqual(expected);

    // A fresh run whose command is SIGKILLed half-way; the same command again resumes it.
    const killed = spawnIngest(cluster, ingestArgs(stateDir, ['--fresh']));
    await killed.waitLines(5);
    killed.child.kill('SIGKILL');
    await killed.done;
    const resumed = await cluster.cli(ingestArgs(stateDir), { timeoutMs: 110_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const r = linesOf(resumed.stdout).summary;
    expect(r.skipped).toBeGreaterThan(0);
    expect(r).toMatchObject({ succeeded: BLOCKS + 3 - r.skipped, failed: 0 });
    expect(await tableRows(cluster)).toEqual(expected);

    // Bundles of 50 over blocks 1..200 (a task each, its blocks in one transaction): the same rows again.
    const bundles = await cluster.cli(
      [
        'ingest',
        '--rpc',
        anvil.url,
        '--from',
        '1',
        '--to',
        '200',
        '--bundle-size',
        '50',
        '--json',
        '--fresh',
        '--state-dir',
        stateDir,
      ],
      { timeoutMs: 110_000 },
    );
    expect(bundles.code, bundles.stderr).toBe(0);
    const lines = bundles.stdout.trim().split('\n');
    // Four tasks (one line each), 200 blocks.
    expect(lines.slice(0, -1).map((l) => (JSON.parse(l) as { bundle: number }).bundle)).toEqual([1, 2, 3, 4]);
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ summary: { succeeded: 200, failed: 0 } });
    expect(await tableRows(cluster)).toEqual(expected);
  }, 240_000);

  it('a function decodes the ingested events with viem and an ABI (functions/erc20_transfers_abi.ts)', async () => {
    const template = path.join(dir, `abi-${_name}.json`);
    const block = { number: 0 };
    writeFileSync(
      template,
      JSON.stringify({
        functionCallConfig: {
          type: 'BlockTableCallConfig',
          config: { function: 'erc20_transfers_abi', table: 'events', chainId: ANVIL_CHAIN_ID, block },
        },
        resultHandler: {
          type: 'BlockWriteResultHandler',
          config: { table: 'token_transfers', chainId: ANVIL_CHAIN_ID, block },
        },
      }),
    );
    const args = ['backfill', template, '--from', String(chain.from), '--to', String(chain.to), '--json'];
    const r = await cluster.cli([...args, '--state-dir', path.join(dir, `abi-state-${_name}`)], {
      timeoutMs: 110_000,
    });
    expect(r.code, r.stderr + r.stdout.slice(-3000)).toBe(0);
    // What the node's logs say, decoded by hand: every log is a Transfer of the token.
    const logs = await anvil.rpc<{ topics: string[]; data: string; blockNumber: string; logIndex: string }[]>(
      'eth_getLogs',
      [{ fromBlock: `0x${chain.from.toString(16)}`, toBlock: `0x${chain.to.toString(16)}` }],
    );
    const want = logs
      .map((l) => ({
        block_number: Number(l.blockNumber),
        log_idx: Number(l.logIndex),
        token: chain.token,
        from_address: `0x${(l.topics[1] as string).slice(26)}`,
        to_address: `0x${(l.topics[2] as string).slice(26)}`,
        amount: BigInt(l.data).toString(),
      }))
      .map((row) => JSON.stringify(sortKeys({ chain_id: ANVIL_CHAIN_ID, ...row })))
      .sort();
    const config = loadConfig({ configPath: cluster.configPath, env: cluster.env });
    const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
    try {
      const got: string[] = [];
      for await (const page of backend.scan('token_transfers', { where: { chain_id: ANVIL_CHAIN_ID } })) {
        for (const row of page) got.push(JSON.stringify(sortKeys(row as Record<string, unknown>)));
      }
      expect(got.sort()).toEqual(want);
      expect(got).toHaveLength(BLOCKS * 3);
    } finally {
      await backend.close();
    }
  }, 180_000);
});
