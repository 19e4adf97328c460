// Shared fixture of the IO scope tests: a few declared tables, a storage config, an in-memory backend
// and a factory on virtual time (the sleep records each backoff and returns at once).
import type { BlockxConfig, TableConfig } from '../../../../../../src/kernel/config-types.js';
import type { Row } from '../../../../../../src/kernel/plugin-types.js';
import { StorageIoScopeFactory } from '../../../../../../src/services/worker/adapters/io/index.js';
import { MemoryStorageBackend } from '../../../../../support/memory-storage-backend.js';

const int = { type: 'integer', nullable: false } as const;
const big = { type: 'bigint', nullable: false } as const;
const text = { type: 'text', nullable: false } as const;

export const TABLES: Record<string, TableConfig> = {
  blocks: {
    columns: { chain_id: int, number: big, hash: text, tx_count: int },
    primaryKey: ['chain_id', 'number', 'hash'],
    blockColumn: 'number',
    blockHashColumn: 'hash',
    chainColumn: 'chain_id',
    writable: true, // the transaction tests write every table
  },
  transactions: {
    columns: { chain_id: int, block_number: big, block_hash: text, idx: int, value: text },
    primaryKey: ['chain_id', 'block_number', 'block_hash', 'idx'],
    blockColumn: 'block_number',
    blockHashColumn: 'block_hash',
    chainColumn: 'chain_id',
    writable: true, // the transaction tests write every table
  },
  /** Block column only: no hash, no chain. */
  heights: {
    columns: { number: big, note: text },
    primaryKey: ['number'],
    blockColumn: 'number',
    writable: true,
  },
  /** No block column at all. */
  balances: { columns: { address: text, amount: text }, primaryKey: ['address'], writable: true },
};

export function storageConfig(overrides: Partial<BlockxConfig['storage']> = {}): BlockxConfig['storage'] {
  const retry = { maxAttempts: 3, initialBackoffMs: 20, maxBackoffMs: 500 };
  return {
    url: 'memory:',
    maxConcurrentOps: 32,
    admissionWaitMs: 1000,
    poolSize: 1,
    lostClientTimeoutMs: 0,
    scanBatchSize: 2,
    readCacheMaxEntries: 100,
    retry: { builder: retry, calls: retry, result: retry },
    ...overrides,
  };
}

export function block(chain_id: number, number: number, hash: string, tx_count = 0): Row {
  return { chain_id, number, hash, tx_count };
}

export function tx(
  block_number: number,
  block_hash: string,
  idx: number,
  value = `v${idx}`,
  chain_id = 1,
): Row {
  return { chain_id, block_number, block_hash, idx, value };
}

export interface Harness {
  readonly backend: MemoryStorageBackend;
  readonly factory: StorageIoScopeFactory;
  /** Every backoff the scopes slept, in order. */
  readonly delays: number[];
}

export function harness(
  opts: { storage?: Partial<BlockxConfig['storage']>; random?: () => number; batchSize?: number } = {},
): Harness {
  const backend = new MemoryStorageBackend(TABLES, opts.batchSize ?? 2);
  backend.seed('blocks', [
    block(1, 10, '0xa'),
    block(1, 10, '0xb'),
    block(1, 11, '0xc'),
    block(2, 10, '0xd'),
  ]);
  backend.seed('transactions', [tx(10, '0xa', 0), tx(10, '0xa', 1), tx(10, '0xb', 0), tx(11, '0xc', 0)]);
  backend.seed('balances', [{ address: 'alice', amount: '5' }]);
  const delays: number[] = [];
  const factory = new StorageIoScopeFactory({
    backend,
    storage: storageConfig(opts.storage),
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
    random: opts.random ?? (() => 0),
    now: () => 1_000,
  });
  return { backend, factory, delays };
}

/** Collects an async iterable. */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** The rejection of `promise` (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await promise;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}
