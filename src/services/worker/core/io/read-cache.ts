// The task-scoped read cache (seeds: "shared state, read cache, and timeouts are all anchored to the
// task"). One per task IO scope, shared by every phase and every call of the task, dropped with it.
//
// Theory of operation:
//   - An entry is keyed by table + the canonical JSON of the row key (object keys sorted, so {a,b} and
//     {b,a} are one entry). The value is opaque here: the scope stores the read's promise, so a read that
//     is still in flight is shared by everyone asking for the same key, and a miss (no row) is cached
//     like a hit.
//   - Bounded by `maxEntries`, least recently used evicted first; 0 disables the cache entirely.
//   - Writes do not patch entries: after a committed transaction the scope drops every entry of each
//     table it wrote (`invalidateTables`), which is simple and never stale.
// Pure: no IO, no clock. Hits and misses are counted for metrics.

import type { RowKey } from '../../../../kernel/plugin-types.js';

/** JSON with object keys sorted at every level: equal values give equal strings. Throws on bigint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const v = record[key];
      if (v !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(v)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The cache key of one row: the table, a NUL, the canonical key. */
export function readCacheKey(table: string, key: RowKey): string {
  return `${table}\u0000${canonicalJson(key)}`;
}

export interface ReadCacheStats {
  readonly entries: number;
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
}

export type CacheLookup<V> = { readonly hit: true; readonly value: V } | { readonly hit: false };

interface Entry<V> {
  readonly table: string;
  readonly value: V;
}

export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(private readonly maxEntries: number) {}

  get enabled(): boolean {
    return this.maxEntries > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Looks `key` up and counts a hit or a miss; a hit becomes the most recently used entry. */
  lookup(key: string): CacheLookup<V> {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return { hit: false };
    }
    this.hits++;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return { hit: true, value: entry.value };
  }

  /** Whether `key` has an entry (not counted, order unchanged). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Stores `value` as the most recently used entry, evicting the least recently used beyond the bound. */
  set(table: string, key: string, value: V): void {
    if (!this.enabled) return;
    this.entries.delete(key);
    this.entries.set(key, { table, value });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
      this.evictions++;
    }
  }

  /** Removes `key` only while its entry still holds `value` (a newer read of the key wins). */
  deleteIfSame(key: string, value: V): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined || entry.value !== value) return false;
    return this.entries.delete(key);
  }

  /** Drops every entry of the given tables; returns how many. */
  invalidateTables(tables: Iterable<string>): number {
    const set = new Set(tables);
    if (set.size === 0) return 0;
    let dropped = 0;
    for (const [key, entry] of this.entries) {
      if (set.has(entry.table)) {
        this.entries.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  clear(): void {
    this.entries.clear();
  }

  stats(): ReadCacheStats {
    return { entries: this.entries.size, hits: this.hits, misses: this.misses, evictions: this.evictions };
  }
}
