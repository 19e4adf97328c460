// A SQLite writer SIGKILLed in the middle of its group commits (src/services/storage/sqlite-group-commit.ts;
// docs/storage.md § Group commit on SQLite): a child process (killed-group-child.ts) replaces the rows of
// block after block, 64 transactions in flight, as 64 per-block tasks' writers do, so they queue for the
// connection and share COMMITs; it is killed while writing. Reopened here, the file passes integrity_check
// and every block is all or nothing: each block the child saw committed holds exactly its rows, any other
// block holds all of its rows or none (a group cut short leaves nothing of any of its members). Then the job
// is run again over every block, as a retried backfill does: the table is exact, nothing twice.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { openStorage } from '../../../src/services/storage/open-storage.js';
import {
  captureOutput,
  isRunning,
  signalGroup,
  spawnTracked,
  stopGroup,
  waitForExit,
  waitForLine,
} from '../../support/processes.js';
import { loadIoConfig, REPO, testDatabases } from './harness.js';
import { blockRows } from './killed-group-rows.js';

const FROM = 1_000;
const ROWS = 40;
const IN_FLIGHT = 64;
/** Blocks committed before the kill: enough that the kill lands among running groups. */
const BEFORE_KILL = 600;
const CHILD = path.join(import.meta.dirname, 'killed-group-child.ts');
const dbs = testDatabases('kg');
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (isRunning(child)) await stopGroup(child, 'SIGKILL', 1_000);
});

interface BlockCount {
  readonly block_number: number;
  readonly n: number;
}

describe('a SQLite writer SIGKILLed among its group commits (64 transactions in flight)', () => {
  it('leaves every block all or nothing, keeps every block it saw committed, and a rerun is exact', async () => {
    const url = await dbs.makeSqlite();
    const child = spawnTracked(
      process.execPath,
      ['--import', 'tsx', CHILD, url, String(FROM), String(ROWS), String(IN_FLIGHT)],
      { cwd: REPO },
    );
    children.push(child);
    const output = captureOutput(child);
    const done = new Set<number>();
    child.stdout?.on('data', (d: Buffer) => {
      for (const m of d.toString().matchAll(/^done (\d+)$/gm)) done.add(Number(m[1]));
    });
    await waitForLine(child, /^done \d+$/, 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${output.text()}`);
    });
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        if (done.size >= BEFORE_KILL) {
          clearInterval(check);
          resolve();
        } else if (!isRunning(child)) {
          clearInterval(check);
          reject(new Error(`the child exited early:\n${output.text()}`));
        }
      }, 5);
    });
    signalGroup(child, 'SIGKILL');
    await waitForExit(child);
    expect(child.signalCode).toBe('SIGKILL');
    const seenCommitted = new Set(done);

    const file = url.slice('sqlite:'.length);
    const db = new Database(file);
    let counts: BlockCount[];
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      counts = db
        .prepare('SELECT block_number, count(*) AS n FROM token_transfers GROUP BY block_number')
        .all() as BlockCount[];
    } finally {
      db.close();
    }
    const stored = new Map(counts.map((c) => [c.block_number, c.n]));
    for (const block of seenCommitted) expect(stored.get(block), `block ${block}`).toBe(ROWS);
    for (const [block, n] of stored) expect(n, `block ${block} is partial`).toBe(ROWS);
    // The kill cut something short: more blocks were started than the child saw committed.
    const last = Math.max(...seenCommitted);

    // The job again, over every block the child may have started, as a retried backfill does.
    const config = loadIoConfig(url);
    const backend = await openStorage(config.storage, config.tables, { baseDir: config.baseDir });
    try {
      const blocks = Array.from({ length: last + IN_FLIGHT + 1 - FROM }, (_, i) => FROM + i);
      await Promise.all(
        blocks.map((block) =>
          backend.transaction(async (tx) => {
            await tx.deleteWhere('token_transfers', { chain_id: 1, block_number: block });
            await tx.insertRows('token_transfers', blockRows(block, ROWS));
          }),
        ),
      );
      const check = new Database(file, { readonly: true });
      try {
        const all = check
          .prepare('SELECT block_number, log_idx, amount FROM token_transfers ORDER BY block_number, log_idx')
          .all() as { block_number: number; log_idx: number; amount: string }[];
        const expected = blocks.flatMap((b) =>
          blockRows(b, ROWS).map((r) => ({
            block_number: r.block_number,
            log_idx: r.log_idx,
            amount: r.amount,
          })),
        );
        expect(all).toEqual(expected);
      } finally {
        check.close();
      }
    } finally {
      await backend.close();
    }
  }, 120_000);
});
