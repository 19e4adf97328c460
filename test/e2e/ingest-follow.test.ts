// `blockx ingest --follow` against a real node (issue 30, item 1): Anvil with blocks of ERC-20 transfers, a
// Coordinator and 2 Workers on etcd, the built CLI — on SQLite and PostgreSQL. The follower ingests the
// chain, then transfers arriving while it runs, then heals anvil_reorg of depth 1, 3 and 8 (other
// transactions in the new branches) and an anvil_rollback that makes the chain shorter. After each step,
// polled until it holds (the guarantee is "once the chain tables settle"): the blocks table's canonical
// (height, hash) set equals the node's chain, exactly the orphaned hashes are non-canonical (their rows
// kept), and the events of the canonical blocks equal the node's eth_getLogs decoded independently. A second
// follower of the job says who holds it and exits; the follower SIGKILLed and restarted with another
// --state-dir resumes from the store; a reorg deeper than the finality stops it with the documented error
// and writes nothing.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/kernel/config.js';
import { openStorage } from '../../src/services/storage/open-storage.js';
import {
  ANVIL_CHAIN_ID,
  populateChain,
  startAnvil,
  transferCalldata,
  type AnvilNode,
  type PopulatedChain,
  sendTransaction,
} from '../support/anvil.js';
import { startCluster, type TestCluster } from '../support/cluster.js';
import { startEtcd, type EtcdServer } from '../support/etcd.js';
import { sharedPostgres, type TestPostgres } from '../support/shared-postgres.js';

const STEP_MS = 60_000;
const FINALITY = 10;

let etcd: EtcdServer;
let pg: TestPostgres;
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-ingest-follow-'));

beforeAll(async () => {
  [etcd, pg] = await Promise.all([startEtcd(), sharedPostgres()]);
}, 120_000);

