// Process-level tests of `blockx backfill` (and `submit --retries`, COORDINATOR_LISTEN) against a real
// one-machine cluster (`blockx up --no-demo --workers 2`) over a generated chain in a SQLite file, all
// through the built CLI (bin/blockx.js → dist/; `npm run build` first).
//
// The red lines are raised to 1 (COORDINATOR_CPU/MEMORY_RED_LINE) so that a busy test machine does not
// make the Coordinator filter its Workers as overloaded.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackfillSummary } from '../../src/client/backfill/run-backfill.js';
import { BlockxClient } from '../../src/client/client.js';
import { startBlockxUp, type BlockxUp } from '../support/blockx-up.js';
import { loopbackTls } from '../support/certs.js';
import { freePort } from '../support/ports.js';
import { isRunning, spawnTracked, stopGroup, waitForLine, type OutputTail } from '../support/processes.js';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');
const TRANSFERS = 'examples/tasks/block-table-transfers.json';
const SLOW = 150_000;

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-backfill-'));
const DB = path.join(dir, 'chain.db');
const stateDir = (name: string) => path.join(dir, 'state', name);

function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_|TASK_DEADLINE_MS|MAX_TASK_TIMEOUT_MS|RESULT_RETENTION_MS)/.test(
          k,
        ),
    ),
  );
  return { ...env, BLOCKX_STORAGE_URL: `sqlite:${DB}`, ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const children = new Set<ChildProcess>();

/** Starts the CLI (tracked, in its own process group); `done` resolves with its exit code and output. */
function start(args: string[], env: NodeJS.ProcessEnv = {}): { child: ChildProcess; done: Promise<Run> } {
  const child = spawnTracked(process.execPath, [BIN, ...args], { cwd: REPO, env: cleanEnv(env) });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<Run>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      children.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
  return { child, done };
}

const blockx = (args: string[], env: NodeJS.ProcessEnv = {}) => start(args, env).done;

interface UnitLine {
  block: number;
  state: 'SUCCEEDED' | 'FAILED' | 'SKIPPED';
  taskId: string;
  attempts: number;
  rows: number | null;
}

/** The unit lines and the summary (the last line) of `backfill --json`. */
function parseJsonRun(r: Run): { units: UnitLine[]; summary: BackfillSummary } {
  const lines = r.stdout.trim().split('\n');
  const last = JSON.parse(lines.at(-1) ?? '{}') as { summary?: BackfillSummary };
  if (last.summary === undefined) throw new Error(`no summary line:\n${r.stdout}\n${r.stderr}`);
  return { units: lines.slice(0, -1).map((l) => JSON.parse(l) as UnitLine), summary: last.summary };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const keys = (units: readonly UnitLine[], state: UnitLine['state']) =>
  units
    .filter((u) => u.state === state)
    .map((u) => u.block)
    .sort((a, b) => a - b);

function backfillArgs(from: number, to: number, state: string, more: string[] = []): string[] {
  return [
    'backfill',
    TRANSFERS,
    '--from',
    String(from),
    '--to',
    String(to),
    '--json',
    '--state-dir',
    stateDir(state),
    ...more,
  ];
}

/** `blockx up --no-demo --workers 2` on this file's database (or `env`'s). */
const startUp = (env: NodeJS.ProcessEnv = {}): Promise<BlockxUp> => startBlockxUp(cleanEnv(env));

/** token_transfers rows of chain 1 in blocks from..to of a SQLite file (read once its cluster stopped). */
function transferCount(file: string, from: number, to: number): number {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db
        .prepare(
          'SELECT COUNT(*) AS n FROM token_transfers WHERE chain_id = 1 AND block_number BETWEEN ? AND ?',
        )
        .get(from, to) as { n: number }
    ).n;
  } finally {
    db.close();
  }
}

