// bench/follow: how far behind the chain tables a follow job runs (docs/follow.md; issue 30's benchmark).
// A generated chain (`blockx data generate`, 200 blocks) on a SQLite file, `blockx up --workers 2`, and
// `blockx backfill examples/tasks/block-table-transfers.json --from 1 --follow --json` at the default poll
// interval (1000 ms) through the built CLI. Once it caught up:
//
//   npx tsx bench/follow.ts [--blocks 60] [--every 500] [--poll-interval 1000] [--idle-seconds 20]
//   npm run bench -- --only follow
//
//   (a) lag    the bench inserts a new canonical block every --every ms (the blocks row and its events,
//              copied from an earlier block with a new hash, in one transaction, as `blockx ingest`
//              commits a block); a block's lag is from that commit to the follower printing the block's
//              event, which it prints after the output rows were committed and the hash recorded. p50
//              and p99 over --blocks blocks, and p50 / poll interval (the goal: p50 ≤ poll + 200 ms).
//   (b) reorg  the top 3 blocks are replaced in one transaction (new hashes, every other event kept);
//              the time from that commit to the follower having run all three on their new hashes and
//              token_transfers holding exactly the new blocks' transfers (goal: ≤ 2 polls + 1 s).
//   (c) idle   CPU of the follower process (/proc/<pid>/stat) over --idle-seconds with the chain still,
//              as % of one core (goal: ≤ 2 %).
//
// The follower's lines are timed as they arrive in this process; the box's load changes every figure, so
// the table carries the load average. It exits 1 when a block is never run or the reorg never heals.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { BIN, REPO } from '../test/support/cli.js';
import { spawnTracked, stopGroup } from '../test/support/processes.js';
import { tokenTransfersOf } from '../src/services/storage/block-data/index.js';
import { benchEnv, startUp } from './lib/backfill-up.js';
import { cpuSnapshot } from './lib/proc-cpu.js';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '60' },
    every: { type: 'string', default: '500' },
    'poll-interval': { type: 'string', default: '1000' },
    'idle-seconds': { type: 'string', default: '20' },
  },
});
const BLOCKS = Number(values.blocks);
const EVERY_MS = Number(values.every);
const POLL_MS = Number(values['poll-interval']);
const IDLE_S = Number(values['idle-seconds']);
const CHAIN = 1;
const GENERATED = 200;
const STEP_MS = 120_000;

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-bench-follow-'));
const DB = path.join(dir, 'chain.db');
const env = benchEnv(`sqlite:${DB}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** When each (height, hash) was reported run by the follower, ms since the epoch. */
const ran = new Map<string, number>();
let follower: ChildProcess | undefined;

function startFollower(coordinator: string): void {
  const args = ['backfill', 'examples/tasks/block-table-transfers.json', '--from', '1', '--follow'];
  args.push('--poll-interval', String(POLL_MS), '--json', '--coordinator', coordinator);
  follower = spawnTracked(process.execPath, [BIN, ...args], { cwd: REPO, env });
  let partial = '';
  follower.stdout?.on('data', (d: Buffer) => {
    const at = Date.now();
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const e = JSON.parse(line) as { type: string; height?: number; hash?: string; state?: string };
      if (e.type === 'block' && e.state === 'SUCCEEDED') ran.set(`${e.height}:${e.hash}`, at);
    }
  });
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + STEP_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${STEP_MS} ms`);
    if (follower?.exitCode !== null) throw new Error(`${what}: the follower exited`);
    await sleep(5);
  }
}

type Row = Record<string, unknown>;
const hashOf = (n: number, tag: string) => `0x${tag}${n.toString(16).padStart(64 - tag.length, '0')}`;

