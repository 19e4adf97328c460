// Opening a SQLite file another process holds locked (the Workers of `blockx up` open one new file at
// the same moment, and the first switches it to WAL): the second waits up to its busy timeout
// (storage.admissionWaitMs) instead of failing with "database is locked".
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteDriver } from '../../../../src/services/storage/sqlite-backend.js';

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');
const dir = mkdtempSync(path.join(tmpdir(), 'bx-sqlite-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A process that opens `file` (rollback journal, as a new file is), holds an exclusive lock for `ms`, then exits. */
async function holdLocked(file: string, ms: number): Promise<{ done: Promise<void> }> {
  const script = `
    const Database = require(${JSON.stringify(BETTER_SQLITE3)});
    const db = new Database(${JSON.stringify(file)});
    db.exec('CREATE TABLE IF NOT EXISTS t (a INTEGER)');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('INSERT INTO t VALUES (1)');
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, ${ms});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => (b.toString().includes('locked') ? resolve() : undefined));
    child.once('exit', (code) => reject(new Error(`lock holder exited ${code} before locking`)));
  });
  return { done: new Promise((resolve) => child.once('exit', () => resolve())) };
}

describe('opening a SQLite file another process holds locked', () => {
  it('waits for the lock within the busy timeout, then opens in WAL mode', async () => {
    const file = path.join(dir, 'wait.db');
    const holder = await holdLocked(file, 300);
    const driver = new SqliteDriver({ path: file, displayUrl: `sqlite:${file}`, busyTimeoutMs: 10_000 });
    try {
      const rows = await driver.withConnection((q) => q.all({ sql: 'PRAGMA journal_mode', params: [] }), {
        deadline: performance.now() + 5_000,
      });
      expect(rows).toEqual([{ journal_mode: 'wal' }]);
    } finally {
      await driver.close();
      await holder.done;
    }
  });
});
