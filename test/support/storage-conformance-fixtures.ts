// Shared shapes, tables and settings of the StorageBackend conformance suite (storage-conformance.ts).
import type { BlockxConfig, TableConfig } from '../../src/kernel/config-types.js';
import { afterEach, beforeEach, expect } from 'vitest';
import { StorageError } from '../../src/services/storage/errors.js';
import type { StorageErrorCode } from '../../src/services/storage/errors.js';
import type { Row, StorageBackend } from '../../src/services/storage/types.js';

export type StorageSettings = BlockxConfig['storage'];

export interface OpenOptions {
  /** Tables of the backend (default: CONFORMANCE_TABLES). */
  readonly tables?: Readonly<Record<string, TableConfig>>;
  /** Overrides of the storage settings (url excepted). */
  readonly storage?: Partial<Omit<StorageSettings, 'url'>>;
}

export interface ConformanceHandle {
  /** A backend over a fresh, empty database, opened with the given options (not migrated). */
  readonly backend: StorageBackend;
  /**
   * Another backend over the same database (closed by cleanup). Undefined where a database cannot be
   * shared (sqlite::memory:); the tests that need it are skipped there.
   */
  readonly reopen: ((opts?: OpenOptions) => Promise<StorageBackend>) | undefined;
  /** Closes every backend it opened and removes the database. */
  cleanup(): Promise<void>;
  /**
   * Runs SQL on a connection of its own to the backend's database, resolving with the result rows.
   * Undefined where no other connection can reach it (sqlite::memory:); the tests that need it skip.
   */
  readonly sql?: (text: string, params?: readonly unknown[]) => Promise<Record<string, unknown>[]>;
}

export type MakeBackend = (opts?: OpenOptions) => Promise<ConformanceHandle>;

export interface ConformanceCapabilities {
  /** `reopen` works: migrate tests that need two configs on one database run. */
  readonly sharedDatabase: boolean;
}

const int = { type: 'integer', nullable: false } as const;

/** Tables the suite uses: every column type, a composite key with a block column, an all-key table. */
export const CONFORMANCE_TABLES: Readonly<Record<string, TableConfig>> = {
  kinds: {
    columns: {
      id: int,
      big: { type: 'bigint', nullable: false },
      r: { type: 'real', nullable: false },
      t: { type: 'text', nullable: false },
      b: { type: 'boolean', nullable: false },
      j: { type: 'json', nullable: false },
      bin: { type: 'bytes', nullable: false },
      n_int: { type: 'integer', nullable: true },
      n_big: { type: 'bigint', nullable: true },
      n_real: { type: 'real', nullable: true },
      n_text: { type: 'text', nullable: true },
      n_bool: { type: 'boolean', nullable: true },
      n_json: { type: 'json', nullable: true },
      n_bin: { type: 'bytes', nullable: true },
    },
    primaryKey: ['id'],
  },
  items: {
    columns: {
      chain_id: int,
      block: { type: 'bigint', nullable: false },
      idx: int,
      name: { type: 'text', nullable: false },
      note: { type: 'text', nullable: true },
    },
    primaryKey: ['chain_id', 'block', 'idx'],
    blockColumn: 'block',
    chainColumn: 'chain_id',
  },
  tags: { columns: { tag: { type: 'text', nullable: false } }, primaryKey: ['tag'] },
};

/** Default test settings: generous admission so only the admission tests ever wait. */
export const CONFORMANCE_STORAGE: Omit<StorageSettings, 'url'> = {
  maxConcurrentOps: 8,
  admissionWaitMs: 5_000,
  poolSize: 4,
  lostClientTimeoutMs: 10_000,
  scanBatchSize: 100,
  readCacheMaxEntries: 1_000,
  retry: {
    builder: { maxAttempts: 1, initialBackoffMs: 1, maxBackoffMs: 1 },
    calls: { maxAttempts: 1, initialBackoffMs: 1, maxBackoffMs: 1 },
    result: { maxAttempts: 1, initialBackoffMs: 1, maxBackoffMs: 1 },
  },
};

/** The storage settings for `url` with the suite defaults and `opts.storage` applied. */
export function conformanceSettings(url: string, opts: OpenOptions = {}): StorageSettings {
  return { ...CONFORMANCE_STORAGE, ...opts.storage, url };
}

/** An `items` row. */
export function item(
  block: number,
  idx: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { chain_id: 1, block, idx, name: `b${block}i${idx}`, note: null, ...extra };
}

/**
 * Per test: a fresh database and a backend on it (migrated unless `migrate: false`), cleaned up after.
 * Returns a getter for the current handle.
 */
export function useConformanceBackend(
  make: MakeBackend,
  opts: OpenOptions & { readonly migrate?: boolean } = {},
): () => ConformanceHandle {
  let handle: ConformanceHandle | undefined;
  beforeEach(async () => {
    handle = await make(opts);
    if (opts.migrate !== false) await handle.backend.migrate();
  });
  afterEach(async () => {
    await handle?.cleanup();
    handle = undefined;
  });
  return () => {
    if (handle === undefined) throw new Error('no conformance backend outside a test');
    return handle;
  };
}

/** Every page of a scan. */
export async function pagesOf(pages: AsyncIterable<readonly Row[]>): Promise<Row[][]> {
  const out: Row[][] = [];
  for await (const page of pages) out.push([...page]);
  return out;
}

/** The StorageError a promise rejects with; fails the test when it resolves or rejects otherwise. */
export async function storageErrorOf(
  promise: Promise<unknown>,
  code: StorageErrorCode,
): Promise<StorageError> {
  const err = await promise.then(
    (value) => {
      throw new Error(
        `expected StorageError ${code}, resolved with ${String(JSON.stringify(value)).slice(0, 200)}`,
      );
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StorageError);
  expect((err as StorageError).code).toBe(code);
  return err as StorageError;
}