describe('blockx backfill against `blockx up`', () => {
  let up: ChildProcess | undefined;
  let output: OutputTail | undefined;
  let coordinator = '';
  let workers: string[] = [];
  /** Rows the summaries reported, per block range, for the check against token_transfers. */
  const reported = { first200: -1, last100: 0 };

  beforeAll(async () => {
    const gen = await blockx(['data', 'generate', '--chain', '1', '--blocks', '300']);
    expect(gen.code, gen.stderr).toBe(0);
    const started = await startUp();
    ({ child: up, output, coordinator } = started);
    workers = [...started.workers];
    expect(workers).toHaveLength(2);
  }, 240_000);

  afterAll(async () => {
    for (const child of children) await stopGroup(child, 'SIGKILL', 1_000);
    if (up) await stopGroup(up, 'SIGTERM', 10_000);
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it(
    'blocks 1..200: exit 0, one SUCCEEDED line per block, the summary last with rows = the sum of the lines',
    async () => {
      const r = await blockx(backfillArgs(1, 200, 'a', ['--coordinator', coordinator]));
      expect(r.code, `${r.stderr}\n${output?.text()}`).toBe(0);
      // 64 tasks in flight listen on the job's stop and cancel signals: no listener-leak warning.
      expect(r.stderr).not.toMatch(/MaxListenersExceededWarning/);
      const { units, summary } = parseJsonRun(r);
      expect(units).toHaveLength(200);
      expect(keys(units, 'SUCCEEDED')).toEqual(range(1, 200));
      expect(new Set(units.map((u) => u.taskId)).size).toBe(200);
      const run = /^bf-[0-9a-f]{12}-([0-9a-f]+)-/.exec(units[0]?.taskId ?? '')?.[1];
      expect(units.every((u) => u.taskId === `bf-${summary.jobId}-${run}-b${u.block}-${u.attempts}`)).toBe(
        true,
      );
      expect(summary).toMatchObject({ blocks: 200, succeeded: 200, failed: 0, skipped: 0, remaining: 0 });
      expect(summary.attempts).toBeGreaterThanOrEqual(200);
      expect(summary.rows).toBe(sum(units.map((u) => u.rows ?? 0)));
      expect(summary.rows).toBeGreaterThan(0);
      reported.first200 = summary.rows;
    },
    SLOW,
  );

  it(
    'the same command again skips all 200 blocks and submits nothing',
    async () => {
      const r = await blockx(backfillArgs(1, 200, 'a', ['--coordinator', coordinator]));
      expect(r.code, r.stderr).toBe(0);
      const { units, summary } = parseJsonRun(r);
      expect(keys(units, 'SKIPPED')).toEqual(range(1, 200));
      expect(summary).toMatchObject({
        skipped: 200,
        succeeded: 0,
        attempts: 0,
        remaining: 0,
        interrupted: false,
      });
    },
    SLOW,
  );

  it(
    'the same command against another database (BLOCKX_STORAGE_URL) runs every block there: a journal never skips for the wrong database (issue 30)',
    async () => {
      // As a user would: the job journaled against one database, then the same command with the storage
      // pointed elsewhere (here a second SQLite file and a cluster on it). It used to print "0 succeeded,
      // 0 failed, N skipped", exit 0, and write nothing.
      const other = path.join(dir, 'other.db');
      const env = { BLOCKX_STORAGE_URL: `sqlite:${other}` };
      const gen = await blockx(['data', 'generate', '--chain', '1', '--blocks', '50'], env);
      expect(gen.code, gen.stderr).toBe(0);
      const second = await startUp(env);
      let summary: BackfillSummary;
      try {
        const r = await blockx(backfillArgs(1, 50, 'a', ['--coordinator', second.coordinator]), env);
        expect(r.code, `${r.stderr}\n${second.output.text()}`).toBe(0);
        ({ summary } = parseJsonRun(r));
        expect(summary).toMatchObject({ blocks: 50, succeeded: 50, skipped: 0, failed: 0 });
        expect(summary.rows).toBeGreaterThan(0);
      } finally {
        await stopGroup(second.child, 'SIGTERM', 10_000);
      }
      expect(transferCount(other, 1, 50)).toBe(summary.rows);
      // Back on the first database, the journal still skips what it did there.
      const again = await blockx(backfillArgs(1, 200, 'a', ['--coordinator', coordinator]));
      expect(parseJsonRun(again).summary).toMatchObject({ skipped: 200, attempts: 0 });
    },
    2 * SLOW,
  );

  it(
    'SIGINT after a few units: exit 1, remaining > 0, only successes journaled; the rerun does exactly the rest',
    async () => {
      const args = backfillArgs(201, 300, 'c', ['--coordinator', coordinator, '--concurrency', '2']);
      const first = start(args);
      await waitForLine(first.child, /^\{"block":\d+,"state":"SUCCEEDED"/, SLOW);
      await waitForLine(first.child, /^\{"block":\d+,"state":"SUCCEEDED"/, SLOW);
      first.child.kill('SIGINT');
      const r1 = await first.done;
      expect(r1.code, r1.stderr).toBe(1);
      expect(r1.stderr).toContain('stopping — the tasks in flight finish');
      const one = parseJsonRun(r1);
      expect(one.summary.interrupted).toBe(true);
      expect(one.summary.remaining).toBeGreaterThan(0);
      expect(one.summary.succeeded).toBeGreaterThanOrEqual(2);
      expect(one.summary.succeeded + one.summary.failed + one.summary.remaining).toBe(100);
      // The journal holds exactly the units that succeeded.
      const journal = readFileSync(path.join(stateDir('c'), `${one.summary.jobId}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { done?: number });
      expect(journal[0]).toHaveProperty('job');
      const done = journal.flatMap((l) => (l.done === undefined ? [] : [l.done])).sort((a, b) => a - b);
      expect(done).toEqual(keys(one.units, 'SUCCEEDED'));

      const r2 = await blockx(args);
      expect(r2.code, r2.stderr).toBe(0);
      const two = parseJsonRun(r2);
      expect(keys(two.units, 'SKIPPED')).toEqual(done);
      const ran = keys(two.units, 'SUCCEEDED');
      expect(ran).toEqual(range(201, 300).filter((b) => !done.includes(b)));
      expect(two.summary.skipped + two.summary.succeeded).toBe(100);
      expect(two.summary).toMatchObject({ skipped: one.summary.succeeded, failed: 0, remaining: 0 });
      reported.last100 = one.summary.rows + two.summary.rows;
    },
    2 * SLOW,
  );

  it('--per bundle on an unaligned range is a usage error (exit 2) naming the aligned range', async () => {
    const flags = '--from 1 --to 1500 --per bundle'.split(' ');
    const r = await blockx([
      'backfill',
      'examples/tasks/bundle-transfers.json',
      ...flags,
      '--coordinator',
      coordinator,
      '--state-dir',
      stateDir('d'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'bundles of 1000 blocks: --from 1 --to 1500 cuts bundles 1..2; use --from 1 --to 2000',
    );
  });

  it('a coordinator nobody listens on fails within the connect bound (exit 2), naming the address', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const r = await blockx([...backfillArgs(1, 5, 'nowhere'), '--coordinator', nowhere]);
    expect(r.code).toBe(2); // unreachable: the run never started (src/cli/connect.ts)
    expect(r.stderr).toContain(`cannot reach the coordinator at ${nowhere}`);
    expect(r.stdout).toBe('');
    // 5 s connect bound plus process start; without the check every block spent its retries (minutes).
    expect(Date.now() - started).toBeLessThan(40_000);
  });

  it('a template without a block selector exits 1 naming /functionCallConfig/config/block', async () => {
    const args = ['backfill', 'examples/tasks/hello-world.json', '--from', '1', '--to', '3'];
    const r = await blockx([...args, '--coordinator', coordinator, '--state-dir', stateDir('e')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('examples/tasks/hello-world.json: /functionCallConfig/config/block:');
    expect(r.stdout).toBe('');
  });

  it(
    'submit --retries 2 of a task failing non-retryably: one attempt (no <id>~2), exit 1',
    async () => {
      const id = `missing-fn-${Date.now()}`;
      const file = path.join(dir, 'missing-fn.json');
      writeFileSync(
        file,
        JSON.stringify({
          task_id: id,
          functionCallConfig: {
            type: 'CallListCallConfig',
            config: { function: 'no_such_function', callList: [['x']] },
          },
        }),
      );
      // The client's functions folder does not exist here, so the pre-run name check is skipped
      // (src/cli/function-names.ts) and the unknown function fails at run time, non-retryably.
      const r = await blockx(['submit', file, '--retries', '2', '--json', '--coordinator', coordinator], {
        BLOCKX_FUNCTIONS_DIR: path.join(dir, 'no-functions-here'),
      });
      expect(r.code, r.stderr).toBe(1);
      const lines = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        taskId: id,
        state: 'FAILED',
        failureCode: 'CALL_FAILED',
        retryable: false,
      });
      // Attempt 2 would run as <id>~2: no Worker has heard of it.
      const client = new BlockxClient({ coordinator });
      try {
        for (const w of workers) {
          await expect(client.getResult(`${id}~2`, { workerAddr: w })).rejects.toMatchObject({
            code: 'NOT_FOUND',
          });
        }
      } finally {
        client.close();
      }
    },
    SLOW,
  );

  it(
    'COORDINATOR_LISTEN is the address of status and backfill without --coordinator',
    async () => {
      const env = { COORDINATOR_LISTEN: coordinator };
      const status = await blockx(['status'], env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toContain(`coordinator ${coordinator}: ready · 2 worker(s)`);
      const elsewhere = await blockx(['status', '--timeout', '2000'], { COORDINATOR_LISTEN: '127.0.0.1:1' });
      expect(elsewhere.code).toBe(2); // unreachable (src/cli/connect.ts)
      expect(elsewhere.stderr).toContain('cannot reach the coordinator at 127.0.0.1:1');

      const r = await blockx(backfillArgs(1, 5, 'g'), env);
      expect(r.code, r.stderr).toBe(0);
      expect(parseJsonRun(r).summary).toMatchObject({ succeeded: 5, failed: 0 });
    },
    SLOW,
  );

  it(
    'token_transfers holds the rows the summaries reported (checked after the cluster stopped)',
    async () => {
      expect(reported.first200).toBeGreaterThan(0);
      if (up && isRunning(up)) await stopGroup(up, 'SIGTERM', 10_000);
      expect(transferCount(DB, 1, 200)).toBe(reported.first200);
      expect(transferCount(DB, 201, 300)).toBe(reported.last100);
    },
    SLOW,
  );
});

describe('a backfill run belongs to the identity that started it (docs/backfill.md § Task ids)', () => {
  it('another certificate resuming the journal is refused (exit 2) before anything is dialled', async () => {
    // A folder of its own: the cluster's folder is gone once the describe above has ended.
    const own = mkdtempSync(path.join(tmpdir(), 'blockx-backfill-owner-'));
    const state = path.join(own, 'state');
    const tls = loopbackTls(own);
    const as = (name: string) => {
      const kc = tls.issue(name);
      return {
        BLOCKX_STORAGE_URL: `sqlite:${path.join(own, 'chain.db')}`,
        BLOCKX_TLS_CA: tls.files.ca,
        BLOCKX_TLS_CERT: kc.files.cert,
        BLOCKX_TLS_KEY: kc.files.key,
      };
    };
    const nowhere = `127.0.0.1:${await freePort()}`;
    const args = [
      ...['backfill', TRANSFERS, '--from', '1', '--to', '3', '--json', '--state-dir', state],
      ...['--coordinator', nowhere],
    ];
    try {
      // Alice's run: the journal is written (then the coordinator is unreachable, exit 2).
      const alice = await blockx(args, as('alice'));
      expect(alice.code, alice.stderr).toBe(2);
      expect(alice.stderr).toContain(`cannot reach the coordinator at ${nowhere}`);
      const [journalFile] = readdirSync(state);
      const header = JSON.parse(readFileSync(path.join(state, journalFile!), 'utf8').split('\n')[0]!) as {
        job: { run: string; client: string };
      };
      expect(header.job.client).toBe('alice');
      expect(header.job.run).toMatch(/^[0-9a-f]{32}$/);
      // Mallory with the same state folder: refused, naming the owner and what to do.
      const mallory = await blockx(args, as('mallory'));
      expect(mallory.code).toBe(2);
      expect(mallory.stderr).toContain(`is run ${header.job.run} of alice, and this process is mallory`);
      expect(mallory.stderr).toContain('use a --state-dir of your own, or --fresh');
      expect(mallory.stderr).not.toContain('cannot reach');
      // The same identity resumes its run (and reaches the dialling step).
      const again = await blockx(args, as('alice'));
      expect(again.stderr).not.toContain('is run');
      expect(again.stderr).toContain(`cannot reach the coordinator at ${nowhere}`);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  }, 90_000);
});
