// `blockx ingest --follow --ws URL` against Anvil's WebSocket endpoint (issue 30): a Coordinator and 2
// Workers, SQLite. With a poll interval of 10 minutes, transfers mined while the follower runs reach the
// blocks table within seconds: only the node's new-heads announcements (eth_subscribe newHeads) can have
// asked for them. With a WebSocket URL nothing listens on, the follower says so and follows by polling.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/kernel/config.js';
import { openStorage } from '../../src/services/storage/open-storage.js';
import {
  ANVIL_CHAIN_ID,
  populateChain,
  sendTransaction,
  startAnvil,
  transferCalldata,
  type AnvilNode,
  type PopulatedChain,
} from '../support/anvil.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

/** Far longer than any step may take: a block that lands within a step was not polled for. */
const POLL_MS = 600_000;
const STEP_MS = 45_000;
const dir = mkdtempSync(path.join(tmpdir(), 'blockx-ingest-follow-ws-'));

let anvil: AnvilNode;
let chain: PopulatedChain;
let cluster: TestCluster;
const followers: ChildProcess[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  chain = await populateChain(anvil, { blocks: 4, transfersPerBlock: 1, forwardedCall: false });
  cluster = await startCluster({ workers: 2 });
  const migrate = await cluster.cli(['db', 'migrate']);
  expect(migrate.code, migrate.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  for (const f of followers) f.kill('SIGKILL');
  await cluster?.stop();
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The canonical (height, hash) pairs of the blocks table, and the node's chain. */
async function chains(): Promise<{ stored: string[]; node: string[] }> {
  const config = loadConfig({ configPath: cluster.configPath, env: cluster.env });
  const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
  const stored: string[] = [];
  try {
    for await (const page of backend.scan('blocks', { where: { chain_id: ANVIL_CHAIN_ID, canonical: true } }))
      for (const r of page) stored.push(`${String(r.number)} ${String(r.hash)}`);
  } finally {
    await backend.close();
  }
  const head = Number(BigInt(await anvil.rpc<string>('eth_blockNumber')));
  const node: string[] = [];
  for (let n = 0; n <= head; n++) {
    const b = await anvil.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false]);
    node.push(`${n} ${b.hash.toLowerCase()}`);
  }
  return { stored: stored.sort(), node: node.sort() };
}

async function follow(ws: string, pollMs: number, label: string): Promise<{ output: () => string }> {
  let out = '';
  const child = cluster.spawnCli([
    'ingest',
    '--rpc',
    anvil.url,
    '--ws',
    ws,
    '--from',
    '0',
    '--follow',
    '--finality',
    '3',
    '--poll-interval',
    String(pollMs),
    '--state-dir',
    path.join(dir, label),
  ]);
  followers.push(child);
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { output: () => out };
}

async function until(
  what: string,
  check: () => Promise<boolean> | boolean,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + STEP_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen:\n${output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const equal = async (): Promise<boolean> => {
  const { stored, node } = await chains();
  return JSON.stringify(stored) === JSON.stringify(node);
};

async function transfer(amount: bigint): Promise<void> {
  const accounts = await anvil.accounts();
  await sendTransaction(anvil, {
    from: accounts[1] as string,
    to: chain.token,
    data: transferCalldata(accounts[5] as string, amount),
  });
}

describe('blockx ingest --follow --ws', () => {
  it(
    'ingests each new block as the node announces it, with a poll interval of 10 minutes',
    async () => {
      const f = await follow(anvil.url.replace(/^http/, 'ws'), POLL_MS, 'ws');
      await until('the initial chain stored', equal, f.output);
      await until(
        'the subscription live',
        () => /new heads announced over ws:\/\//.test(f.output()),
        f.output,
      );
      for (const amount of [21n, 22n, 23n]) {
        await transfer(amount); // automine: a block each, announced over the socket
        await until(`the block of transfer ${amount} stored`, equal, f.output);
      }
      // The first poll ran at the start; no other was due within the test.
      expect(f.output()).not.toMatch(/no new heads over/);
      // Stopped (its lease freed) before the next test follows the same job.
      const child = followers.pop() as ChildProcess;
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
    4 * STEP_MS,
  );

  it(
    'follows by polling when the WebSocket cannot be opened, and says so',
    async () => {
      const f = await follow('ws://127.0.0.1:1', 200, 'poll');
      await until(
        'the fallback said',
        () => /no new heads over ws:\/\/127\.0\.0\.1:1\/?: .*; polling every 200 ms/.test(f.output()),
        f.output,
      );
      await transfer(31n);
      await until('the new block stored by polling', equal, f.output);
    },
    3 * STEP_MS,
  );
});
