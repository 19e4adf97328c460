// `blockx backfill --follow` against a real node (issue 30): Anvil with blocks of ERC-20 transfers,
// `blockx ingest` filling the chain tables, a Coordinator and 2 Workers on etcd, the built CLI. The
// follower runs the ingested range, then the blocks mined and ingested while it runs, then the heights an
// `anvil_reorg` of depth 3 (with other transactions) replaced once they are ingested again. After each
// step token_transfers equals an independent decode of the node's canonical logs, with no duplicates — on
// SQLite and PostgreSQL. The Coordinator serves its dashboard: the job shows there as its runner publishes
// it to etcd (running, its head, term and runner; the reorg; stopped once the runner ends), though the
// Coordinator opens no storage database.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOfBlock } from '../../plugins/writers/chain-ingest-write/src/index.js';
import { BlockFetcher } from '../../src/services/chain-rpc/adapters/block-fetcher.js';
import { RpcClient } from '../../src/services/chain-rpc/adapters/rpc-client.js';
import { defaultSource, rpcSettingsOf } from '../../src/services/chain-rpc/source-settings.js';
import { tokenTransfersOf } from '../../src/services/storage/block-data/index.js';
import {
  ANVIL_CHAIN_ID,
  ANVIL_TRANSFERS_TEMPLATE,
  populateChain,
  startAnvil,
  transferCalldata,
  type AnvilNode,
  type PopulatedChain,
  sendTransaction,
} from '../support/anvil.js';
import type { FollowJobView } from '../../src/contracts/dashboard.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { dashboardFollowJob } from '../support/follow-jobs.js';
import { freePort } from '../support/ports.js';
import { clusterTransferRows, transferRowText } from '../support/transfer-rows.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { sharedPostgres, type TestPostgres } from '../support/shared-postgres.js';

const STEP_MS = 60_000;

let etcd: EtcdServer;
let pg: TestPostgres;
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-follow-e2e-'));
const TEMPLATE = path.join(dir, 'transfers.json');

beforeAll(async () => {
  [etcd, pg] = await Promise.all([startEtcd(), sharedPostgres()]);
  writeFileSync(TEMPLATE, JSON.stringify(ANVIL_TRANSFERS_TEMPLATE));
}, 120_000);

