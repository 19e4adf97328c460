// The SQLite backend: the conformance suite in memory and in a file, plus what only SQLite does (WAL
// file, busy database across processes, the connection lock, values written by something else).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StorageErrorCode } from '../../../../src/services/storage/errors.js';
import { openStorage } from '../../../../src/services/storage/open-storage.js';
import { enableWal } from '../../../../src/services/storage/sqlite-backend.js';
import type { StorageBackend } from '../../../../src/services/storage/types.js';
import {
  CONFORMANCE_TABLES,
  conformanceSettings,
  describeBackendConformance,
  storageErrorOf,
} from '../../../support/storage-conformance.js';
import type { OpenOptions } from '../../../support/storage-conformance.js';

function open(url: string, opts: OpenOptions = {}, baseDir?: string): Promise<StorageBackend> {
  return openStorage(conformanceSettings(url, opts), opts.tables ?? CONFORMANCE_TABLES, {
    closeDrainMs: 200,
    ...(baseDir === undefined ? {} : { baseDir }),
  });
}

describeBackendConformance(
  'sqlite::memory:',
  async (opts) => {
    const backend = await open('sqlite::memory:', opts);
    return { backend, reopen: undefined, cleanup: () => backend.close() };
  },
  { sharedDatabase: false },
);

describeBackendConformance('sqlite file', async (opts) => {
  const dir = await mkdtemp(join(tmpdir(), 'blockx-sqlite-'));
  const url = `sqlite:${join(dir, 'conformance.db')}`;
  const opened: StorageBackend[] = [await open(url, opts)];
  return {
    backend: opened[0] as StorageBackend,
    reopen: async (more) => {
      const b = await open(url, more);
      opened.push(b);
      return b;
    },
    cleanup: async () => {
      await Promise.all(opened.map((b) => b.close()));
      await rm(dir, { recursive: true, force: true });
    },
    sql: async (text, params = []) => {
      const db = new Database(join(dir, 'conformance.db'));
      try {
        const stmt = db.prepare(text);
        return stmt.reader ? (stmt.all(...params) as Record<string, unknown>[]) : (stmt.run(...params), []);
      } finally {
        db.close();
      }
    },
  };
});

