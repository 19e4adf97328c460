// Process tests of `blockx data generate|load` and `blockx db migrate` against SQLite files, through the
// built CLI (bin/blockx.js → dist/; `npm test` builds first).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(REPO, 'bin/blockx.js');
const CONFIG = path.join(REPO, 'blockx.config.yaml');

/** Runs `blockx ARGS --config <repo config>` against the SQLite file `db`. */
function blockx(db: string, args: string[], input?: string, config = CONFIG) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('COORDINATOR_') || k.startsWith('BLOCKX_')) delete env[k];
  env.BLOCKX_STORAGE_URL = `sqlite:${db}`;
  const r = spawnSync(process.execPath, [BIN, ...args, '--config', config], {
    cwd: REPO,
    env,
    encoding: 'utf8',
    timeout: 60_000,
    ...(input === undefined ? {} : { input }),
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const scratch = () => mkdtempSync(path.join(tmpdir(), 'blockx-data-'));

function query<T>(db: string, sql: string): T[] {
  const conn = new Database(db, { readonly: true });
  try {
    return conn.prepare(sql).all() as T[];
  } finally {
    conn.close();
  }
}

const count = (db: string, table: string) =>
  query<{ n: number }>(db, `SELECT COUNT(*) AS n FROM ${table}`)[0]?.n;

/** A digest of a table's full contents in primary-key order. */
function digest(db: string, table: string, orderBy: string): string {
  const rows = query(db, `SELECT * FROM ${table} ORDER BY ${orderBy}`);
  return `${rows.length}:${createHash('sha256').update(JSON.stringify(rows)).digest('hex')}`;
}

const BLOCK_TABLES = {
  blocks: 'chain_id, number, hash',
  transactions: 'chain_id, block_number, block_hash, idx',
  events: 'chain_id, block_number, block_hash, idx',
  traces: 'chain_id, block_number, block_hash, tx_idx, trace_address',
};
const digests = (db: string) => Object.entries(BLOCK_TABLES).map(([t, key]) => digest(db, t, key));

describe('blockx data generate', () => {
  it('writes 50 heights into a fresh SQLite file; db migrate --check then passes', () => {
    const db = path.join(scratch(), 'x.db');
    const r = blockx(db, ['data', 'generate', '--chain', '1', '--blocks', '50']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/generated chain 1 heights 1\.\.50 \(seed 1\)/);
    expect(r.stdout).toMatch(/rows in [\d.]+ s \([\d,]+ rows\/s\)/);
    const heights = query<{ number: number; n: number }>(
      db,
      'SELECT number, SUM(canonical) AS n FROM blocks GROUP BY number ORDER BY number',
    );
    expect(heights.map((h) => h.number)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(heights.every((h) => h.n === 1)).toBe(true);
    expect(count(db, 'transactions')).toBeGreaterThan(50);
    const txs = Number(/transactions\s+([\d,]+)/.exec(r.stdout)?.[1]?.replace(/,/g, ''));
    expect(count(db, 'transactions')).toBe(txs);

    const check = blockx(db, ['db', 'migrate', '--check']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain('all 5 declared tables match the config');
  });

  it('a re-run leaves identical tables; another seed replaces the heights instead of mixing in', () => {
    const db = path.join(scratch(), 'x.db');
    expect(blockx(db, ['data', 'generate', '--chain', '1', '--blocks', '30', '--chunk', '7']).code).toBe(0);
    const first = digests(db);
    expect(blockx(db, ['data', 'generate', '--chain', '1', '--blocks', '30']).code).toBe(0);
    expect(digests(db)).toEqual(first);

    expect(blockx(db, ['data', 'generate', '--chain', '1', '--blocks', '30', '--seed', '2']).code).toBe(0);
    expect(digests(db)).not.toEqual(first);
    const doubled = query(
      db,
      'SELECT number FROM blocks WHERE canonical = 1 GROUP BY number HAVING COUNT(*) > 1',
    );
    expect(doubled).toEqual([]);
  });

  it('a config whose block tables do not fit the generated rows is exit 1 before the database is touched', () => {
    const dir = scratch();
    const config = path.join(dir, 'blockx.config.yaml');
    const text = readFileSync(CONFIG, 'utf8');
    expect(text).toContain('topics: { type: json }');
    writeFileSync(config, text.replace('topics: { type: json }', 'topics: { type: text }'));
    const db = path.join(dir, 'x.db');
    const r = blockx(db, ['data', 'generate', '--chain', '1', '--blocks', '5'], undefined, config);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the synthetic chain does not fit table "events"');
    expect(r.stderr).toContain('column "topics" (text): expected a string, got an array');
    expect(existsSync(db)).toBe(false);
  });

  it('bad flags are usage errors (exit 2)', () => {
    const db = path.join(scratch(), 'x.db');
    expect(blockx(db, ['data', 'generate', '--chain', '1']).code).toBe(2); // --blocks missing
    const r = blockx(db, ['data', 'generate', '--chain', '1', '--blocks', 'many']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--blocks must be an integer >= 1, got "many"');
  });
});

const transfer = (i: number) =>
  JSON.stringify({
    chain_id: 1,
    block_number: 10 + i,
    log_idx: i,
    token: '0x' + 'ab'.repeat(20),
    from_address: '0x' + '01'.repeat(20),
    to_address: '0x' + '02'.repeat(20),
    amount: String(1000 * i),
  });

/** Eight lines; line 3 is broken JSON, line 7 has a wrong column type. */
function fileWithBadLines(dir: string): string {
  const lines = [
    transfer(1),
    transfer(2),
    '{"chain_id": 1,',
    transfer(4),
    '',
    transfer(6),
    transfer(7).replace('"log_idx":7', '"log_idx":"7"'),
    transfer(8),
  ];
  const file = path.join(dir, 'transfers.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('blockx data load', () => {
  it('with bad lines 3 and 7 loads nothing, names FILE:3 and FILE:7, exits 1', () => {
    const dir = scratch();
    const db = path.join(dir, 'x.db');
    const file = fileWithBadLines(dir);
    const r = blockx(db, ['data', 'load', '--table', 'token_transfers', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}:3: invalid JSON`);
    expect(r.stderr).toContain(`${file}:7: column "log_idx" (integer)`);
    expect(r.stderr).toContain('2 bad lines');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(count(db, 'token_transfers')).toBe(0);
  });

  it('with --skip-invalid loads the valid lines and lists the skipped ones, exits 0', () => {
    const dir = scratch();
    const db = path.join(dir, 'x.db');
    const file = fileWithBadLines(dir);
    const r = blockx(db, ['data', 'load', '--table', 'token_transfers', file, '--skip-invalid']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('loaded 5 rows into token_transfers');
    expect(r.stdout).toContain('skipped 2 bad lines: 3, 7');
    const ids = query<{ log_idx: number }>(db, 'SELECT log_idx FROM token_transfers ORDER BY log_idx');
    expect(ids.map((x) => x.log_idx)).toEqual([1, 2, 4, 6, 8]);
  });

  it('reads stdin for "-"', () => {
    const db = path.join(scratch(), 'x.db');
    const r = blockx(db, ['data', 'load', '-t', 'token_transfers', '-'], `${transfer(1)}\n${transfer(2)}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('loaded 2 rows into token_transfers from stdin');
    expect(count(db, 'token_transfers')).toBe(2);
  });

  it('an undeclared table is exit 1 listing the declared tables', () => {
    const dir = scratch();
    const r = blockx(path.join(dir, 'x.db'), ['data', 'load', '--table', 'nope', fileWithBadLines(dir)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('table "nope" is not declared in the config');
    expect(r.stderr).toContain('blocks, transactions, events, traces, token_transfers');
  });

  it('a missing file is exit 1 naming it', () => {
    const dir = scratch();
    const r = blockx(path.join(dir, 'x.db'), [
      'data',
      'load',
      '--table',
      'blocks',
      path.join(dir, 'none.jsonl'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot read ${path.join(dir, 'none.jsonl')}`);
  });
});

describe('blockx db migrate', () => {
  it('creates the declared tables, then finds them unchanged', () => {
    const db = path.join(scratch(), 'x.db');
    const check = blockx(db, ['db', 'migrate', '--check']);
    expect(check.code).toBe(1); // nothing exists yet, and --check creates nothing
    expect(query(db, "SELECT name FROM sqlite_master WHERE type = 'table'")).toEqual([]);
    const first = blockx(db, ['db', 'migrate']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/blocks\s+created/);
    expect(first.stdout).toContain('5 created, 0 unchanged');
    expect(blockx(db, ['db', 'migrate']).stdout).toContain('0 created, 5 unchanged');
  });

  it('a table whose column has another type is exit 1 naming the difference', () => {
    const db = path.join(scratch(), 'x.db');
    const conn = new Database(db);
    conn.exec(`CREATE TABLE token_transfers (
      chain_id INTEGER NOT NULL, block_number INTEGER NOT NULL, log_idx INTEGER NOT NULL,
      token TEXT NOT NULL, from_address TEXT NOT NULL, to_address TEXT NOT NULL, amount INTEGER NOT NULL,
      PRIMARY KEY (chain_id, block_number, log_idx))`);
    conn.close();
    for (const args of [
      ['db', 'migrate'],
      ['db', 'migrate', '--check'],
      ['data', 'generate', '--chain', '1', '--blocks', '2'],
    ]) {
      const r = blockx(db, args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('differs from the config');
      expect(r.stderr).toMatch(/token_transfers.*amount/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
