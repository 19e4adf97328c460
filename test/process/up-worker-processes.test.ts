// `blockx up` runs each Worker in a child process of its own (docs/architecture.md § blockx up), through
// the built CLI over a generated chain in a SQLite file:
//   - the Prometheus endpoint of `blockx up` serves the samples of the Workers in its children;
//   - a Worker child SIGKILLed in the middle of a backfill is logged with its signal and started again on
//     the address `blockx up` printed; the job still ends with every block succeeded, and its table is
//     exactly what a clean run of the same job writes (no row lost, none twice);
//   - `blockx up` stopped (SIGTERM to it alone, as `kill PID` does) exits 0 and leaves no process behind;
//   - `blockx up` SIGKILLed leaves no process behind either: its children see their channel close.
// The red lines are raised to 1 by startBlockxUp so a busy test machine does not filter the Workers out.
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO, startBlockxUp, type BlockxUp } from '../support/blockx-up.js';
import { eventually } from '../support/eventually.js';
import { spawnTracked, stopGroup, waitForExit } from '../support/processes.js';

const TRANSFERS = 'examples/tasks/block-table-transfers.json';
const BLOCKS = 300;
const SLOW = 180_000;

const dir = mkdtempSync(path.join(tmpdir(), 'blockx-up-children-'));
const DB = path.join(dir, 'chain.db');

function env(): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(BLOCKX_|WORKER_|COORDINATOR_|ETCD_)/.test(k)),
  );
  return { ...clean, BLOCKX_STORAGE_URL: `sqlite:${DB}` };
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function blockx(args: readonly string[], onStdout?: (text: string) => void): Promise<Run> {
  const child = spawnTracked(process.execPath, [BIN, ...args], { cwd: REPO, env: env() });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    onStdout?.(stdout);
  });
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly cmdline: string;
}

