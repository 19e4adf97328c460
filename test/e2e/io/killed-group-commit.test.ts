// Writers SIGKILLed in the middle of their group commits (docs/storage.md § Group commit on SQLite and
// § Group commit on PostgreSQL), at the concurrency a backfill runs: two child processes, two "workers"
// (killed-group-child.ts), each replacing the rows of every other block with 32 transactions in flight
// (64 in all), as per-block tasks' writers do, so their writes queue and share COMMITs; both are killed
// while writing. Reopened here, every block is all or nothing: each block a child saw committed holds
// exactly its rows, any other block holds all of its rows or none (a group cut short leaves nothing of
// any of its members). Then the job runs again over every block, as a retried backfill does: the table
// is exact, nothing twice. SQLite: the file also passes integrity_check.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { openStorage } from '../../../src/services/storage/open-storage.js';
import type { StorageBackend } from '../../../src/services/storage/types.js';
import {
  captureOutput,
  isRunning,
  signalGroup,
  spawnTracked,
  stopGroup,
  waitForExit,
} from '../../support/processes.js';
import { loadIoConfig, REPO, rowsWhere, testDatabases } from './harness.js';
import { blockRows } from './killed-group-rows.js';

const FROM = 1_000;
const ROWS = 40;
const WORKERS = 2;
const IN_FLIGHT_EACH = 32;
/** Blocks committed before the kill: enough that the kill lands among running groups. */
const BEFORE_KILL = 400;
/**
 * storage.admissionWaitMs of the rerun's backend (a timing knob). Its 64 lanes share 32 operation slots,
 * so half of them wait for one; a backfill's IO scope retries an overload and this loop does not, so the
 * default 1 s wait failed the case on a busy box (load 20).
 */
const RERUN_ADMISSION_WAIT_MS = 30_000;
const CHILD = path.join(import.meta.dirname, 'killed-group-child.ts');
const dbs = testDatabases('kg');
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (isRunning(child)) await stopGroup(child, 'SIGKILL', 1_000);
});

async function open(url: string, admissionWaitMs?: number): Promise<StorageBackend> {
  const config = loadIoConfig(url, {}, admissionWaitMs === undefined ? {} : { admissionWaitMs });
  return openStorage(config.storage, config.tables, { baseDir: config.baseDir, closeDrainMs: 500 });
}

/** Rows per block in the table. */
async function blockCounts(url: string): Promise<Map<number, number>> {
  const backend = await open(url);
  try {
    const counts = new Map<number, number>();
    for (const row of await rowsWhere(backend, 'token_transfers', { columns: ['block_number'] })) {
      const block = row.block_number as number;
      counts.set(block, (counts.get(block) ?? 0) + 1);
    }
    return counts;
  } finally {
    await backend.close();
  }
}

describe.each([
  ['sqlite', dbs.makeSqlite],
  ['postgres', dbs.makePg],
])('writers SIGKILLed among their group commits on %s (2 processes, 64 in flight)', (name, makeUrl) => {
  it('leave every block all or nothing, keep every block they saw committed, and a rerun is exact', async () => {
    const url = await makeUrl();
    const setup = await open(url);
    await setup.migrate();
    await setup.close();
    const done = new Set<number>();
    const workers = Array.from({ length: WORKERS }, (_, w) => {
      const args = [CHILD, url, String(FROM + w), String(WORKERS), String(ROWS), String(IN_FLIGHT_EACH)];
      const child = spawnTracked(process.execPath, ['--import', 'tsx', ...args], { cwd: REPO });
      children.push(child);
      child.stdout?.on('data', (d: Buffer) => {
        for (const m of d.toString().matchAll(/^done (\d+)$/gm)) done.add(Number(m[1]));
      });
      return { child, output: captureOutput(child) };
    });
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        const dead = workers.find((w) => !isRunning(w.child));
        if (done.size >= BEFORE_KILL || dead !== undefined) {
          clearInterval(check);
          if (dead === undefined) resolve();
          else reject(new Error(`a writer exited early:\n${dead.output.text()}`));
        }
      }, 5);
    });
    for (const w of workers) signalGroup(w.child, 'SIGKILL');
    for (const w of workers) await waitForExit(w.child);
    expect(workers.map((w) => w.child.signalCode)).toEqual(['SIGKILL', 'SIGKILL']);
    const seenCommitted = new Set(done);

    if (name === 'sqlite') {
      const db = new Database(url.slice('sqlite:'.length));
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        db.close();
      }
    }
    const stored = await blockCounts(url);
    for (const block of seenCommitted) expect(stored.get(block), `block ${block}`).toBe(ROWS);
    for (const [block, n] of stored) expect(n, `block ${block} is partial`).toBe(ROWS);

    // The job again, over every block a writer may have started, as a retried backfill does.
    const last = Math.max(...seenCommitted, ...stored.keys()) + WORKERS * IN_FLIGHT_EACH;
    const blocks = Array.from({ length: last + 1 - FROM }, (_, i) => FROM + i);
    const backend = await open(url, RERUN_ADMISSION_WAIT_MS);
    try {
      // In lanes, as the writers ran: 64 transactions in flight.
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < blocks.length) {
          const block = blocks[next++] as number;
          await backend.transaction(async (tx) => {
            await tx.deleteWhere('token_transfers', { chain_id: 1, block_number: block });
            await tx.insertRows('token_transfers', blockRows(block, ROWS));
          });
        }
      };
      await Promise.all(Array.from({ length: WORKERS * IN_FLIGHT_EACH }, lane));
      const all = await rowsWhere(backend, 'token_transfers', {
        columns: ['block_number', 'log_idx', 'amount'],
      });
      const expected = blocks.flatMap((b) =>
        blockRows(b, ROWS).map((r) => ({
          block_number: r.block_number,
          log_idx: r.log_idx,
          amount: r.amount,
        })),
      );
      const key = (r: Readonly<Record<string, unknown>>): string =>
        `${String(r.block_number)}/${String(r.log_idx)}/${String(r.amount)}`;
      expect(all.map(key).sort()).toEqual(expected.map(key).sort());
    } finally {
      await backend.close();
    }
  }, 180_000);
});