afterAll(async () => {
  await etcd?.stop();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** token_transfers decoded independently from the node's canonical blocks 0..head. */
async function expectedFromNode(anvil: AnvilNode): Promise<string[]> {
  const client = new RpcClient(rpcSettingsOf('expected', { ...defaultSource(), rpcUrl: anvil.url }));
  try {
    const fetcher = new BlockFetcher(client);
    const head = Number(BigInt(await anvil.rpc<string>('eth_blockNumber')));
    const out: string[] = [];
    for (let n = 0; n <= head; n++) {
      const rows = rowsOfBlock(await fetcher.fetch(n, { traces: false }), ANVIL_CHAIN_ID);
      const events = (rows.events ?? []).map((e) => ({
        ...e,
        topics: typeof e.topics === 'string' ? (JSON.parse(e.topics) as unknown) : e.topics,
      }));
      for (const t of tokenTransfersOf(events))
        out.push(transferRowText(t as unknown as Record<string, unknown>));
    }
    return out.sort();
  } finally {
    client.close();
  }
}

const BACKENDS: readonly [string, () => Promise<string | undefined>][] = [
  ['SQLite', () => Promise.resolve(undefined)],
  ['PostgreSQL', () => pg.createDatabase('follow')],
];

describe.each(BACKENDS)('blockx backfill --follow on %s', (name, storage) => {
  let anvil: AnvilNode;
  let chain: PopulatedChain;
  let cluster: TestCluster;
  let follower: ChildProcess | undefined;
  let out = '';
  let dashboard = '';

  beforeAll(async () => {
    anvil = await startAnvil();
    chain = await populateChain(anvil, { blocks: 12, transfersPerBlock: 2, forwardedCall: false });
    const storageUrl = await storage();
    const port = await freePort();
    dashboard = `http://127.0.0.1:${port}/api/snapshot`;
    cluster = await startCluster({
      workers: 2,
      etcd,
      env: { BLOCKX_DASHBOARD_LISTEN_ADDR: `127.0.0.1:${port}` },
      ...(storageUrl !== undefined ? { storageUrl } : {}),
    });
    const migrate = await cluster.cli(['db', 'migrate']);
    expect(migrate.code, migrate.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    follower?.kill('SIGKILL');
    await cluster?.stop();
    await anvil?.stop();
  });

  async function ingest(from: number, to: number, tag: string): Promise<void> {
    const args = ['ingest', '--rpc', anvil.url, '--from', String(from), '--to', String(to)];
    const r = await cluster.cli([...args, '--state-dir', path.join(dir, `state-${name}-${tag}`), '--fresh']);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  }

  /** Resolves when the follower prints a caught-up line at `head` after output offset `after`. */
  async function caughtUp(head: number, after: number): Promise<void> {
    const deadline = Date.now() + STEP_MS;
    const re = new RegExp(`"type":"caught-up","head":${head},`);
    while (!re.test(out.slice(after))) {
      if (Date.now() > deadline) throw new Error(`no caught-up at ${head}:\n${out.slice(-3000)}`);
      if (follower?.exitCode !== null) throw new Error(`the follower exited:\n${out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Resolves when token_transfers equals `expected`. The guarantee holds once the chain tables settle
   * (docs/follow.md): a caught-up line can come while `ingest` is still committing the heights of a reorg,
   * so the output is read again until it matches or the step's deadline passes.
   */
  async function settlesTo(expected: string[]): Promise<void> {
    const deadline = Date.now() + STEP_MS;
    for (;;) {
      const rows = await clusterTransferRows(cluster);
      if (JSON.stringify(rows) === JSON.stringify(expected)) return;
      if (Date.now() > deadline || follower?.exitCode !== null) {
        expect(rows, `the output did not settle:\n${out.slice(-3000)}`).toEqual(expected);
        return;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** The Coordinator's dashboard's view of the follow job, once `check` accepts it (within a step). */
  const onDashboard = (jobId: string, check: (job: FollowJobView) => boolean) =>
    dashboardFollowJob(dashboard, check, { jobId, timeoutMs: STEP_MS });

  it(
    'follows new blocks and a depth-3 reorg with other transactions: the output equals the node’s canonical logs',
    async () => {
      await ingest(0, chain.to, 'range');
      follower = cluster.spawnCli([
        'backfill',
        TEMPLATE,
        '--from',
        '0',
        '--follow',
        '--finality',
        '8',
        '--poll-interval',
        '200',
        '--json',
      ]);
      follower.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      follower.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      await caughtUp(chain.to, 0);
      await settlesTo(await expectedFromNode(anvil));

      // One runner per job cluster-wide, by the etcd lease (etcd is configured): a second one is told
      // who holds it and exits 1; the job list names the runner.
      const second = await cluster.cli(['backfill', TEMPLATE, '--from', '0', '--follow', '--finality', '8']);
      expect(second.code, second.stderr).toBe(1);
      expect(second.stderr).toMatch(
        /job fl-[0-9a-f]{12} is being run by .+ pid \d+ \(lease until .+\); exiting/,
      );
      const listed = await cluster.cli(['jobs', 'list', '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      const jobId = (JSON.parse(listed.stdout.trim()) as { jobId: string }).jobId;
      expect(JSON.parse(listed.stdout.trim())).toMatchObject({
        state: 'running',
        runner: expect.stringMatching(/pid \d+/),
      });
      // The Coordinator's dashboard shows it from etcd: running, at the head, with its runner and term.
      const shown = await onDashboard(jobId, (j) => j.state === 'running' && j.head === chain.to);
      expect(shown).toMatchObject({
        kind: 'follow',
        chainId: ANVIL_CHAIN_ID,
        runner: expect.stringMatching(new RegExp(`pid ${follower.pid}$`)),
        term: expect.any(Number),
        lagBlocks: expect.any(Number),
        restarts: null,
      });

      // Transfers arriving while it runs: two more blocks, ingested.
      let mark = out.length;
      const accounts = await anvil.accounts();
      for (let i = 0; i < 2; i++) {
        await sendTransaction(anvil, {
          from: accounts[1] as string,
          to: chain.token,
          data: transferCalldata(accounts[2] as string, 7n + BigInt(i)),
        });
      }
      const head = Number(BigInt(await anvil.rpc<string>('eth_blockNumber')));
      await ingest(chain.to + 1, head, 'grow');
      await caughtUp(head, mark);
      const grown = await expectedFromNode(anvil);
      await settlesTo(grown);

      // anvil_reorg of depth 3, with one other transfer in the new branch's first block.
      mark = out.length;
      const other = {
        from: accounts[3],
        to: chain.token,
        data: transferCalldata(accounts[4] as string, 4242n),
      };
      await anvil.rpc('anvil_reorg', [3, [[other, 0]]]);
      await ingest(head - 2, head, 'reorg');
      await caughtUp(head, mark);
      const reorged = await expectedFromNode(anvil);
      expect(reorged).not.toEqual(grown);
      await settlesTo(reorged);
      expect(out.slice(mark)).toMatch(/"type":"reorg",/);
      expect(new Set(await clusterTransferRows(cluster)).size).toBe(reorged.length);
      const afterReorg = await onDashboard(jobId, (j) => j.reorgs >= 1 && j.head === head);
      // The tables change height by height as ingest writes the new branch: the follower may see the
      // depth-3 reorg as one or as several shallower ones.
      expect(afterReorg.lastReorg?.depth).toBeGreaterThanOrEqual(1);
      expect(afterReorg.deepestReorg).toBeLessThanOrEqual(3);

      // The runner stops (Ctrl-C): the dashboard shows the job stopped, with nobody running it.
      const exited = new Promise((r) => follower?.once('exit', r));
      follower.kill('SIGINT');
      await exited;
      const stopped = await onDashboard(jobId, (j) => j.state !== 'running');
      expect(stopped).toMatchObject({ state: 'stopped', runner: null, head, lastError: null });
    },
    5 * STEP_MS,
  );
});
