// Which advisory locks a predicate write (deleteWhere, hence every block replacement) takes on
// PostgreSQL, so that port transactions can run READ COMMITTED without two writers of the same block
// ever interleaving (design and measurements: docs/storage.md, "Concurrent writes on PostgreSQL").
// Pure: no IO, no clock.
//
// Row writes (upsert, insertRows, delete by key) need nothing beyond the row locks PostgreSQL takes
// itself. A delete-by-predicate does: under READ COMMITTED, a second "delete block n, insert its rows"
// that overlaps a first would delete only what its snapshot saw and then merge its rows into the first
// one's. So a deleteWhere first takes the locks of the region it deletes, and holds them to the end of
// the transaction (pg_advisory_xact_lock*). The region is the narrowest of:
//
//   block  (table, chain, n)          the filter pins the block column (and the chain column, if any)
//   range  (table, chain, from..to)   a blockRange (and the chain pinned, if the table has one)
//   table  (table)                    anything else (no block column, chain not pinned, IN lists, ...)
//
// and the locks form a three-level hierarchy, with bundles of BUNDLE_SIZE blocks as the middle level
// (bundle id = floor((n − 1) / 1000) + 1; bundle 0 holds genesis):
//
//                 table key         bundle key               block key
//   block n       shared            shared (bundle of n)     exclusive
//   range         shared            exclusive, each bundle   —
//   table         exclusive         —                        —
//
// Two writes of one block exclude each other on the block key; a bundle write and a block write inside
// it on the bundle key (without the bundle write taking 1,000 block locks); writes of different blocks
// share only shared keys and never wait. A range over more than MAX_BUNDLE_LOCKS bundles takes the
// table key exclusively instead (a bounded number of locks per transaction: PostgreSQL's lock table is
// shared and finite). Ranges lock whole bundles, so two ranges in one bundle serialise even when they
// do not overlap: extra waiting, never a wrong result.
//
// Keys: SHA-256 of a versioned JSON description, first 8 bytes as the two int4 arguments of the
// two-key advisory lock form (a key space apart from the one-bigint form migrations use). Every worker
// derives the same key for the same region. Two regions whose keys collide (about 2^-64 per pair) only
// wait for each other: harmless, extra serialisation. Within one request the locks are taken in key
// order, so two single-region transactions can never deadlock; a transaction that deletes several
// regions in different orders than another can, and PostgreSQL's 40P01 is a retryable CONFLICT.

import { createHash } from 'node:crypto';
import type { TableConfig } from '../../kernel/config-types.js';
import type { Dialect } from './sql-dialect.js';
import type { Statement } from './sql-statements.js';
import type { BlockRange, RowFilter } from './types.js';

/** Blocks per bundle, the middle level of the lock hierarchy (BlockBundleCallConfig's default). */
export const BUNDLE_SIZE = 1000;
/** A range spanning more bundles than this locks the whole table instead. */
export const MAX_BUNDLE_LOCKS = 16;
/** Part of every hashed key: changing the derivation must change this, and every worker at once. */
const KEY_VERSION = 'blockx-write-lock/1';

/** What one predicate write covers. `chain` is null for a table without a chain column. */
export type WriteRegion =
  | {
      readonly kind: 'block';
      readonly table: string;
      readonly chain: number | string | null;
      readonly block: number;
    }
  | {
      readonly kind: 'range';
      readonly table: string;
      readonly chain: number | string | null;
      readonly from: number;
      readonly to: number;
    }
  | { readonly kind: 'table'; readonly table: string };

export type LockLevel = 'table' | 'bundle' | 'block';

/** One advisory lock: its two int4 keys and mode. */
export interface AdvisoryLock {
  readonly key: readonly [number, number];
  readonly exclusive: boolean;
  /** What it protects, for tests and diagnostics: `block token_transfers/1/42`. */
  readonly label: string;
}

/** The bundle holding block `n`: floor((n − 1) / size) + 1, so bundle 0 is genesis only. */
export function bundleOf(n: number, size: number = BUNDLE_SIZE): number {
  return Math.floor((n - 1) / size) + 1;
}

/** The two int4 keys of one lock name (deterministic in every process). */
export function lockKey(
  level: LockLevel,
  table: string,
  chain?: number | string | null,
  n?: number,
): [number, number] {
  const parts = level === 'table' ? [KEY_VERSION, level, table] : [KEY_VERSION, level, table, chain, n];
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}

