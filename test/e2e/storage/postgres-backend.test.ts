// The PostgreSQL backend against a real server (one per file, a fresh database per test): the
// conformance suite, plus what only a networked, multi-connection database does: connections that die,
// concurrent writers of one key or one block (READ COMMITTED, advisory block locks), abandoned
// queries, concurrent migrations, and a 200,000-row scan in bounded memory.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COPY_MIN_ROWS } from '../../../src/services/storage/bulk-writes.js';
import { StorageError, StorageErrorCode } from '../../../src/services/storage/errors.js';
import { openStorage } from '../../../src/services/storage/open-storage.js';
import type { StorageBackend, StorageTransaction } from '../../../src/services/storage/types.js';
import { freePort } from '../../support/ports.js';
import { startPostgres } from '../../support/postgres.js';
import type { PgServer } from '../../support/postgres.js';
import {
  CONFORMANCE_TABLES,
  conformanceSettings,
  describeBackendConformance,
  item,
  storageErrorOf,
} from '../../support/storage-conformance.js';
import type { OpenOptions } from '../../support/storage-conformance.js';
import { fillLargeTable, LARGE_TABLE, scanLargeTable } from '../../support/storage-large-scan.js';
import { eventually } from '../../support/eventually.js';

let server: PgServer;
let databases = 0;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await server?.stop();
});

function open(url: string, opts: OpenOptions = {}): Promise<StorageBackend> {
  return openStorage(conformanceSettings(url, opts), opts.tables ?? CONFORMANCE_TABLES, {
    closeDrainMs: 500,
  });
}

async function withClient<T>(url: string, body: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

describeBackendConformance('postgres', async (opts) => {
  const url = await server.createDatabase(`conformance_${++databases}`);
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
    },
    sql: (text, params = []) =>
      withClient(url, async (c) => (await c.query(text, [...params])).rows as Record<string, unknown>[]),
  };
});

