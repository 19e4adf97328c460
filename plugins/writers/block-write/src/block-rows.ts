// Turning call outputs into the rows of one block: each output is a row object, an array of rows, or
// null/undefined (no rows). Rows may omit the chain and block number columns (filled from the config);
// a row that names another chain or block is a BAD_OUTPUT, since writing it would escape the block the
// writer replaces and break idempotent reruns.
import type { Row } from 'blockx/plugin';
import { BlockWriteError, BlockWriteErrorCode } from './errors.js';

export interface RowColumns {
  readonly chainColumn: string;
  readonly blockColumn: string;
}

export function blockRows(
  outputs: readonly unknown[],
  target: { readonly chainId: number; readonly number: number },
  columns: RowColumns,
): Row[] {
  const rows: Row[] = [];
  outputs.forEach((output, outputIndex) => {
    if (output === null || output === undefined) return;
    const list = Array.isArray(output) ? output : [output];
    list.forEach((row: unknown, i) => {
      const rowIndex = Array.isArray(output) ? i : undefined;
      const where =
        rowIndex === undefined ? `output ${outputIndex}` : `output ${outputIndex} row ${rowIndex}`;
      const fail = (problem: string): never => {
        throw new BlockWriteError(BlockWriteErrorCode.BAD_OUTPUT, `${where}: ${problem}`, {
          outputIndex,
          ...(rowIndex === undefined ? {} : { rowIndex }),
        });
      };
      if (!isRecord(row)) fail(`expected a row object, an array of rows or null, got ${describe(row)}`);
      const given = row as Row;
      const chain = given[columns.chainColumn];
      const block = given[columns.blockColumn];
      if (chain !== undefined && chain !== target.chainId)
        fail(
          `${columns.chainColumn} is ${describe(chain)} but this writer replaces ${columns.chainColumn} ${target.chainId} only`,
        );
      if (block !== undefined && block !== target.number)
        fail(
          `${columns.blockColumn} is ${describe(block)} but this writer replaces ${columns.blockColumn} ${target.number} only`,
        );
      // A row that names its chain and block goes as it is; only one that omits them is copied to fill them.
      if (chain !== undefined && block !== undefined) rows.push(given);
      else
        rows.push({ ...given, [columns.chainColumn]: target.chainId, [columns.blockColumn]: target.number });
    });
  });
  return rows;
}

// Local on purpose: a plugin package imports nothing of BlockX but blockx/plugin (docs/plugins.md), and
// blockx/plugin stays small.
function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
