// Row helpers of the in-memory TaskIo fake (memory-task-io.ts): primary keys, ordering, filters and
// projections with the storage port's semantics (an array in a filter means "any of"; a block range is
// inclusive on the table's blockColumn).
import type { TableConfig } from '../../src/kernel/config-types.js';
import type { BlockRange, Row, RowFilter } from '../../src/kernel/plugin-types.js';

export function pkOf(config: TableConfig, row: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(config.primaryKey.map((c) => row[c]));
}

export function sortedRows(data: Map<string, Row>, config: TableConfig): Row[] {
  return [...data.values()].sort((a, b) => {
    for (const c of config.primaryKey) {
      const d = compareValues(a[c], b[c]);
      if (d !== 0) return d;
    }
    return 0;
  });
}

function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = typeof a === 'string' ? a : JSON.stringify(a);
  const y = typeof b === 'string' ? b : JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function matches(
  row: Row,
  where: RowFilter,
  blockColumn: string | undefined,
  range?: BlockRange,
): boolean {
  for (const [column, wanted] of Object.entries(where)) {
    const options = Array.isArray(wanted) ? wanted : [wanted];
    if (!options.some((w) => sameValue(row[column], w))) return false;
  }
  if (range && blockColumn) {
    const n = row[blockColumn];
    if (typeof n !== 'number' || n < range.from || n > range.to) return false;
  }
  return true;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  return typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b);
}

export function project(row: Row, columns: readonly string[] | undefined): Row {
  if (!columns) return { ...row };
  return Object.fromEntries(columns.map((c) => [c, row[c]]));
}
