// `blockx ingest --follow` and `blockx backfill --follow` together (issue 30): Anvil with blocks of ERC-20
// transfers, a Coordinator and 2 Workers on etcd, the built CLI — on SQLite and PostgreSQL. The ingest
// follower keeps the chain tables equal to the node; the backfill follower keeps token_transfers equal to
// erc20_transfers over the canonical chain of those tables. After transfers arriving while both run, and
// anvil_reorg of depth 1 and 3 with other transactions, token_transfers is polled until it equals an
// independent decode of the node's eth_getLogs (never compared at one moment: the guarantee is "once the
// chain tables settle"), with no duplicates.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANVIL_TRANSFERS_TEMPLATE,
  TRANSFER_TOPIC,
  populateChain,
  startAnvil,
  transferCalldata,
  type AnvilNode,
  type PopulatedChain,
  sendTransaction,
} from '../support/anvil.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { clusterTransferRows } from '../support/transfer-rows.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { sharedPostgres, type TestPostgres } from '../support/shared-postgres.js';

const STEP_MS = 60_000;
const FINALITY = '10';

let etcd: EtcdServer;
let pg: TestPostgres;
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-ingest-backfill-follow-'));
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

/** The node's canonical Transfer logs decoded by hand: `block:logIndex token from→to amount`. */
async function expectedFromNode(anvil: AnvilNode): Promise<string[]> {
  const logs = await anvil.rpc<
    { address: string; topics: string[]; data: string; blockNumber: string; logIndex: string }[]
  >('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', topics: [TRANSFER_TOPIC] }]);
  const address = (word: string | undefined) => `0x${(word ?? '').slice(-40).toLowerCase()}`;
  return logs
    .map(
      (l) =>
        `${Number(BigInt(l.blockNumber))}:${Number(BigInt(l.logIndex))} ${l.address.toLowerCase()} ` +
        `${address(l.topics[1])}→${address(l.topics[2])} ${BigInt(l.data).toString()}`,
    )
    .sort();
}

const BACKENDS: readonly [string, () => Promise<string | undefined>][] = [
  ['SQLite', () => Promise.resolve(undefined)],
  ['PostgreSQL', () => pg.createDatabase('ingest_backfill_follow')],
];

describe.each(BACKENDS)('ingest --follow and backfill --follow on %s', (name, storage) => {
  let anvil: AnvilNode;
  let chain: PopulatedChain;
  let cluster: TestCluster;
  const followers: ChildProcess[] = [];
  let out = '';

  beforeAll(async () => {
    anvil = await startAnvil();
    chain = await populateChain(anvil, { blocks: 12, transfersPerBlock: 2, forwardedCall: false });
    const storageUrl = await storage();
    cluster = await startCluster({ workers: 2, etcd, ...(storageUrl !== undefined ? { storageUrl } : {}) });
    const migrate = await cluster.cli(['db', 'migrate']);
    expect(migrate.code, migrate.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    for (const f of followers) f.kill('SIGKILL');
    await cluster?.stop();
    await anvil?.stop();
  });

  function spawn(args: string[]): void {
    const child = cluster.spawnCli(args);
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    followers.push(child);
  }

  /** Polls until token_transfers equals the node's decoded logs, or fails at the deadline. */
  async function settled(step: string): Promise<string[]> {
    const deadline = Date.now() + STEP_MS;
    for (;;) {
      const [want, got] = [await expectedFromNode(anvil), await clusterTransferRows(cluster)];
      if (JSON.stringify(want) === JSON.stringify(got)) return got;
      if (Date.now() > deadline) expect(got, `${step}\n${out.slice(-3000)}`).toEqual(want);
      for (const f of followers) {
        if (f.exitCode !== null) throw new Error(`${step}: a follower exited:\n${out.slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  it(
    'the output equals the decode of the node’s canonical logs after transfers and reorgs of depth 1 and 3',
    async () => {
      const common = ['--finality', FINALITY, '--poll-interval', '200', '--json'];
      spawn([
        'ingest',
        '--rpc',
        anvil.url,
        '--from',
        '0',
        '--follow',
        ...common,
        '--state-dir',
        path.join(dir, name),
      ]);
      spawn(['backfill', TEMPLATE, '--from', '0', '--follow', ...common]);
      const first = await settled('initial chain');
      expect(first.length).toBeGreaterThanOrEqual(24);

      const accounts = await anvil.accounts();
      for (let i = 0; i < 3; i++) {
        await sendTransaction(anvil, {
          from: accounts[1] as string,
          to: chain.token,
          data: transferCalldata(accounts[2] as string, 500n + BigInt(i)),
        });
      }
      const grown = await settled('transfers');
      expect(grown.length).toBe(first.length + 3);

      for (const depth of [1, 3]) {
        const txs = Array.from({ length: depth }, (_, i) => [
          {
            from: accounts[3],
            to: chain.token,
            data: transferCalldata(accounts[4] as string, BigInt(depth * 1000 + i)),
          },
          i,
        ]);
        const before = await expectedFromNode(anvil);
        await anvil.rpc('anvil_reorg', [depth, txs]);
        const after = await expectedFromNode(anvil);
        expect(after).not.toEqual(before);
        const rows = await settled(`reorg of depth ${depth}`);
        expect(new Set(rows).size).toBe(rows.length);
      }
      expect(out).toMatch(/"type":"reorg"/);
    },
    6 * STEP_MS,
  );
});
