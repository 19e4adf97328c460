// A writer killed in the middle of its transaction, on real storage (SQLite file and PostgreSQL): a child
// process (killed-writer-child.ts) inserts thousands of token_transfers rows through insertRows inside one
// transaction, says so on stdout, and is SIGKILLed there. Reopened from this process, the storage shows
// none of those rows, keeps what was committed before, and takes a new transaction on the same keys.
// SQLite: the uncommitted frames the child wrote to the WAL are ignored by recovery, and the file passes
// integrity_check. PostgreSQL: the server ends the dead session and rolls its transaction back.
import { statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../../src/services/storage/open-storage.js';
import type { Row, StorageBackend } from '../../../src/services/storage/types.js';
import {
  captureOutput,
  isRunning,
  signalGroup,
  spawnTracked,
  stopGroup,
  waitForExit,
  waitForLine,
} from '../../support/processes.js';
import type { ChildProcess } from 'node:child_process';
import { CHAIN_ID, loadIoConfig, REPO, rowsWhere, testDatabases } from './harness.js';
import { eventually } from '../../support/eventually.js';

// Enough rows to overflow SQLite's page cache (better-sqlite3 builds with 16 MB), so that uncommitted
// pages spill into the WAL before the kill (5,000 rows stay in memory and leave the WAL empty).
const ROWS = 100_000;
const CHUNK = 5_000;
const KILLED_BLOCK = 777_000;
const KEPT_BLOCK = 776_000;
const CHILD = path.join(import.meta.dirname, 'killed-writer-child.ts');
const dbs = testDatabases('kw');
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (isRunning(child)) await stopGroup(child, 'SIGKILL', 1_000);
});

function transfer(block: number, idx: number, amount: string): Row {
  return {
    chain_id: CHAIN_ID,
    block_number: block,
    log_idx: idx,
    token: `0x${'33'.repeat(20)}`,
    from_address: `0x${'44'.repeat(20)}`,
    to_address: `0x${'55'.repeat(20)}`,
    amount,
  };
}

async function open(url: string): Promise<StorageBackend> {
  const config = loadIoConfig(url);
  const backend = await openStorage(config.storage, config.tables, {
    baseDir: config.baseDir,
    closeDrainMs: 500,
  });
  await backend.migrate();
  return backend;
}

async function pgQuery<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Sessions of this database other than the asking one that sit inside an open transaction. */
async function openTransactions(url: string): Promise<number> {
  const [row] = await pgQuery<{ n: number }>(
    url,
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`,
  );
  return row?.n ?? 0;
}

const sqliteFile = (url: string) => url.slice('sqlite:'.length);

describe.each([
  ['sqlite', dbs.makeSqlite],
  ['postgres', dbs.makePg],
])('a writer SIGKILLed inside its transaction on %s', (name, makeUrl) => {
  it(`leaves none of its ${ROWS} rows, keeps committed ones, and the table takes new transactions`, async () => {
    const url = await makeUrl();
    const kept = [0, 1, 2].map((i) => transfer(KEPT_BLOCK, i, `kept ${i}`));
    let backend = await open(url);
    await backend.transaction((tx) => tx.insertRows('token_transfers', kept));
    await backend.close();

    const child = spawnTracked(
      process.execPath,
      ['--import', 'tsx', CHILD, url, String(KILLED_BLOCK), String(ROWS), String(CHUNK)],
      { cwd: REPO },
    );
    children.push(child);
    const output = captureOutput(child);
    await waitForLine(child, new RegExp(`^inside ${ROWS}$`), 60_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${output.text()}`);
    });

    // The child is inside its transaction, its inserts done and not committed.
    if (name === 'sqlite') {
      // Its pages reached the WAL (uncommitted frames): recovery must skip them.
      expect(statSync(`${sqliteFile(url)}-wal`).size).toBeGreaterThan(0);
    } else {
      expect(await openTransactions(url)).toBe(1);
    }

    signalGroup(child, 'SIGKILL');
    await waitForExit(child);
    expect(child.signalCode).toBe('SIGKILL');
    expect(output.text()).not.toContain('committed');

    if (name === 'postgres') {
      // The server notices the dead connection and rolls its transaction back (releasing its locks).
      await eventually(async () => (await openTransactions(url)) === 0, {
        timeoutMs: 10_000,
        intervalMs: 20,
        message: 'the server to end the session',
      });
    }

    backend = await open(url);
    try {
      const killed = { where: { chain_id: CHAIN_ID, block_number: KILLED_BLOCK } };
      expect(await rowsWhere(backend, 'token_transfers', killed)).toEqual([]);
      expect(await rowsWhere(backend, 'token_transfers', { where: { block_number: KEPT_BLOCK } })).toEqual(
        kept,
      );

      // Usable: a new transaction on the very keys the dead writer had inserted commits.
      const fresh = Array.from({ length: 10 }, (_, i) => transfer(KILLED_BLOCK, i, `new ${i}`));
      await backend.transaction((tx) => tx.insertRows('token_transfers', fresh));
      const after = await rowsWhere(backend, 'token_transfers', killed);
      expect(after).toHaveLength(10);
      expect(after.map((r) => r.amount).sort()).toEqual(fresh.map((r) => r.amount).sort());
    } finally {
      await backend.close();
    }

    if (name === 'sqlite') {
      const db = new Database(sqliteFile(url), { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        db.close();
      }
    }
  });
});