/** Every process of the machine with its parent and its command line. */
function processes(): ProcEntry[] {
  const out: ProcEntry[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      out.push({ pid: Number(entry), ppid: Number(fields[1]), cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** The Worker children of a `blockx up` process, by pid. */
const workerChildren = (upPid: number): ProcEntry[] =>
  processes().filter((p) => p.ppid === upPid && p.cmdline.includes('worker-child/child-main'));

/** `blockx up` and every process below it (its Workers, their Executors), by pid. */
function tree(upPid: number): Set<number> {
  const all = processes();
  const pids = new Set([upPid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all)
      if (pids.has(p.ppid) && !pids.has(p.pid)) {
        pids.add(p.pid);
        grew = true;
      }
  }
  return pids;
}

/** Which of `pids` still run (a zombie has exited: it only waits for its parent to read its status). */
const stillRunning = (pids: ReadonlySet<number>): number[] =>
  [...pids].filter((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  });

/** token_transfers of chain 1, every row in key order, hashed; and their count. */
function transfers(): { rows: number; sha256: string } {
  const db = new Database(DB, { readonly: true });
  try {
    const rows = db
      .prepare('SELECT * FROM token_transfers WHERE chain_id = 1 ORDER BY block_number, log_idx')
      .all();
    return { rows: rows.length, sha256: createHash('sha256').update(JSON.stringify(rows)).digest('hex') };
  } finally {
    db.close();
  }
}

function summaryOf(r: Run): Record<string, number> {
  const last = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}') as { summary?: Record<string, number> };
  if (last.summary === undefined) throw new Error(`no summary line:\n${r.stdout}\n${r.stderr}`);
  return last.summary;
}

const backfill = (coordinator: string, state: string, onStdout?: (text: string) => void): Promise<Run> =>
  blockx(
    [
      'backfill',
      '--coordinator',
      coordinator,
      TRANSFERS,
      '--from',
      '1',
      '--to',
      String(BLOCKS),
      '--json',
      '--retries',
      '5',
      '--state-dir',
      path.join(dir, 'state', state),
    ],
    onStdout,
  );

describe('blockx up: each Worker in its own process', () => {
  let up: BlockxUp | undefined;
  const started: ChildProcess[] = [];

  beforeAll(async () => {
    const gen = await blockx(['data', 'generate', '--chain', '1', '--blocks', String(BLOCKS)]);
    expect(gen.code, gen.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    for (const child of started) await stopGroup(child, 'SIGKILL', 1_000);
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  it(
    'a Worker child SIGKILLed mid-job is started again on its address; the job ends exact',
    async () => {
      up = await startBlockxUp({ ...env(), BLOCKX_PROMETHEUS_LISTEN_ADDR: '127.0.0.1:0' });
      started.push(up.child);
      const upPid = up.child.pid as number;
      const before = workerChildren(upPid);
      expect(before, up.output.text()).toHaveLength(2);
      // The one endpoint of blockx up serves each child's Worker samples, told apart by their instance.
      const metricsUrl = /metrics on (http:\/\/\S+)/.exec(up.output.text())?.[1] ?? '';
      const scraped = await (await fetch(metricsUrl)).text();
      for (const worker of up.workers)
        expect(scraped).toMatch(new RegExp(`^blockx_worker_slots\\{[^}]*instance="${worker}"`, 'm'));
      expect(scraped).toMatch(/^\w+\{[^}]*service="coordinator"/m);

      let killed: number | undefined;
      const job = backfill(up.coordinator, 'killed', (stdout) => {
        // Once a tenth of the blocks are done, one Worker child dies without any warning.
        if (killed === undefined && stdout.split('\n').length > BLOCKS / 10) {
          killed = (before[0] as ProcEntry).pid;
          process.kill(killed, 'SIGKILL');
        }
      });
      const r = await job;
      expect(r.code, `${r.stdout.slice(-2_000)}\n${r.stderr}\n${up.output.text()}`).toBe(0);
      expect(killed, 'the job ended before a tenth of it was done').toBeDefined();
      const summary = summaryOf(r);
      expect(summary).toMatchObject({ blocks: BLOCKS, succeeded: BLOCKS, failed: 0 });

      // Logged with its exit status, then serving again on the very address printed at start.
      await eventually(() => expect(up?.output.text()).toMatch(/worker #\d+ serving again/), {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
      const text = up.output.text();
      expect(text).toMatch(/"signal":"SIGKILL".*process exited \(signal SIGKILL\); starting it again/);
      const again = /"address":"([^"]+)".*worker #\d+ serving again/.exec(text)?.[1];
      expect(up.workers).toContain(again);
      const after = workerChildren(upPid);
      expect(after).toHaveLength(2);
      expect(after.map((p) => p.pid)).not.toContain(killed);

      // Exact: the table equals what a clean run of the whole job writes over it.
      const afterKill = transfers();
      expect(afterKill.rows).toBe(summary.rows);
      const clean = await backfill(up.coordinator, 'clean');
      expect(clean.code, clean.stderr).toBe(0);
      expect(summaryOf(clean)).toMatchObject({ succeeded: BLOCKS, failed: 0, skipped: 0 });
      expect(transfers()).toEqual(afterKill);

      // `kill PID` (SIGTERM to blockx up alone): exit 0, every child stopped before it exits.
      const pids = tree(upPid);
      expect(pids.size).toBeGreaterThanOrEqual(5); // up, 2 Workers, their Executors
      const exited = waitForExit(up.child);
      process.kill(upPid, 'SIGTERM');
      await exited;
      expect(up.child.exitCode, up.output.text()).toBe(0);
      await eventually(() => expect(stillRunning(pids)).toEqual([]), { timeoutMs: 5_000, intervalMs: 100 });
    },
    SLOW,
  );

  it(
    'blockx up SIGKILLed leaves no process behind',
    async () => {
      const killedUp = await startBlockxUp(env());
      started.push(killedUp.child);
      const upPid = killedUp.child.pid as number;
      expect(workerChildren(upPid)).toHaveLength(2);
      const pids = tree(upPid);
      expect(pids.size).toBeGreaterThanOrEqual(5); // up, 2 Workers, their Executors
      process.kill(upPid, 'SIGKILL');
      await eventually(() => expect(stillRunning(pids)).toEqual([]), { timeoutMs: 30_000, intervalMs: 200 });
    },
    SLOW,
  );
});
