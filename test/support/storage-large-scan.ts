// A table far bigger than one page, scanned page by page: the scan must yield every row once, in key
// order, while the heap stays bounded by about a page (keyset pagination, nothing loaded up front).
// Used by the SQLite unit tests and the PostgreSQL e2e tests.
import type { TableConfig } from '../../src/kernel/config-types.js';
import type { StorageBackend } from '../../src/services/storage/types.js';

/** 400 characters a row: the whole table held in memory at once would be well over 100 MB. */
const PAYLOAD = 'x'.repeat(400);

export const LARGE_TABLE: Readonly<Record<string, TableConfig>> = {
  big_rows: {
    columns: {
      block: { type: 'bigint', nullable: false },
      idx: { type: 'integer', nullable: false },
      payload: { type: 'text', nullable: false },
    },
    primaryKey: ['block', 'idx'],
    blockColumn: 'block',
  },
};

export interface LargeScanResult {
  readonly count: number;
  readonly pages: number;
  /** Rows out of key order or repeated. */
  readonly outOfOrder: number;
  /** Highest heapUsed seen during the scan minus heapUsed before it. */
  readonly heapGrowthBytes: number;
}

/** Inserts `total` rows (transactions of `chunk` rows), in an order other than the key order. */
export async function fillLargeTable(backend: StorageBackend, total: number, chunk = 25_000): Promise<void> {
  for (let start = 0; start < total; start += chunk) {
    const rows: Record<string, unknown>[] = [];
    for (let i = Math.min(total, start + chunk) - 1; i >= start; i--)
      rows.push({ block: i % 1_000, idx: Math.floor(i / 1_000), payload: PAYLOAD });
    await backend.transaction((tx) => tx.insertRows('big_rows', rows));
  }
}

export async function scanLargeTable(backend: StorageBackend, batchSize: number): Promise<LargeScanResult> {
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  let count = 0;
  let pages = 0;
  let outOfOrder = 0;
  let last = -1;
  for await (const page of backend.scan('big_rows', { batchSize })) {
    pages++;
    for (const row of page) {
      const position = (row['block'] as number) * 1_000_000 + (row['idx'] as number);
      if (position <= last || row['payload'] !== PAYLOAD) outOfOrder++;
      last = position;
      count++;
    }
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }
  return { count, pages, outOfOrder, heapGrowthBytes: peak - before };
}