/** The canonical chain's writer: new blocks and reorgs, each in one transaction. */
class Chain {
  private readonly db = new Database(DB);
  head: number;
  constructor() {
    this.db.pragma('busy_timeout = 10000');
    this.head = (
      this.db.prepare('SELECT max(number) AS n FROM blocks WHERE canonical = 1').get() as { n: number }
    ).n;
  }
  private block(n: number): Row {
    return this.db
      .prepare('SELECT * FROM blocks WHERE chain_id = ? AND number = ? AND canonical = 1')
      .get(CHAIN, n) as Row;
  }
  private eventsOf(block: Row): Row[] {
    return this.db
      .prepare('SELECT * FROM events WHERE chain_id = ? AND block_number = ? AND block_hash = ? ORDER BY idx')
      .all(CHAIN, block.number, block.hash) as Row[];
  }
  private insert(table: string, row: Row): void {
    const cols = Object.keys(row);
    this.db
      .prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`)
      .run(...cols.map((c) => row[c]));
  }
  /** Block `n` as a copy of generated block `from` (its events, every other one when `sparse`). */
  private put(n: number, hash: string, parent: string, from: number, sparse: boolean): void {
    const model = this.block(from);
    this.insert('blocks', { ...model, number: n, hash, parent_hash: parent, canonical: 1 });
    for (const e of this.eventsOf(model)) {
      if (!sparse || Number(e.idx) % 2 === 0)
        this.insert('events', { ...e, block_number: n, block_hash: hash });
    }
  }
  /** Appends the next block; returns its height and hash once committed. */
  append(): { n: number; hash: string } {
    const n = this.head + 1;
    const hash = hashOf(n, 'a1');
    this.db
      .transaction(() => this.put(n, hash, String(this.block(n - 1).hash), 1 + ((n - 1) % GENERATED), false))
      .immediate();
    this.head = n;
    return { n, hash };
  }
  /** Replaces the top `depth` blocks by a new branch; returns the new (height, hash) pairs. */
  reorg(depth: number): { n: number; hash: string }[] {
    const out: { n: number; hash: string }[] = [];
    this.db
      .transaction(() => {
        let parent = String(this.block(this.head - depth).hash);
        for (let n = this.head - depth + 1; n <= this.head; n++) {
          this.db
            .prepare('UPDATE blocks SET canonical = 0 WHERE chain_id = ? AND number = ? AND canonical = 1')
            .run(CHAIN, n);
          const hash = hashOf(n, 'b2');
          this.put(n, hash, parent, 1 + ((n - 1) % GENERATED), true);
          out.push({ n, hash });
          parent = hash;
        }
      })
      .immediate(); // the write lock first: a read lock upgraded later fails at once when a reader holds it
    return out;
  }
  /** Whether token_transfers holds exactly the canonical blocks' transfers at these heights. */
  outputMatches(heights: readonly number[]): boolean {
    for (const n of heights) {
      const events = this.eventsOf(this.block(n)).map((e) => ({
        ...e,
        topics: JSON.parse(String(e.topics)) as unknown,
      }));
      const want = tokenTransfersOf(events).length;
      const have = (
        this.db
          .prepare('SELECT count(*) AS c FROM token_transfers WHERE chain_id = ? AND block_number = ?')
          .get(CHAIN, n) as { c: number }
      ).c;
      if (want !== have) return false;
    }
    return true;
  }
  close(): void {
    this.db.close();
  }
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;

async function main(): Promise<void> {
  const { runBlockx } = await import('../test/support/cli.js');
  const gen = await runBlockx(['data', 'generate', '--chain', String(CHAIN), '--blocks', String(GENERATED)], {
    env,
    timeoutMs: STEP_MS,
  });
  if (gen.code !== 0) throw new Error(`data generate failed:\n${gen.stderr}`);
  const up = await startUp({ storageUrl: `sqlite:${DB}`, workers: 2 });
  const chain = new Chain();
  try {
    startFollower(up.coordinatorAddr);
    await until('the follower catching up with the generated chain', () => ran.size >= GENERATED);
    await sleep(2 * POLL_MS);

    // (a) lag at a steady rate
    const lags: number[] = [];
    const inserted: { n: number; hash: string; at: number }[] = [];
    const loadBefore = loadavg()[0] as number;
    for (let i = 0; i < BLOCKS; i++) {
      const started = Date.now();
      inserted.push({ ...chain.append(), at: Date.now() });
      await sleep(Math.max(0, EVERY_MS - (Date.now() - started)));
    }
    for (const b of inserted) {
      await until(`block ${b.n} run`, () => ran.has(`${b.n}:${b.hash}`));
      lags.push((ran.get(`${b.n}:${b.hash}`) as number) - b.at);
    }
    lags.sort((x, y) => x - y);

    // (b) a reorg of depth 3
    await sleep(2 * POLL_MS);
    const replaced = chain.reorg(3);
    const reorgAt = Date.now();
    await until('the reorg healed', () => replaced.every((b) => ran.has(`${b.n}:${b.hash}`)));
    const ranAll = Math.max(...replaced.map((b) => ran.get(`${b.n}:${b.hash}`) as number));
    const heights = replaced.map((b) => b.n);
    await until('the output equal to the new branch', () => chain.outputMatches(heights));
    const healedMs = Math.max(ranAll, Date.now()) - reorgAt;

    // (c) an idle follower
    await sleep(2 * POLL_MS);
    const pid = follower?.pid as number;
    const before = cpuSnapshot(pid);
    await sleep(IDLE_S * 1000);
    const after = cpuSnapshot(pid);
    const idlePercent = ((after.cpuMs - before.cpuMs) / (IDLE_S * 1000)) * 100;
    const loadAfter = loadavg()[0] as number;

    const p50 = quantile(lags, 0.5);
    const p99 = quantile(lags, 0.99);
    const fmt = (n: number) => n.toFixed(0);
    console.log(
      `## follow (poll interval ${POLL_MS} ms, a block every ${EVERY_MS} ms, ${BLOCKS} blocks, SQLite, load ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)})\n`,
    );
    console.log('| measure | figure | against the poll interval | goal |');
    console.log('| --- | --- | --- | --- |');
    console.log(
      `| lag p50, insert → output committed | ${fmt(p50)} ms | ${(p50 / POLL_MS).toFixed(2)}x | ≤ poll + 200 ms (${(POLL_MS + 200) / POLL_MS}x) |`,
    );
    console.log(`| lag p99 | ${fmt(p99)} ms | ${(p99 / POLL_MS).toFixed(2)}x | |`);
    console.log(`| lag min / max | ${fmt(lags[0] as number)} / ${fmt(lags.at(-1) as number)} ms | | |`);
    console.log(
      `| depth-3 reorg → output correct | ${fmt(healedMs)} ms | ${(healedMs / POLL_MS).toFixed(2)}x | ≤ 2 polls + 1 s (${(2 * POLL_MS + 1000) / POLL_MS}x) |`,
    );
    console.log(`| idle follower CPU over ${IDLE_S} s | ${idlePercent.toFixed(2)} % of a core | | ≤ 2 % |`);
  } finally {
    chain.close();
    if (follower) await stopGroup(follower, 'SIGTERM', 10_000);
    await up.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