afterAll(async () => {
  await etcd?.stop();
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  logIndex: string;
  transactionHash: string;
}

/** The node's canonical chain: height → hash, and its logs decoded by hand into event rows (as text). */
async function nodeState(anvil: AnvilNode): Promise<{ chain: Map<number, string>; events: string[] }> {
  const head = Number(BigInt(await anvil.rpc<string>('eth_blockNumber')));
  const chain = new Map<number, string>();
  for (let n = 0; n <= head; n++) {
    const b = await anvil.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
    chain.set(n, b.hash.toLowerCase());
  }
  const logs = await anvil.rpc<RpcLog[]>('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]);
  const events = logs.map((l) =>
    [
      Number(BigInt(l.blockNumber)),
      l.blockHash.toLowerCase(),
      Number(BigInt(l.logIndex)),
      l.transactionHash.toLowerCase(),
      l.address.toLowerCase(),
      l.topics[0] ?? '',
      JSON.stringify(l.topics),
      l.data,
    ].join(' '),
  );
  return { chain, events: events.sort() };
}

interface Stored {
  canonical: Map<number, string>;
  nonCanonical: Set<string>;
  /** Events of the canonical blocks, as text rows like nodeState's. */
  events: string[];
  /** Every row of blocks and events, for "nothing written". */
  all: string[];
}

async function storedState(cluster: TestCluster): Promise<Stored> {
  const config = loadConfig({ configPath: cluster.configPath, env: cluster.env });
  const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  try {
    const canonical = new Map<number, string>();
    const nonCanonical = new Set<string>();
    const all: string[] = [];
    for await (const page of backend.scan('blocks', { where: { chain_id: ANVIL_CHAIN_ID } })) {
      for (const r of page) {
        all.push(JSON.stringify(r));
        const isCanonical = r.canonical === true || r.canonical === 1;
        if (!isCanonical) nonCanonical.add(String(r.hash));
        else if (canonical.has(Number(r.number)))
          throw new Error(`two canonical blocks at ${String(r.number)}`);
        else canonical.set(Number(r.number), String(r.hash));
      }
    }
    const canonicalHashes = new Set(canonical.values());
    const events: string[] = [];
    for await (const page of backend.scan('events', { where: { chain_id: ANVIL_CHAIN_ID } })) {
      for (const r of page) {
        all.push(JSON.stringify(r));
        if (!canonicalHashes.has(String(r.block_hash))) continue;
        const topics = typeof r.topics === 'string' ? r.topics : JSON.stringify(r.topics);
        events.push(
          [r.block_number, r.block_hash, r.idx, r.tx_hash, r.contract_id, r.selector, topics, r.data]
            .map(String)
            .join(' '),
        );
      }
    }
    return { canonical, nonCanonical, events: events.sort(), all: all.sort() };
  } finally {
    await backend.close();
  }
}

const BACKENDS: readonly [string, () => Promise<string | undefined>][] = [
  ['SQLite', () => Promise.resolve(undefined)],
  ['PostgreSQL', () => pg.createDatabase('ingest_follow')],
];

describe.each(BACKENDS)('blockx ingest --follow on %s', (name, storage) => {
  let anvil: AnvilNode;
  let chain: PopulatedChain;
  let cluster: TestCluster;
  let follower: ChildProcess | undefined;
  let out = '';
  /** Every hash the node had as canonical at a settled step: what the store may hold. */
  const seen = new Set<string>();

  beforeAll(async () => {
    anvil = await startAnvil();
    chain = await populateChain(anvil, { blocks: 14, transfersPerBlock: 2, forwardedCall: false });
    const storageUrl = await storage();
    cluster = await startCluster({ workers: 2, etcd, ...(storageUrl !== undefined ? { storageUrl } : {}) });
    const migrate = await cluster.cli(['db', 'migrate']);
    expect(migrate.code, migrate.stderr).toBe(0);
  }, 180_000);
  afterAll(async () => {
    follower?.kill('SIGKILL');
    await cluster?.stop();
    await anvil?.stop();
  });

  function startFollower(stateDir: string, more: string[] = []): ChildProcess {
    const child = cluster.spawnCli([
      'ingest',
      '--rpc',
      anvil.url,
      '--from',
      '0',
      '--follow',
      '--finality',
      String(FINALITY),
      '--poll-interval',
      '200',
      '--json',
      '--state-dir',
      path.join(dir, `${name}-${stateDir}`),
      ...more,
    ]);
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    return child;
  }

  /** Polls until the store equals the node (canonical set, orphans, canonical events), or fails at the deadline. */
  async function settled(step: string): Promise<Stored> {
    const deadline = Date.now() + STEP_MS;
    for (;;) {
      const node = await nodeState(anvil);
      const stored = await storedState(cluster);
      const orphans = [...seen].filter((h) => ![...node.chain.values()].includes(h));
      const equal =
        JSON.stringify([...stored.canonical].sort()) === JSON.stringify([...node.chain].sort()) &&
        JSON.stringify([...stored.nonCanonical].sort()) === JSON.stringify(orphans.sort()) &&
        JSON.stringify(stored.events) === JSON.stringify(node.events);
      if (equal) {
        for (const h of node.chain.values()) seen.add(h);
        return stored;
      }
      if (Date.now() > deadline) {
        expect([...stored.canonical].sort(), `${step}: canonical blocks`).toEqual([...node.chain].sort());
        expect([...stored.nonCanonical].sort(), `${step}: non-canonical blocks`).toEqual(orphans.sort());
        expect(stored.events, `${step}: canonical events`).toEqual(node.events);
      }
      if (follower?.exitCode !== null) throw new Error(`${step}: the follower exited:\n${out.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Resolves when the follower's output after `after` matches `re` (it may print just after the store settles). */
  async function printed(re: RegExp, after: number): Promise<void> {
    const deadline = Date.now() + STEP_MS;
    while (!re.test(out.slice(after))) {
      if (Date.now() > deadline) throw new Error(`no ${String(re)} in:\n${out.slice(after).slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function transfer(amount: bigint, from = 1): Promise<void> {
    const accounts = await anvil.accounts();
    await sendTransaction(anvil, {
      from: accounts[from] as string,
      to: chain.token,
      data: transferCalldata(accounts[5] as string, amount),
    });
  }

  /** anvil_reorg of `depth`, one other transfer in each new block. */
  async function reorg(depth: number, tag: number): Promise<void> {
    const accounts = await anvil.accounts();
    const txs = Array.from({ length: depth }, (_, i) => [
      {
        from: accounts[6],
        to: chain.token,
        data: transferCalldata(accounts[7] as string, BigInt(tag * 100 + i)),
      },
      i,
    ]);
    await anvil.rpc('anvil_reorg', [depth, txs]);
  }

  it(
    'follows new blocks, heals reorgs of depth 1, 3, 8 and a shorter chain, resumes after SIGKILL, refuses a reorg deeper than finality',
    async () => {
      follower = startFollower('a');
      await settled('initial chain');
      await printed(/"type":"caught-up"/, 0);

      // Transfers arriving while it runs (automine: a block each).
      await transfer(11n);
      await transfer(12n, 2);
      await settled('transfers');

      // A second follower of the same job: says who holds it and exits 1.
      const second = await cluster.cli(
        ['ingest', '--rpc', anvil.url, '--from', '0', '--follow', '--finality', String(FINALITY)],
        { timeoutMs: 30_000 },
      );
      expect(second.code, second.stderr).toBe(1);
      expect(second.stderr).toMatch(
        /job ig-[0-9a-f]{12} is being run by .* pid \d+( \(lease until [^)]*\))?; exiting/,
      );

      for (const [depth, tag] of [
        [1, 1],
        [3, 2],
        [8, 3],
      ] as const) {
        const mark = out.length;
        const before = await nodeState(anvil);
        await reorg(depth, tag);
        const after = await nodeState(anvil);
        const replaced = [...before.chain].filter(([n, h]) => after.chain.get(n) !== h);
        expect(replaced).toHaveLength(depth);
        await settled(`reorg of depth ${depth}`);
        await printed(/"type":"reorg"/, mark);
        const lines = out
          .slice(mark)
          .split('\n')
          .filter((l) => l.includes('"type":"reorg"'));
        expect(lines.length, out.slice(mark)).toBeGreaterThanOrEqual(1);
        expect(JSON.parse(lines.at(-1) as string)).toMatchObject({
          depth,
          height: (replaced[0] as [number, string])[0],
        });
      }

      // A chain that gets shorter: rolled back by 3, then one new block (other transactions).
      let mark = out.length;
      await anvil.rpc('anvil_rollback', [3]);
      await transfer(77n, 3);
      await settled('shorter chain');
      await printed(/"type":"reorg","ancestor":\d+,"height":\d+,"depth":3,/, mark);

      // SIGKILLed, the chain moves on (and reorganises) while it is down; restarted with another state dir
      // it waits for the dead follower's lease, resumes from the store, and settles again.
      follower.kill('SIGKILL');
      await new Promise((r) => follower?.once('close', r));
      await transfer(21n);
      await transfer(22n);
      await reorg(1, 4);
      mark = out.length;
      follower = startFollower('b', ['--wait-for-lock']);
      await settled('restart');
      expect(out.slice(mark)).toMatch(/resumes at block \d+/);
      expect(out.slice(mark)).not.toMatch(/"height":0,/);

      // A reorg deeper than the finality: the documented error, exit 1, nothing written.
      const head = Number(BigInt(await anvil.rpc<string>('eth_blockNumber')));
      // Caught up with the head: finalized = head − FINALITY.
      await printed(new RegExp(`"type":"caught-up","head":${head},`), mark);
      const before = await storedState(cluster);
      const exited = new Promise<number | null>((r) => follower?.once('close', (code) => r(code)));
      await reorg(FINALITY + 2, 5);
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), STEP_MS))]);
      expect(code, out.slice(-3000)).toBe(1);
      const final = head - FINALITY;
      expect(out).toMatch(
        new RegExp(
          `reorg deeper than finality \\(${FINALITY} blocks\\): block ${final} is stored as ${before.canonical.get(final)}, ` +
            `final since the follower caught up with head ${head}, but the node now says 0x[0-9a-f]{64}; stopped without writing`,
        ),
      );
      expect((await storedState(cluster)).all).toEqual(before.all);
      follower = undefined;
    },
    10 * STEP_MS,
  );
});
