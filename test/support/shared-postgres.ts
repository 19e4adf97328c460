// Databases for one test file on the run's shared PostgreSQL server (test/support/postgres-global-setup.ts),
// or, when the project has no shared server, on a server of the file's own (startPostgres).
//
//   const pg = await sharedPostgres();           // beforeAll
//   const url = await pg.createDatabase('bw_1'); // a database of this file's own
//   await pg.stop();                              // afterAll: drops this file's databases (or stops its server)
import { inject } from 'vitest';
import { createDatabaseAt, dropDatabaseAt, startPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `postgres://…/postgres` of the run's shared server; absent when the project starts none. */
    sharedPostgresUrl?: string;
  }
}

export interface TestPostgres {
  /** CREATE DATABASE for this file (the name is made unique on a shared server); returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Drop this file's databases on a shared server, or stop the file's own server. Idempotent. */
  stop(): Promise<void>;
}

export async function sharedPostgres(): Promise<TestPostgres> {
  const serverUrl = inject('sharedPostgresUrl');
  if (serverUrl === undefined) {
    const own = await startPostgres();
    return { createDatabase: (name) => own.createDatabase(name), stop: () => own.stop() };
  }
  // Files run side by side on one server: the test worker's pid keeps their names apart.
  const made: string[] = [];
  return {
    async createDatabase(name) {
      const unique = `${name}_p${process.pid}`;
      const url = await createDatabaseAt(serverUrl, unique);
      made.push(unique);
      return url;
    },
    async stop() {
      for (const name of made.splice(0)) await dropDatabaseAt(serverUrl, name);
    },
  };
}
