// The e2e project's globalSetup (vitest.config.ts): one PostgreSQL server for the whole run, so the e2e
// files that need databases do not each initdb and start a server of their own. Each file makes
// databases of its own on it through sharedPostgres() (test/support/shared-postgres.ts) and drops them in
// its afterAll; the server stops when the run ends.
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.js';

// Several files run side by side, each with Worker and Executor pools of its own.
const MAX_CONNECTIONS = 400;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startPostgres({ maxConnections: MAX_CONNECTIONS });
  project.provide('sharedPostgresUrl', server.url);
  return () => server.stop();
}
