// Smoke test for the PostgreSQL harness (test/support/postgres.ts): a real server answers queries, a new
// database can be created and used, and stop() ends the server and removes its files.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgres } from '../support/postgres.js';
import type { PgServer } from '../support/postgres.js';

async function withClient<T>(url: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

describe('startPostgres', () => {
  let server: PgServer;

  beforeAll(async () => {
    server = await startPostgres();
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('answers select 1 on its loopback url', async () => {
    expect(server.url).toBe(`postgres://postgres@127.0.0.1:${server.port}/postgres`);
    const rows = await withClient(server.url, async (c) => (await c.query('select 1 as one')).rows);
    expect(rows).toEqual([{ one: 1 }]);
  });

  it('creates a database that accepts a table, inserts and selects', async () => {
    const url = await server.createDatabase('support_smoke');
    expect(url).toBe(server.urlFor('support_smoke'));
    const rows = await withClient(url, async (c) => {
      await c.query('create table items (id int primary key, name text not null)');
      await c.query('insert into items values ($1, $2), ($3, $4)', [1, 'a', 2, 'b']);
      const name = (await c.query('select current_database() as db')).rows[0] as { db: string };
      expect(name.db).toBe('support_smoke');
      return (await c.query('select id, name from items order by id')).rows;
    });
    expect(rows).toEqual([
      { id: 1, name: 'a' },
      { id: 2, name: 'b' },
    ]);
  });

  it('rejects a database name it would have to quote', async () => {
    await expect(server.createDatabase('bad"name')).rejects.toThrow(/invalid test database name/);
  });

  it('stop() ends the server and removes its files', async () => {
    const other = await startPostgres();
    expect(other.port).not.toBe(server.port);
    await other.stop();
    expect(other.pid).toBeUndefined();
    expect(existsSync(other.baseDir)).toBe(false);
    await expect(withClient(other.url, (c) => c.query('select 1'))).rejects.toThrow();
  });
});
