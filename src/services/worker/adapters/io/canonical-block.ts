// A block number in a scan means the canonical block at that height (docs/storage.md § Canonical
// blocks). One height can hold several blocks (a reorg leaves non-canonical siblings, and `blockx data
// generate` makes some); the blocks table says which one is canonical in its `canonical` column. So a
// scan `{block: n}` of a table with a block hash column is served as a scan of the canonical block's
// hash (found in the blocks table first), and a scan of the blocks table itself keeps `canonical =
// true`. A hash (`{block: '0x…'}`, or a block object with a hash) names one block exactly, canonical or
// not, and is left as it is.
//
// Left as they are, too: tables without a block hash column (they hold one block per height, e.g. tables
// derived from canonical blocks only), a config without a `blocks` table with a `canonical` column, and
// a scan whose `where` already chooses the hash (or, for the blocks table, `canonical`) itself.
//
// Pure: the lookup of the canonical hashes is the caller's (it runs it inside its retry scope).
import type { TableConfig } from '../../../../kernel/config-types.js';
import type { ScanQuery } from '../../../../kernel/plugin-types.js';

/** The table whose `canonical` column says which block of a height is canonical. */
export const CANONICAL_BLOCKS_TABLE = 'blocks';
export const CANONICAL_COLUMN = 'canonical';

type Tables = Readonly<Record<string, TableConfig>>;

export type CanonicalScanPlan =
  /** Scan as asked. */
  | { readonly kind: 'as-is'; readonly query: ScanQuery | undefined }
  /**
   * Look up the canonical hashes first (a scan of `table` with `query`, projecting `hashColumn`), then
   * scan with `scanFor(hashes)`; no hash → no rows.
   */
  | {
      readonly kind: 'lookup';
      readonly table: string;
      readonly query: ScanQuery;
      readonly hashColumn: string;
      readonly scanFor: (hashes: readonly string[]) => ScanQuery | undefined;
    };

function isSet(where: ScanQuery['where'], column: string | undefined): boolean {
  return column !== undefined && where !== undefined && where[column] !== undefined;
}

/** How to serve `query` on `table` so that a block number reads the canonical block only. */
export function canonicalScanPlan(
  tables: Tables,
  table: string,
  query: ScanQuery | undefined,
): CanonicalScanPlan {
  const asIs = { kind: 'as-is', query } as const;
  const height = query?.block;
  if (typeof height !== 'number') return asIs;
  const blocks = Object.hasOwn(tables, CANONICAL_BLOCKS_TABLE) ? tables[CANONICAL_BLOCKS_TABLE] : undefined;
  const config = Object.hasOwn(tables, table) ? tables[table] : undefined;
  if (
    blocks === undefined ||
    config === undefined ||
    !Object.hasOwn(blocks.columns, CANONICAL_COLUMN) ||
    blocks.blockColumn === undefined ||
    blocks.blockHashColumn === undefined ||
    config.blockHashColumn === undefined
  ) {
    return asIs;
  }
  const where = query?.where;
  if (table === CANONICAL_BLOCKS_TABLE) {
    if (isSet(where, CANONICAL_COLUMN) || isSet(where, config.blockHashColumn)) return asIs;
    return { kind: 'as-is', query: { ...query, where: { ...where, [CANONICAL_COLUMN]: true } } };
  }
  if (isSet(where, config.blockHashColumn)) return asIs;
  // The chain the scan is narrowed to, if any, narrows the lookup too (one canonical block per chain).
  const chain =
    config.chainColumn !== undefined && blocks.chainColumn !== undefined
      ? where?.[config.chainColumn]
      : undefined;
  const hashColumn = config.blockHashColumn;
  const blockColumn = config.blockColumn;
  return {
    kind: 'lookup',
    table: CANONICAL_BLOCKS_TABLE,
    query: {
      where: {
        [blocks.blockColumn]: height,
        [CANONICAL_COLUMN]: true,
        ...(chain !== undefined ? { [blocks.chainColumn!]: chain } : {}),
      },
      columns: [blocks.blockHashColumn],
    },
    hashColumn: blocks.blockHashColumn,
    scanFor: (hashes) => {
      if (hashes.length === 0) return undefined;
      const { block: _height, ...rest } = query!;
      return {
        ...rest,
        where: {
          ...where,
          ...(blockColumn !== undefined ? { [blockColumn]: height } : {}),
          [hashColumn]: hashes.length === 1 ? hashes[0] : [...hashes],
        },
      };
    },
  };
}
