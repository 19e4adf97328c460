// A fresh, empty storage for one bench pass: a SQLite file in a temp dir, or a new database on a
// throwaway PostgreSQL server (test/support/postgres.ts). Everything is removed afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findPostgresBinDir, startPostgres, type PgServer } from '../../test/support/postgres.js';

export type StorageKind = 'sqlite' | 'postgres';
export const STORAGE_KINDS: readonly StorageKind[] = ['sqlite', 'postgres'];
export const STORAGE_NAMES: Readonly<Record<StorageKind, string>> = {
  sqlite: 'SQLite',
  postgres: 'PostgreSQL',
};

/** Why `kind` cannot run on this machine, or undefined when it can. */
export function storageUnavailable(kind: StorageKind): string | undefined {
  return kind === 'postgres' && findPostgresBinDir() === undefined
    ? 'skipped: no PostgreSQL binaries under /usr/lib/postgresql (apt-get install postgresql)'
    : undefined;
}

/** Runs `fn` with the URL of a fresh storage of `kind` (`sqlite:PATH` or `postgres://…/<name>`). */
export async function withFreshStorage<T>(
  kind: StorageKind,
  name: string,
  fn: (url: string) => Promise<T>,
): Promise<T> {
  if (kind === 'sqlite') {
    const dir = await mkdtemp(path.join(tmpdir(), `blockx-${name}-`));
    try {
      return await fn(`sqlite:${path.join(dir, `${name}.db`)}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  let server: PgServer | undefined;
  try {
    server = await startPostgres();
    return await fn(await server.createDatabase(name));
  } finally {
    await server?.stop();
  }
}
