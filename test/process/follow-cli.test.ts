// Process-level test of `blockx backfill --follow` and `blockx jobs` (issue 30; docs/follow.md) against a
// real one-machine cluster over a generated chain in a SQLite file: the follower runs the range, then new
// blocks as `blockx data generate --from` adds them, re-runs the heights a reorg replaced (`blockx data
// load` flips `canonical` in one transaction), removes the outputs of heights a reorg took away, refuses
// a second runner of the same job, takes over from a SIGKILLed one once its lease expires, stops on
// `blockx jobs stop`, resumes from the state in the database,
// and stops with REORG_BEYOND_FINALITY on a reorg deeper than the finality depth. After each step the output
// table equals token_transfers recomputed from the canonical blocks' events.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenTransfersOf } from '../../src/services/storage/block-data/index.js';
import { BIN, REPO, startBlockxUp, type BlockxUp } from '../support/blockx-up.js';
import { captureOutput, spawnTracked, stopGroup, waitForExit, waitForLine } from '../support/processes.js';

const TRANSFERS = 'examples/tasks/block-table-transfers.json';
const FINALITY = 5;
const STEP = 90_000;

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-follow-'));
const DB = path.join(dir, 'chain.db');

function cleanEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_|TASK_DEADLINE_MS|MAX_TASK_TIMEOUT_MS|RESULT_RETENTION_MS)/.test(
          k,
        ),
    ),
  );
  return { ...env, BLOCKX_STORAGE_URL: `sqlite:${DB}` };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function blockx(args: string[]): Promise<Run> {
  const child = spawnTracked(process.execPath, [BIN, ...args], { cwd: REPO, env: cleanEnv() });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function ok(args: string[]): Promise<Run> {
  const r = await blockx(args);
  expect(r.code, `blockx ${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

/** `block:log_idx token from→to amount` of every row the canonical chain should produce, sorted. */
function expectedRows(db: Database.Database): string[] {
  const canonical = db
    .prepare('SELECT number, hash FROM blocks WHERE chain_id = 1 AND canonical = 1 AND number >= 1')
    .all() as { number: number; hash: string }[];
  const events = db.prepare(
    'SELECT * FROM events WHERE chain_id = 1 AND block_number = ? AND block_hash = ? ORDER BY idx',
  );
  const out: string[] = [];
  for (const b of canonical) {
    const rows = (events.all(b.number, b.hash) as Record<string, unknown>[]).map((e) => ({
      ...e,
      topics: typeof e.topics === 'string' ? (JSON.parse(e.topics) as unknown) : e.topics,
    }));
    for (const t of tokenTransfersOf(rows)) out.push(rowText(t as unknown as Record<string, unknown>));
  }
  return out.sort();
}

function rowText(r: Record<string, unknown>): string {
  return `${String(r.block_number)}:${String(r.log_idx)} ${String(r.token)} ${String(r.from_address)}→${String(r.to_address)} ${String(r.amount)}`;
}

function outputRows(db: Database.Database): string[] {
  return (db.prepare('SELECT * FROM token_transfers WHERE chain_id = 1').all() as Record<string, unknown>[])
    .map(rowText)
    .sort();
}

/** The output table equals the function over the canonical chain (and is not trivially empty). */
function expectOutputEqualsCanonical(): void {
  const db = new Database(DB, { readonly: true });
  try {
    const expected = expectedRows(db);
    expect(expected.length).toBeGreaterThan(0);
    expect(outputRows(db)).toEqual(expected);
  } finally {
    db.close();
  }
}

function blockRow(n: number): Record<string, unknown> {
  const db = new Database(DB, { readonly: true });
  try {
    return db
      .prepare('SELECT * FROM blocks WHERE chain_id = 1 AND number = ? AND canonical = 1')
      .get(n) as Record<string, unknown>;
  } finally {
    db.close();
  }
}

function eventsOf(n: number, hash: string): Record<string, unknown>[] {
  const db = new Database(DB, { readonly: true });
  try {
    return db
      .prepare('SELECT * FROM events WHERE chain_id = 1 AND block_number = ? AND block_hash = ?')
      .all(n, hash) as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

const jsonl = (rows: readonly Record<string, unknown>[]) =>
  rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const newHash = (n: number, tag: string) =>
  `0x${tag.repeat(8)}${n.toString(16).padStart(64 - tag.length * 8, '0')}`;

/**
 * Replaces blocks from..to by a new branch (new hashes, linked by parent hash; each new block keeps the
 * even-indexed events of the one it replaces), and shortens the chain to `to - drop`: the old blocks
 * become non-canonical in one load of the blocks table.
 */
async function reorg(from: number, to: number, tag: string, drop = 0): Promise<void> {
  const blocks: Record<string, unknown>[] = [];
  const events: Record<string, unknown>[] = [];
  let parent = String(blockRow(from - 1).hash);
  for (let n = from; n <= to; n++) {
    const old = blockRow(n);
    blocks.push({ ...old, canonical: false });
    if (n > to - drop) continue;
    const hash = newHash(n, tag);
    blocks.push({ ...old, hash, parent_hash: parent, canonical: true });
    for (const e of eventsOf(n, String(old.hash))) {
      if (Number(e.idx) % 2 === 0)
        events.push({ ...e, block_hash: hash, topics: JSON.parse(String(e.topics)) as unknown });
    }
    parent = hash;
  }
  const file = path.join(dir, `reorg-${tag}`);
  if (events.length > 0) {
    writeFileSync(`${file}-events.jsonl`, jsonl(events));
    await ok(['data', 'load', '--table', 'events', `${file}-events.jsonl`]);
  }
  writeFileSync(
    `${file}-blocks.jsonl`,
    jsonl(blocks.map((b) => ({ ...b, canonical: Boolean(b.canonical) }))),
  );
  await ok(['data', 'load', '--table', 'blocks', `${file}-blocks.jsonl`]);
}

describe('blockx backfill --follow against `blockx up`', () => {
  let up: BlockxUp;
  let follower: ChildProcess | undefined;
  let out: ReturnType<typeof captureOutput> | undefined;
  let jobId = '';

  const followArgs = () => [
    'backfill',
    TRANSFERS,
    '--from',
    '1',
    '--follow',
    '--finality',
    String(FINALITY),
    '--poll-interval',
    '200',
    '--json',
    '--coordinator',
    up.coordinator,
  ];

  function startFollower(more: string[] = []): void {
    follower = spawnTracked(process.execPath, [BIN, ...followArgs(), ...more], {
      cwd: REPO,
      env: cleanEnv(),
    });
    out = captureOutput(follower, 2_000_000);
  }

  /** Waits until the follower says it caught up with `head` (a caught-up line printed after `after` chars). */
  async function caughtUp(head: number, after = 0): Promise<void> {
    const deadline = Date.now() + STEP;
    const re = new RegExp(`"type":"caught-up","head":${head},`);
    while (!re.test(out?.text().slice(after) ?? '')) {
      if (Date.now() > deadline)
        throw new Error(`no caught-up at head ${head}:\n${out?.text().slice(-3000)}`);
      if (follower?.exitCode !== null) throw new Error(`the follower exited:\n${out?.text().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Waits for the follower to exit; fails with its output when it does not within a step. */
  async function exited(): Promise<number | null> {
    const child = follower as ChildProcess;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the follower did not exit:\n${out?.text().slice(-3000)}`)),
        STEP,
      );
    });
    try {
      await Promise.race([waitForExit(child), late]);
    } finally {
      clearTimeout(timer);
    }
    return child.exitCode;
  }

  beforeAll(async () => {
    await ok(['data', 'generate', '--chain', '1', '--blocks', '40']);
    up = await startBlockxUp(cleanEnv());
  }, 240_000);

  afterAll(async () => {
    if (follower) await stopGroup(follower, 'SIGKILL', 1_000);
    if (up) await stopGroup(up.child, 'SIGTERM', 10_000);
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it(
    'runs the range (resuming after a SIGKILL), then new blocks, re-runs a reorg, removes what a shorter chain lost; one runner per job',
    async () => {
      // SIGKILLed after its first blocks: the restarted follower waits for the dead one's lease to expire
      // (--wait-for-lock), then resumes from the state in the database.
      startFollower();
      await waitForLine(follower as ChildProcess, /"type":"block","height":\d+,"hash":"0x/, STEP);
      await stopGroup(follower as ChildProcess, 'SIGKILL', 1_000);
      startFollower(['--wait-for-lock']);
      await caughtUp(40);
      expect(out?.text()).toMatch(/is being run by .* pid \d+ \(lease until .*\); waiting/);
      expectOutputEqualsCanonical();
      jobId = /following as job (fl-[0-9a-f]{12})/.exec(out?.text() ?? '')?.[1] ?? '';
      expect(jobId).toMatch(/^fl-[0-9a-f]{12}$/);

      // New blocks.
      let mark = out?.text().length ?? 0;
      await ok(['data', 'generate', '--chain', '1', '--from', '41', '--blocks', '5']);
      await caughtUp(45, mark);
      expectOutputEqualsCanonical();

      // A reorg of depth 3 with other transactions: heights 43..45 run again on the new hashes.
      mark = out?.text().length ?? 0;
      await reorg(43, 45, 'a');
      await caughtUp(45, mark);
      expect(out?.text().slice(mark)).toMatch(/"type":"reorg","ancestor":42,"depth":3,/);
      expectOutputEqualsCanonical();

      // A reorg that shortens the chain: 44 is replaced, 45 is gone, and its outputs with it.
      mark = out?.text().length ?? 0;
      await reorg(44, 45, 'b', 1);
      await caughtUp(44, mark);
      expect(out?.text().slice(mark)).toMatch(/"type":"block","height":45,"hash":null,"state":"SUCCEEDED"/);
      expectOutputEqualsCanonical();

      // A second runner of the same job says who holds it and exits 1.
      const second = await blockx(followArgs());
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(
        /job fl-[0-9a-f]{12} is being run by .* pid \d+ \(lease until .*\); exiting/,
      );
    },
    6 * STEP,
  );

  it(
    'blockx jobs list / show / stop; the same command resumes from the database; a reorg deeper than finality stops it',
    async () => {
      expect(jobId).toMatch(/^fl-[0-9a-f]{12}$/);
      const listed = await ok(['jobs', 'list', '--json']);
      const job = JSON.parse(listed.stdout.trim().split('\n')[0] ?? '{}') as Record<string, unknown>;
      expect(job).toMatchObject({ jobId, kind: 'follow', state: 'running', head: 44 });
      expect(String(job.runner)).toMatch(/pid \d+/);
      expect(Number(job.reorgs)).toBeGreaterThanOrEqual(2);
      const shown = await ok(['jobs', 'show', jobId]);
      expect(JSON.parse(shown.stdout)).toMatchObject({
        jobId,
        spec: { from: 1, chainId: 1, finality: FINALITY },
      });

      const stopped = await ok(['jobs', 'stop', jobId]);
      expect(stopped.stdout).toContain(`asked job ${jobId} to stop`);
      expect(await exited()).toBe(0);
      expect(out?.text()).toMatch(/"summary":\{"jobId":"fl-[0-9a-f]{12}","reason":"requested"/);

      // The same command resumes where the database says the job is: nothing to run again.
      startFollower();
      await waitForLine(follower as ChildProcess, /"type":"caught-up","head":44,/, STEP);
      expect(out?.text()).toMatch(new RegExp(`following as job ${jobId} from block (3[5-9]|4\\d)`));
      expect(out?.text()).not.toMatch(/"type":"block"/);

      // A reorg deeper than finality (a new branch from 36, head 44, finality 5): the follower stops,
      // naming the lowest final height it sees changed (40, just below its cursor) and both hashes.
      const before = String(blockRow(40).hash);
      await reorg(36, 44, 'c');
      expect(await exited()).toBe(1);
      expect(out?.text()).toContain(
        `block 40 was final with hash ${before}, the chain tables now say ${newHash(40, 'c')}`,
      );
      expect(out?.text()).not.toMatch(/"type":"block"/);
      const after = JSON.parse((await ok(['jobs', 'show', jobId])).stdout) as Record<string, unknown>;
      expect(after).toMatchObject({ state: 'failed' });
      expect(String(after.lastError)).toContain('block 40 was final');
    },
    4 * STEP,
  );

  it(
    'blockx jobs run NAME runs jobs.<name> of the config (template, from, finality, poll interval)',
    async () => {
      const config = path.join(dir, 'jobs.config.yaml');
      writeFileSync(
        config,
        // The repository's config, its functions folder made absolute (a relative one resolves against the config's).
        `${readFileSync(path.join(REPO, 'blockx.config.yaml'), 'utf8').replace(
          /^ {2}dir: functions$/m,
          `  dir: ${REPO}/functions`,
        )}\n` +
          `jobs:\n  transfers:\n    template: ${path.join(REPO, TRANSFERS)}\n    from: 2\n` +
          `    finality: ${FINALITY}\n    pollIntervalMs: 200\n`,
      );
      const unknown = await blockx(['jobs', 'run', 'nope', '--config', config]);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('no job nope under jobs: in the config (it has transfers)');

      follower = spawnTracked(
        process.execPath,
        [BIN, 'jobs', 'run', 'transfers', '--config', config, '--json', '--coordinator', up.coordinator],
        { cwd: REPO, env: cleanEnv() },
      );
      out = captureOutput(follower, 2_000_000);
      await caughtUp(44);
      const id = /following as job (fl-[0-9a-f]{12}) from block 2 /.exec(out.text())?.[1] ?? '';
      expect(id).toMatch(/^fl-[0-9a-f]{12}$/);
      expect(id).not.toBe(jobId); // another first block: another job
      expectOutputEqualsCanonical();
      await ok(['jobs', 'stop', id]);
      expect(await exited()).toBe(0);
    },
    2 * STEP,
  );
});
