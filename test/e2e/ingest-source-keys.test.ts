// A provider's key never leaves the machines that hold it (issue 29; docs/ingest.md § Where the URL lives).
// The config of a Coordinator, 2 Workers on etcd and the CLI declares `sources.keyed` with a URL that
// holds a key (HTTP Basic, in front of Anvil through a proxy that notes every request's Authorization).
// `blockx ingest --source keyed` ingests the chain: every request to the node carried the key, so the
// Workers found the URL in their own config, and the tasks named only the source. One block fails on every
// attempt (HTTP 500 from the proxy), so error messages about the URL reach the task status, the output and
// the logs too. Then the key, and its Basic-encoded form, appear in none of: everything in etcd, the
// Coordinator's and the Workers' logs (at debug), the command's output, the job's journal, the cluster
// status, or the Workers' task status of every task. The masked URL does appear in the failure, so those
// places were looked at with the URL in them. A source only the command declares (issue 29: a missing
// source failed each block on its own) stops the job at the first block with one error naming the source
// and the Worker.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { loadConfig } from '../../src/kernel/config.js';
import { openStorage } from '../../src/services/storage/open-storage.js';
import { ANVIL_CHAIN_ID, populateChain, startAnvil, type AnvilNode } from '../support/anvil.js';
import { runBlockx } from '../support/cli.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { startFaultProxy, type FaultProxy } from '../support/rpc-fault-proxy.js';

const KEY = `k3y${randomBytes(12).toString('hex')}`;
const BASIC = `Basic ${Buffer.from(`ingest:${KEY}`).toString('base64')}`;
const BASIC_TOKEN = BASIC.slice('Basic '.length);

let anvil: AnvilNode;
let proxy: FaultProxy;
let etcd: EtcdServer;
let cluster: TestCluster;
let to: number;
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-ingest-keys-'));

