// Opens the backend a storage URL names:
//   sqlite:PATH          a file (relative paths resolve against baseDir; the parent folder is created)
//   sqlite::memory:      a private in-memory database (tests, demos)
//   postgres://… / postgresql://…   a PostgreSQL pool (connections open lazily, on first use)
// Anything else is StorageError BAD_URL. Opening does not migrate: call backend.migrate().

import { mkdirSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { BlockxConfig } from '../../kernel/config-types.js';
import { StorageError, StorageErrorCode } from './errors.js';
import { PostgresDriver } from './postgres-backend.js';
import { SqlBackend } from './sql-backend.js';
import { SqliteDriver } from './sqlite-backend.js';
import type { StorageBackend } from './types.js';

export interface OpenStorageOptions {
  /** Folder relative `sqlite:` paths resolve against (default: the working directory). */
  readonly baseDir?: string;
  /** How long close() lets running operations finish (default 5 s). */
  readonly closeDrainMs?: number;
}

/** The URL with any password replaced by `***`, for logs and errors. */
export function maskStorageUrl(url: string): string {
  if (!/^postgres(ql)?:\/\//i.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    // Unparsable: mask whatever sits between "user:" and "@".
    return url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
  }
}

/**
 * The database a storage URL names, as one string: equal for two URLs that reach the same database and
 * different otherwise (as far as the URL can tell). A relative `sqlite:` path is resolved against
 * `baseDir`; a PostgreSQL URL loses its password, its host is lower-cased and its port made explicit
 * (5432). Jobs put it in their identity (docs/backfill.md § Resuming): what a job did against one
 * database says nothing about another. Never contains a password.
 */
export function storageIdentity(url: string, baseDir: string): string {
  const u = url.trim();
  if (/^postgres(ql)?:\/\//i.test(u)) {
    try {
      const parsed = new URL(u);
      parsed.password = '';
      parsed.searchParams.delete('password');
      parsed.searchParams.sort();
      const host = parsed.hostname.toLowerCase();
      const user = parsed.username === '' ? '' : `${parsed.username}@`;
      return `postgres://${user}${host}:${parsed.port || '5432'}${parsed.pathname}${parsed.search}`;
    } catch {
      return maskStorageUrl(u);
    }
  }
  if (u.startsWith('sqlite:')) {
    const rest = u.slice('sqlite:'.length);
    if (rest === ':memory:' || rest === '') return u;
    return `sqlite:${isAbsolute(rest) ? resolve(rest) : resolve(baseDir, rest)}`;
  }
  return maskStorageUrl(u);
}

export async function openStorage(
  config: BlockxConfig['storage'],
  tables: BlockxConfig['tables'],
  opts: OpenStorageOptions = {},
): Promise<StorageBackend> {
  const url = config.url.trim();
  const displayUrl = maskStorageUrl(url);
  const common = {
    displayUrl,
    tables,
    maxConcurrentOps: config.maxConcurrentOps,
    admissionWaitMs: config.admissionWaitMs,
    scanBatchSize: config.scanBatchSize,
    ...(opts.closeDrainMs === undefined ? {} : { closeDrainMs: opts.closeDrainMs }),
  };

  if (/^postgres(ql)?:\/\//i.test(url)) {
    try {
      new URL(url);
    } catch (err) {
      throw new StorageError(StorageErrorCode.BAD_URL, `malformed PostgreSQL URL ${displayUrl}`, {
        backend: displayUrl,
        cause: err,
      });
    }
    const driver = new PostgresDriver({
      url,
      displayUrl,
      poolSize: config.poolSize,
      lostClientTimeoutMs: config.lostClientTimeoutMs,
    });
    return new SqlBackend(driver, common);
  }

  if (url.startsWith('sqlite:')) {
    const rest = url.slice('sqlite:'.length);
    if (rest === '')
      throw new StorageError(
        StorageErrorCode.BAD_URL,
        `storage URL "sqlite:" names no file (use sqlite:PATH or sqlite::memory:)`,
        {
          backend: displayUrl,
        },
      );
    let path = ':memory:';
    if (rest !== ':memory:') {
      path = isAbsolute(rest) ? rest : resolve(opts.baseDir ?? process.cwd(), rest);
      mkdirSync(dirname(path), { recursive: true });
    }
    let driver: SqliteDriver;
    try {
      driver = new SqliteDriver({ path, displayUrl, busyTimeoutMs: config.admissionWaitMs });
    } catch (err) {
      throw new StorageError(
        StorageErrorCode.CONNECTION,
        `cannot open SQLite database ${path}: ${err instanceof Error ? err.message : String(err)}`,
        { backend: displayUrl, cause: err },
      );
    }
    return new SqlBackend(driver, common);
  }

  throw new StorageError(
    StorageErrorCode.BAD_URL,
    `unsupported storage URL ${JSON.stringify(displayUrl)}: use sqlite:PATH, sqlite::memory: or postgres://user@host:port/db`,
    { backend: displayUrl },
  );
}