/** The region a deleteWhere(where, blockRange) on `table` deletes from (a superset of its rows). */
export function deleteRegion(
  name: string,
  table: TableConfig,
  where: RowFilter,
  blockRange?: BlockRange,
): WriteRegion {
  const whole: WriteRegion = { kind: 'table', table: name };
  if (table.blockColumn === undefined) return whole;
  let chain: number | string | null = null;
  if (table.chainColumn !== undefined && table.chainColumn !== table.blockColumn) {
    const pinned = singleValue(where[table.chainColumn]);
    if (typeof pinned !== 'number' && typeof pinned !== 'string') return whole;
    chain = pinned;
  }
  const block = singleValue(where[table.blockColumn]);
  if (typeof block === 'number' && Number.isSafeInteger(block))
    return { kind: 'block', table: name, chain, block };
  if (block === undefined && blockRange !== undefined)
    return { kind: 'range', table: name, chain, from: blockRange.from, to: blockRange.to };
  return whole;
}

/** The locks of one region, in key order (the order they are taken in), at most one per key. */
export function regionLocks(region: WriteRegion): AdvisoryLock[] {
  const { table } = region;
  const lock = (exclusive: boolean, level: LockLevel, chain?: number | string | null, n?: number) => ({
    key: lockKey(level, table, chain, n),
    exclusive,
    label: level === 'table' ? `table ${table}` : `${level} ${table}/${String(chain)}/${n}`,
  });
  const tableExclusive = [lock(true, 'table')];
  switch (region.kind) {
    case 'table':
      return tableExclusive;
    case 'block':
      return inKeyOrder([
        lock(false, 'table'),
        lock(false, 'bundle', region.chain, bundleOf(region.block)),
        lock(true, 'block', region.chain, region.block),
      ]);
    case 'range': {
      if (region.from > region.to) return [];
      const first = bundleOf(region.from);
      const last = bundleOf(region.to);
      if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last) || last - first + 1 > MAX_BUNDLE_LOCKS)
        return tableExclusive;
      const locks = [lock(false, 'table')];
      for (let b = first; b <= last; b++) locks.push(lock(true, 'bundle', region.chain, b));
      return inKeyOrder(locks);
    }
    default: {
      const unreachable: never = region;
      throw new Error(`unknown write region ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Whether two lock sets would make their transactions wait for each other. */
export function locksConflict(a: readonly AdvisoryLock[], b: readonly AdvisoryLock[]): boolean {
  const modes = new Map(a.map((l) => [keyId(l), l.exclusive]));
  return b.some((l) => {
    const other = modes.get(keyId(l));
    return other !== undefined && (other || l.exclusive);
  });
}

/** A stable string id of a lock's key. */
export function keyId(lock: AdvisoryLock): string {
  return `${lock.key[0]}:${lock.key[1]}`;
}

/**
 * The statement taking `locks` in the given order (one round trip; select-list items are evaluated left
 * to right), or undefined when the dialect needs none: SQLite's BEGIN IMMEDIATE already admits one
 * writer at a time.
 */
export function lockStatement(dialect: Dialect, locks: readonly AdvisoryLock[]): Statement | undefined {
  if (dialect.kind !== 'postgres' || locks.length === 0) return undefined;
  const calls = locks.map((l) => {
    const [hi, lo] = l.key;
    if (!Number.isInteger(hi) || !Number.isInteger(lo)) throw new RangeError(`bad lock key ${keyId(l)}`);
    // Validated int4 values, inlined: the statement has no user input.
    return `${l.exclusive ? 'pg_advisory_xact_lock' : 'pg_advisory_xact_lock_shared'}(${hi}, ${lo})`;
  });
  return { sql: `SELECT ${calls.join(', ')}`, params: [] };
}

/** Sorted by key; of two locks on one key (a collision) only the stronger is kept. */
function inKeyOrder(locks: AdvisoryLock[]): AdvisoryLock[] {
  const byKey = new Map<string, AdvisoryLock>();
  for (const l of locks) {
    const id = keyId(l);
    const held = byKey.get(id);
    if (held === undefined || (l.exclusive && !held.exclusive)) byKey.set(id, l);
  }
  return [...byKey.values()].sort((x, y) => x.key[0] - y.key[0] || x.key[1] - y.key[1]);
}

/** The one value a filter entry pins, or undefined (absent, several values, NULL). */
function singleValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.length === 1 ? singleValue(value[0]) : undefined;
  return value === null ? undefined : value;
}