describe('PostgreSQL specifics', () => {
  let url: string;
  const backends: StorageBackend[] = [];
  const track = async (opts: OpenOptions = {}, at = url): Promise<StorageBackend> => {
    const b = await open(at, opts);
    backends.push(b);
    return b;
  };
  const fresh = async (opts: OpenOptions = {}): Promise<StorageBackend> => {
    url = await server.createDatabase(`specific_${++databases}`);
    const b = await track(opts);
    await b.migrate();
    return b;
  };

  afterEach(async () => {
    await Promise.all(backends.splice(0).map((b) => b.close()));
  });

  it('a connection killed under a transaction is CONNECTION (retryable); the pool recovers', async () => {
    const backend = await fresh();
    const err = await storageErrorOf(
      backend.transaction(async (tx) => {
        await tx.insertRows('tags', [{ tag: 'a' }]);
        await withClient(url, (c) =>
          c.query(
            `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND pid <> pg_backend_pid()`,
          ),
        );
        await tx.insertRows('tags', [{ tag: 'b' }]);
      }),
      StorageErrorCode.CONNECTION,
    );
    expect(err.retryable).toBe(true);
    expect(err.details.backend).toBe(backend.displayUrl);
    expect(await backend.get('tags', { tag: 'a' })).toBeUndefined();
    await backend.transaction((tx) => tx.insertRows('tags', [{ tag: 'c' }]));
    expect(await backend.get('tags', { tag: 'c' })).toEqual({ tag: 'c' });
  });

  it('idle pooled connections killed by the server do not crash the process or fail the next call', async () => {
    const backend = await fresh();
    await Promise.all([1, 2, 3].map((n) => backend.get('tags', { tag: String(n) })));
    await withClient(url, (c) =>
      c.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      ),
    );
    // The server's FATAL notices reach the idle clients within milliseconds on loopback.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await backend.get('tags', { tag: 'x' })).toBeUndefined();
  });

  it('two concurrent upserts of one key: the second waits for the first and commits after it', async () => {
    // READ COMMITTED (docs/storage.md): the row lock orders them; no CONFLICT, the later write wins.
    const backend = await fresh();
    const key = { chain_id: 1, block: 1, idx: 1 };
    let commitFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (commitFirst = resolve));
    let firstWrote!: () => void;
    const wrote = new Promise<void>((resolve) => (firstWrote = resolve));
    const first = backend.transaction(async (tx) => {
      await tx.upsert('items', key, { name: 'first' });
      firstWrote();
      await firstMayCommit;
    });
    await wrote;
    const second = backend.transaction((tx) => tx.upsert('items', key, { name: 'second' }));
    await waitForLockWait(url);
    commitFirst();
    await Promise.all([first, second]);
    expect(await backend.get('items', key)).toMatchObject({ name: 'second' });
  });

  it('a block replacement waits for another of the same block, then replaces its rows whole', async () => {
    const backend = await fresh();
    const replace = (name: string, idxs: number[]) => async (tx: StorageTransaction) => {
      await tx.deleteWhere('items', { chain_id: 1, block: 5 });
      await tx.insertRows(
        'items',
        idxs.map((i) => item(5, i, { name })),
      );
    };
    let commitFirst!: () => void;
    const firstMayCommit = new Promise<void>((resolve) => (commitFirst = resolve));
    let firstWrote!: () => void;
    const wrote = new Promise<void>((resolve) => (firstWrote = resolve));
    const first = backend.transaction(async (tx) => {
      await replace('first', [1, 2, 3])(tx);
      firstWrote();
      await firstMayCommit;
    });
    await wrote;
    // Another block of the same table does not wait for the open transaction.
    await backend.transaction(async (tx) => {
      await tx.deleteWhere('items', { chain_id: 1, block: 6 });
      await tx.insertRows('items', [item(6, 1)]);
    });
    const second = backend.transaction(replace('second', [1, 4]));
    await waitForLockWait(url, 'advisory');
    commitFirst();
    await Promise.all([first, second]);
    const rows = [];
    for await (const page of backend.scan('items', { where: { chain_id: 1, block: 5 } })) rows.push(...page);
    expect(rows.map((r) => [r.idx, r.name])).toEqual([
      [1, 'second'],
      [4, 'second'],
    ]);
  });

  it('aborting a transaction blocked in the database cancels it at once and keeps the backend usable', async () => {
    const backend = await fresh();
    const key = { chain_id: 1, block: 1, idx: 1 };
    let done!: () => void;
    const holding = new Promise<void>((resolve) => (done = resolve));
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const holder = backend.transaction(async (tx) => {
      await tx.upsert('items', key, { name: 'holder' });
      wrote();
      await holding;
    });
    await written;
    const controller = new AbortController();
    const blocked = backend.transaction((tx) => tx.upsert('items', key, { name: 'blocked' }), {
      signal: controller.signal,
    });
    await waitForLockWait(url);
    controller.abort();
    await storageErrorOf(blocked, StorageErrorCode.CANCELLED);
    done();
    await holder;
    expect(await backend.get('items', key)).toMatchObject({ name: 'holder' });
  });

  it('a database error poisons the transaction even when the callback swallows it', async () => {
    const backend = await fresh();
    const err = await storageErrorOf(
      backend.transaction(async (tx) => {
        await tx.insertRows('tags', [{ tag: 'a' }]);
        // Valid JSON-side (a safe integer) but beyond PostgreSQL's INTEGER: a data exception.
        await tx.insertRows('items', [item(1, 2 ** 40)]).catch(() => undefined);
        return 'swallowed';
      }),
      StorageErrorCode.BAD_VALUE,
    );
    expect(err.details.table).toBe('items');
    expect(await backend.get('tags', { tag: 'a' })).toBeUndefined();
  });

  it('a bulk write the server refuses during COPY is BAD_VALUE, writes nothing, and the connection goes on', async () => {
    // One connection, so the next writes reuse the one whose COPY failed (and its staging table).
    const backend = await fresh({ storage: { poolSize: 1 } });
    const rows = Array.from({ length: COPY_MIN_ROWS + 10 }, (_, i) => item(4, i));
    // Valid JSON-side (a safe integer) but beyond PostgreSQL's INTEGER: refused while parsing the COPY data.
    rows[COPY_MIN_ROWS + 5] = item(4, 2 ** 31);
    const err = await storageErrorOf(
      backend.transaction(async (tx) => {
        await tx.insertRows('tags', [{ tag: 'with it' }]);
        await tx.insertRows('items', rows);
      }),
      StorageErrorCode.BAD_VALUE,
    );
    expect(String((err.details.cause as { where?: unknown }).where)).toMatch(/^COPY /);
    expect(await backend.get('tags', { tag: 'with it' })).toBeUndefined();
    expect(await backend.get('items', { chain_id: 1, block: 4, idx: 0 })).toBeUndefined();
    // A rolled-back COPY leaves nothing staged for the next transaction on the connection.
    await storageErrorOf(
      backend.transaction(async (tx) => {
        await tx.insertRows('items', rows.slice(0, COPY_MIN_ROWS));
        throw new StorageError(StorageErrorCode.CONFLICT, 'rolled back on purpose');
      }),
      StorageErrorCode.CONFLICT,
    );
    const next = Array.from({ length: COPY_MIN_ROWS }, (_, i) => item(9, i));
    await backend.transaction((tx) => tx.insertRows('items', next));
    const stored = [];
    for await (const page of backend.scan('items')) stored.push(...page);
    expect(stored).toEqual(next);
  });

  it('aborting a bulk write waiting on a row lock after its COPY cancels it and writes none of it', async () => {
    const backend = await fresh();
    const rows = Array.from({ length: COPY_MIN_ROWS + 1 }, (_, i) => item(2, i, { name: 'bulk' }));
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    const holder = backend.transaction(async (tx) => {
      await tx.upsert('items', { chain_id: 1, block: 2, idx: COPY_MIN_ROWS }, { name: 'holder' });
      wrote();
      await holding;
    });
    await written;
    const controller = new AbortController();
    const bulk = backend.transaction((tx) => tx.insertRows('items', rows), { signal: controller.signal });
    await waitForLockWait(url);
    controller.abort();
    await storageErrorOf(bulk, StorageErrorCode.CANCELLED);
    release();
    await holder;
    const stored = [];
    for await (const page of backend.scan('items')) stored.push(...page);
    expect(stored).toEqual([item(2, COPY_MIN_ROWS, { name: 'holder' })]);
  });

  it('a stored BIGINT beyond 2^53 is BAD_VALUE naming its column, never a rounded number', async () => {
    const backend = await fresh();
    await withClient(url, (c) => c.query(`INSERT INTO items VALUES (1, 9007199254740993, 0, 'n', NULL)`));
    const scanAll = async () => {
      for await (const page of backend.scan('items')) expect(page).toBeDefined();
    };
    const err = await storageErrorOf(scanAll(), StorageErrorCode.BAD_VALUE);
    expect(err.details).toMatchObject({ table: 'items', column: 'block' });
    expect(err.message).toContain('9007199254740993');
    // scanJson writes rows' text from the driver's values: the same error, not a text with the number.
    const scanJsonAll = async () => {
      for await (const page of backend.scanJson('items', { columns: ['block', 'name'] }))
        expect(page).toBeDefined();
    };
    const jsonErr = await storageErrorOf(scanJsonAll(), StorageErrorCode.BAD_VALUE);
    expect(jsonErr.details).toMatchObject({ table: 'items', column: 'block' });
    expect(jsonErr.message).toBe(err.message);
  });

  it('concurrent migrations of one database both succeed: one creates, the other finds it unchanged', async () => {
    url = await server.createDatabase(`specific_${++databases}`);
    const [a, b] = [await track(), await track()];
    const reports = await Promise.all([a.migrate(), b.migrate()]);
    const created = reports.map((r) => r.created.length).sort();
    expect(created).toEqual([0, 3]);
  });

  it('an unreachable server is CONNECTION (retryable)', async () => {
    const port = await freePort();
    const backend = await track({}, `postgres://postgres:secret@127.0.0.1:${port}/none`);
    expect(backend.displayUrl).toBe(`postgres://postgres:***@127.0.0.1:${port}/none`);
    const err = await storageErrorOf(backend.get('tags', { tag: 'a' }), StorageErrorCode.CONNECTION);
    expect(err.retryable).toBe(true);
    expect(err.message).not.toContain('secret');
  });

  it('scans 200,000 rows in pages of 1,000 with bounded heap growth', async () => {
    const backend = await fresh({ tables: LARGE_TABLE });
    await fillLargeTable(backend, 200_000);
    const result = await scanLargeTable(backend, 1_000);
    expect(result).toMatchObject({ count: 200_000, pages: 200, outOfOrder: 0 });
    expect(result.heapGrowthBytes).toBeLessThan(100 * 1024 * 1024);
  });
});

/** Resolves once some session of the database waits on a lock (the second writer is blocked). */
async function waitForLockWait(url: string, event?: string): Promise<void> {
  await withClient(url, (c) =>
    eventually(
      async () => {
        const { rows } = await c.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'` +
            ` AND ($1::text IS NULL OR wait_event = $1)`,
          [event ?? null],
        );
        return (rows[0] as { n: number }).n > 0;
      },
      // About what 200 polls 10 ms apart took before.
      { timeoutMs: 4_000, intervalMs: 10, message: 'a session waiting on a lock' },
    ),
  );
}
