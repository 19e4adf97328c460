// Turning call outputs into the rows of one bundle: each output is a row object, an array of rows, or
// null/undefined (no rows). Every row must carry its block number, inside the bundle's range (a bundle
// spans many blocks, so there is nothing to fill it from); the chain column may be omitted (filled from
// the config) but must not name another chain. Anything else is a BAD_OUTPUT: writing it would escape
// the range the writer replaces and break idempotent reruns.
import type { Row } from 'blockx/plugin';
import { BlockBundleWriteError, BlockBundleWriteErrorCode } from './errors.js';

export interface BundleTarget {
  readonly chainId: number;
  readonly from: number;
  readonly to: number;
  readonly chainColumn: string;
  readonly blockColumn: string;
}

export function bundleRows(outputs: readonly unknown[], target: BundleTarget): Row[] {
  const rows: Row[] = [];
  outputs.forEach((output, outputIndex) => {
    if (output === null || output === undefined) return;
    const list = Array.isArray(output) ? output : [output];
    list.forEach((row: unknown, i) => {
      const rowIndex = Array.isArray(output) ? i : undefined;
      const where =
        rowIndex === undefined ? `output ${outputIndex}` : `output ${outputIndex} row ${rowIndex}`;
      const fail = (problem: string): never => {
        throw new BlockBundleWriteError(BlockBundleWriteErrorCode.BAD_OUTPUT, `${where}: ${problem}`, {
          outputIndex,
          ...(rowIndex === undefined ? {} : { rowIndex }),
        });
      };
      if (!isRecord(row)) fail(`expected a row object, an array of rows or null, got ${describe(row)}`);
      const given = row as Row;
      const { chainColumn, blockColumn, chainId, from, to } = target;
      const chain = given[chainColumn];
      if (chain !== undefined && chain !== chainId)
        fail(`${chainColumn} is ${describe(chain)} but this writer replaces ${chainColumn} ${chainId} only`);
      const block = given[blockColumn];
      if (block === undefined) fail(`${blockColumn} is missing; a bundle row must name its block`);
      if (!Number.isSafeInteger(block) || (block as number) < from || (block as number) > to)
        fail(`${blockColumn} is ${describe(block)}, outside the bundle's blocks ${from}…${to}`);
      // A row that names its chain goes as it is; only one that omits it is copied to fill it.
      rows.push(chain === undefined ? { ...given, [chainColumn]: chainId } : given);
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