describe('SQLite specifics', () => {
  let dir: string;
  const backends: StorageBackend[] = [];
  const track = async (p: Promise<StorageBackend>) => {
    const b = await p;
    backends.push(b);
    return b;
  };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'blockx-sqlite-'));
  });
  afterEach(async () => {
    await Promise.all(backends.splice(0).map((b) => b.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it('a scan lets the event loop turn between pages (a long SQLite scan never starves timers)', async () => {
    const backend = await track(open(`sqlite:${join(dir, 'yield.db')}`));
    await backend.migrate();
    const rows = Array.from({ length: 50 }, (_, i) => ({
      chain_id: 1,
      block: i,
      idx: 0,
      name: `r${i}`,
      note: null,
    }));
    await backend.transaction((tx) => tx.insertRows('items', rows));
    let turns = 0;
    let spinning = true;
    const spin = (): void => {
      turns++;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    let pages = 0;
    for await (const page of backend.scan('items', { where: { chain_id: 1 }, batchSize: 5 })) {
      pages++;
      expect(page).toHaveLength(5);
    }
    spinning = false;
    expect(pages).toBe(10);
    // Synchronous pages chained as microtasks would finish before the first setImmediate runs.
    expect(turns).toBeGreaterThanOrEqual(9);
  });

  it('resolves a relative path against baseDir, creates its folder and uses WAL', async () => {
    const backend = await track(open('sqlite:data/nested/blockx.db', {}, dir));
    expect(backend.kind).toBe('sqlite');
    expect(backend.displayUrl).toBe('sqlite:data/nested/blockx.db');
    await backend.migrate();
    await backend.transaction((tx) => tx.insertRows('tags', [{ tag: 'a' }]));
    expect(existsSync(join(dir, 'data/nested/blockx.db'))).toBe(true);
    expect(existsSync(join(dir, 'data/nested/blockx.db-wal'))).toBe(true);
  });

  it('a write lock held by another connection is CONFLICT (retryable) after busy_timeout', async () => {
    const url = `sqlite:${join(dir, 'busy.db')}`;
    const a = await track(open(url, { storage: { admissionWaitMs: 30 } }));
    const b = await track(open(url, { storage: { admissionWaitMs: 30 } }));
    await a.migrate();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const tx = a.transaction(async (t) => {
      await t.insertRows('tags', [{ tag: 'a' }]);
      started();
      await held;
    });
    await running;
    const err = await storageErrorOf(
      b.transaction((t) => t.insertRows('tags', [{ tag: 'b' }])),
      StorageErrorCode.CONFLICT,
    );
    expect(err.retryable).toBe(true);
    expect(err.details.backend).toBe(url);
    // WAL: the other connection still reads the last committed state meanwhile.
    expect(await b.get('tags', { tag: 'a' })).toBeUndefined();
    release();
    await tx;
    expect(await b.get('tags', { tag: 'a' })).toEqual({ tag: 'a' });
  });

  it('a read through the backend inside its own transaction fails OVERLOADED instead of deadlocking', async () => {
    const backend = await track(open('sqlite::memory:', { storage: { admissionWaitMs: 30 } }));
    await backend.migrate();
    const err = await storageErrorOf(
      backend.transaction(async (tx) => {
        await tx.insertRows('tags', [{ tag: 'a' }]);
        return backend.get('tags', { tag: 'a' });
      }),
      StorageErrorCode.OVERLOADED,
    );
    expect(err.message).toContain('SQLite connection');
    expect(await backend.get('tags', { tag: 'a' })).toBeUndefined();
  });

  it('stored values a JSON number cannot hold exactly, or that are not their type, are BAD_VALUE', async () => {
    const path = join(dir, 'raw.db');
    const backend = await track(open(`sqlite:${path}`));
    await backend.migrate();
    const raw = new Database(path);
    try {
      raw.prepare(`INSERT INTO items VALUES (1, ?, 0, 'n', NULL)`).run(2n ** 60n);
      raw
        .prepare(`INSERT INTO kinds (id, big, r, t, b, j, bin) VALUES (1, 1, 1, 't', 7, '{bad', x'00')`)
        .run();
    } finally {
      raw.close();
    }
    const scanAll = async () => {
      for await (const page of backend.scan('items')) expect(page).toBeDefined();
    };
    const big = await storageErrorOf(scanAll(), StorageErrorCode.BAD_VALUE);
    expect(big.details).toMatchObject({ table: 'items', column: 'block' });
    expect(big.message).toContain('beyond ±2^53');
    expect(big.message).toContain(`about ${Number(2n ** 60n)}`);
    const bool = await storageErrorOf(backend.get('kinds', { id: 1 }), StorageErrorCode.BAD_VALUE);
    expect(bool.details.column).toBe('b');
  });

  it('scanJson over values written by something else: the same rows, or the same BAD_VALUE, as scan', async () => {
    const path = join(dir, 'foreign.db');
    const backend = await track(open(`sqlite:${path}`));
    await backend.migrate();
    const rawSql = (sql: string, ...params: unknown[]) => {
      const raw = new Database(path);
      try {
        raw.prepare(sql).run(...params);
      } finally {
        raw.close();
      }
    };
    const jsonRows = async (table: string) => {
      const out: unknown[] = [];
      for await (const page of backend.scanJson(table, { batchSize: 2 }))
        for (const r of page) out.push(JSON.parse(JSON.parse(r.literal) as string));
      return out;
    };
    const valueRows = async (table: string) => {
      const out: unknown[] = [];
      for await (const page of backend.scan(table, { batchSize: 2 })) out.push(...page);
      return out;
    };
    // Decodable rows another writer spelled its own way (an integral REAL for an integer, an integer for
    // a REAL — column affinity stores them as their type — JSON text with spaces), 2-row pages.
    rawSql(`INSERT INTO items VALUES (1, 1, 0, 'a', NULL), (1, 2.0, 0, 'b', 'x'), (1, 3, 0, 'c', NULL)`);
    rawSql(
      `INSERT INTO kinds (id, big, r, t, b, j, bin) VALUES (1, 1, 5, 't', 1, ' [1, 2.50] ', x'0A'), ` +
        `(2, 2, 0.5, 'u', 0, '{"a": null}', x'')`,
    );
    expect(await jsonRows('items')).toEqual(await valueRows('items'));
    expect(await jsonRows('kinds')).toEqual(await valueRows('kinds'));
    // Not decodable: the error scan gives (beyond 2^53 is flagged; JSON text that is not JSON fails the
    // statement, and the scan goes on as values).
    rawSql(`INSERT INTO items VALUES (1, ?, 0, 'n', NULL)`, 2n ** 60n);
    const big = await storageErrorOf(jsonRows('items'), StorageErrorCode.BAD_VALUE);
    expect(big.details).toMatchObject({ table: 'items', column: 'block' });
    rawSql(`INSERT INTO kinds (id, big, r, t, b, j, bin) VALUES (3, 1, 1, 't', 1, '{bad', x'00')`);
    const json = await storageErrorOf(jsonRows('kinds'), StorageErrorCode.BAD_VALUE);
    expect(json.details).toMatchObject({ table: 'kinds', column: 'j' });
  });
});

describe('enableWal (two processes switching one new file to WAL at once)', () => {
  const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  /** A connection whose first `failures` answers are `error`; the virtual clock advances by each sleep. */
  const rig = (failures: number, error: Error = busy) => {
    let now = 0;
    let calls = 0;
    const db = {
      pragma: (source: string) => {
        expect(source).toBe('journal_mode = WAL');
        if (++calls <= failures) throw error;
        return [{ journal_mode: 'wal' }];
      },
    };
    return {
      db,
      clock: () => now,
      sleep: (ms: number) => void (now += ms),
      calls: () => calls,
      now: () => now,
    };
  };

  it.each([0, 1, 5])('switches after %i SQLITE_BUSY answers', (failures) => {
    const r = rig(failures);
    enableWal(r.db, 1_000, r.clock, r.sleep);
    expect(r.calls()).toBe(failures + 1);
  });

  it('gives up with SQLITE_BUSY once the wait is over', () => {
    const r = rig(Number.POSITIVE_INFINITY);
    expect(() => enableWal(r.db, 100, r.clock, r.sleep)).toThrow('database is locked');
    expect(r.now()).toBeGreaterThanOrEqual(100);
    expect(r.now()).toBeLessThan(200);
  });

  it('throws any other error at once', () => {
    const r = rig(1, Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }));
    expect(() => enableWal(r.db, 1_000, r.clock, r.sleep)).toThrow('disk I/O error');
    expect(r.calls()).toBe(1);
  });
});