beforeAll(async () => {
  [anvil, etcd] = await Promise.all([startAnvil(), startEtcd()]);
  const chain = await populateChain(anvil, { blocks: 20, transfersPerBlock: 1 });
  to = chain.to;
  proxy = await startFaultProxy(anvil.url);
  const port = new URL(proxy.url).port;
  cluster = await startCluster({
    workers: 2,
    etcd,
    // Every service logs at debug: whatever they say about a task is in the logs looked at below.
    env: { BLOCKX_LOG_LEVEL: 'debug' },
    configPatch: (doc) => {
      doc['sources'] = {
        keyed: {
          rpcUrl: `http://ingest:${KEY}@127.0.0.1:${port}/`,
          maxAttempts: 2,
          initialBackoffMs: 1,
          maxBackoffMs: 5,
        },
      };
    },
  });
  const migrate = await cluster.cli(['db', 'migrate']);
  expect(migrate.code, migrate.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
  await proxy?.close();
  await anvil?.stop();
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every file under `root`, as text. */
function filesText(root: string): string {
  let out = '';
  for (const name of readdirSync(root)) {
    const file = path.join(root, name);
    out += statSync(file).isDirectory() ? filesText(file) : `${readFileSync(file, 'utf8')}\n`;
  }
  return out;
}

describe('blockx ingest --source: the key stays on the machines that hold it', () => {
  it('ingests with the Workers’ own URL, and the key is in no task, log, status or etcd key', async () => {
    const failing = 5;
    const failingHex = `"0x${failing.toString(16)}"`;
    proxy.rule((body) =>
      body.includes('eth_getBlockByNumber') && body.includes(failingHex)
        ? { kind: 'status', status: 500 }
        : { kind: 'pass' },
    );
    const stateDir = path.join(dir, 'state');
    const args = ['ingest', '--source', 'keyed', '--from', '0', '--to', String(to), '--json'];
    const run = await cluster.cli([...args, '--state-dir', stateDir, '--retries', '1'], {
      timeoutMs: 120_000,
    });
    // The one block that fails on every attempt fails the job (exit 1); every other block is in.
    expect(run.code, `${run.stderr}\n${cluster.output()}`).toBe(1);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const units = lines.slice(0, -1) as {
      block: number;
      state: string;
      taskId: string;
      failureMessage?: string;
    }[];
    expect(units.filter((u) => u.state !== 'SUCCEEDED').map((u) => u.block)).toEqual([failing]);
    expect(lines.at(-1)).toMatchObject({ summary: { succeeded: to, failed: 1 } });
    // The failure names the source and its URL, masked: the places below do hold the URL.
    const masked = `source keyed (http://ingest:***@127.0.0.1:${new URL(proxy.url).port}/)`;
    expect(units.find((u) => u.block === failing)?.failureMessage).toContain(masked);

    // Every request to the node carried the key: the Workers read it from their own config.
    expect(proxy.authorizations.length).toBeGreaterThan(to);
    expect(new Set(proxy.authorizations)).toEqual(new Set([BASIC]));

    // The rows are in.
    const config = loadConfig({ configPath: cluster.configPath, env: cluster.env });
    const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
    try {
      const heights: number[] = [];
      for await (const page of backend.scan('blocks', { where: { chain_id: ANVIL_CHAIN_ID } })) {
        for (const r of page) heights.push(Number((r as { number: number }).number));
      }
      expect(heights.sort((a, b) => a - b)).toEqual(
        Array.from({ length: to + 1 }, (_, i) => i).filter((n) => n !== failing),
      );
    } finally {
      await backend.close();
    }

    // Where the key must not be.
    const raw = new Etcd3({ hosts: etcd.endpoint });
    const client = new BlockxClient({ coordinator: cluster.coordinatorAddr, rpcTimeoutMs: 10_000 });
    try {
      const etcdAll = await raw.getAll().strings();
      expect(Object.keys(etcdAll).length).toBeGreaterThan(0);
      const statuses: unknown[] = [];
      for (const u of units) {
        for (const w of cluster.workers) {
          statuses.push(await client.getResult(u.taskId, { workerAddr: w.addr }).catch(() => null));
        }
      }
      // The failed block's status holds the masked URL, as the output does.
      expect(JSON.stringify(statuses)).toContain('ingest:***@127.0.0.1');
      const places: Record<string, string> = {
        etcd: JSON.stringify(etcdAll),
        logs: cluster.output(),
        output: run.stdout + run.stderr,
        journal: filesText(stateDir),
        'cluster status': JSON.stringify(await cluster.status()),
        'task status': JSON.stringify(statuses),
      };
      expect(places.output).toContain('ingest:***@');
      for (const [where, text] of Object.entries(places)) {
        expect(text.includes(KEY), `the key is in ${where}`).toBe(false);
        expect(text.includes(BASIC_TOKEN), `the Basic-encoded key is in ${where}`).toBe(false);
      }
    } finally {
      client.close();
      raw.close();
    }

    // The node answers again: the rerun ingests the block left (the journal skips the rest).
    proxy.rule(() => ({ kind: 'pass' }));
    const rerun = await cluster.cli([...args, '--state-dir', stateDir], { timeoutMs: 120_000 });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout.trim().split('\n').at(-1) as string)).toMatchObject({
      summary: { succeeded: 1, failed: 0 },
    });
  }, 300_000);

  it('a source the Workers do not declare stops the job at the first block, with one error', async () => {
    // Only the command knows `local` (from its environment); neither Worker does.
    const run = await runBlockx(
      ['ingest', '--source', 'local', '--from', '0', '--to', String(to), '--concurrency', '2'],
      {
        env: { ...cluster.env, BLOCKX_SOURCE_LOCAL_RPC_URL: anvil.url },
        cwd: dir,
        timeoutMs: 120_000,
      },
    );
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(1);
    // One FAILED line (the first block that met it), one stop line naming the source and a Worker.
    const failedLines = run.stdout.split('\n').filter((l) => l.includes(' FAILED '));
    expect(failedLines, run.stdout).toHaveLength(1);
    const stops = run.stderr.split('\n').filter((l) => l.startsWith('blockx ingest: stopped'));
    expect(stops, run.stderr).toHaveLength(1);
    expect(stops[0]).toMatch(
      /^blockx ingest: stopped, nothing more started: the Worker at \S+ cannot ingest: /,
    );
    expect(stops[0]).toContain('source local');
    expect(stops[0]).toContain('SOURCE_NOT_DECLARED');
    const addrs = cluster.workers.map((w) => w.addr);
    expect(
      addrs.some((a) => stops[0]!.includes(a)),
      `${stops[0]} names none of ${addrs.join(', ')}`,
    ).toBe(true);
    // Most of the range was never started: the summary says so and a rerun would do it.
    const summary = run.stdout.trim().split('\n').at(-1) as string;
    expect(summary).toMatch(/(\d+) not run \(interrupted/);
    expect(Number(/(\d+) not run/.exec(summary)?.[1])).toBeGreaterThan(to - 4);
  }, 180_000);
});
