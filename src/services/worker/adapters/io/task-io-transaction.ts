// The TaskIoTransaction a writer plugin gets, over one attempt of a StorageTransaction. Plain writes
// pass through; block writes are expressed as delete-then-insert inside the same transaction, so a
// failing insert rolls the delete back and running the same task twice leaves the same rows:
//
//   replaceBlockRows(t, {number, chainId?}, rows)   = deleteWhere(t, {blockColumn: number, chainColumn: chainId}) + insertRows
//   replaceBlockRangeRows(t, {from, to, chainId?}, rows) = deleteWhere(t, {chainColumn: chainId}, {from, to}) + insertRows
//
// The deleteWhere takes the storage's region lock (one block; the bundles of a range), so on PostgreSQL
// two writers of one block — a retried task racing its first attempt — run one after the other and the
// table ends as one complete run, while writers of different blocks never wait for each other
// (docs/storage.md, "Concurrent writes on PostgreSQL").
//
// Every table written is recorded (the scope drops its cached reads after the transaction), every error
// a storage write throws is remembered as a storage error (the retry scope may re-run the whole
// transaction for it, while a writer's own errors pass through), and once the scope is closed every
// write rejects with CANCELLED.
//
// Tasks write only tables declared `writable: true`: every write to another declared table rejects with
// NOT_WRITABLE (not retryable) before any SQL runs, so nothing of it is written — this is the one
// boundary every writer's writes pass (docs/storage.md, "Which tables tasks may write").

import type { TableConfig } from '../../../../kernel/config-types.js';
import type {
  BlockRange,
  BlockSelector,
  Row,
  RowFilter,
  RowKey,
  TaskIoTransaction,
  WriteFence,
} from '../../../../kernel/plugin-types.js';
import { JOB_TERMS_TABLE } from '../../../../contracts/write-fence.js';
import { StorageError, StorageErrorCode } from '../../../storage/errors.js';
import { refuseTaskWrite } from '../../../storage/table-write-rule.js';
import type { StorageTransaction } from '../../../storage/types.js';
import { tableConfig } from './scan-query.js';

export interface TransactionContext {
  readonly tables: Readonly<Record<string, TableConfig>>;
  /** The writer's type (the chain import writer may write chain tables). */
  readonly writer?: string;
  readonly signal: AbortSignal;
  /** Tables written so far (all attempts). */
  readonly written: Set<string>;
  /** Errors thrown by storage writes (as opposed to the writer's own code). */
  readonly storageErrors: Set<unknown>;
  /** The CANCELLED error for a write issued after the scope closed. */
  readonly cancelled: (operation: string, table: string) => Error;
}

export function taskIoTransaction(tx: StorageTransaction, ctx: TransactionContext): TaskIoTransaction {
  const write = async <T>(operation: string, table: string, run: () => Promise<T>): Promise<T> => {
    try {
      if (ctx.signal.aborted) throw ctx.cancelled(operation, table);
      refuseTaskWrite(ctx.tables, table, operation, ctx.writer);
      ctx.written.add(table);
      return await run();
    } catch (err) {
      ctx.storageErrors.add(err);
      throw err;
    }
  };
  const blockColumns = (table: string, chainId: number | undefined): { block: string; chain?: string } => {
    const config = tableConfig(ctx.tables, table);
    if (config.blockColumn === undefined)
      throw badValue(table, `table "${table}" has no block column; block writes need one`);
    if (chainId !== undefined && config.chainColumn === undefined)
      throw badValue(table, `table "${table}" has no chain column, so a block write cannot take a chainId`);
    return {
      block: config.blockColumn,
      ...(chainId !== undefined && config.chainColumn !== undefined ? { chain: config.chainColumn } : {}),
    };
  };
  const insertIfAny = (table: string, rows: readonly Row[]): Promise<void> =>
    rows.length === 0 ? Promise.resolve() : tx.insertRows(table, rows);

  return {
    upsert: (table: string, key: RowKey, values: Row) =>
      write('upsert', table, () => tx.upsert(table, key, values)),
    insertRows: (table: string, rows: readonly Row[]) =>
      write('insertRows', table, () => tx.insertRows(table, rows)),
    delete: (table: string, key: RowKey) => write('delete', table, () => tx.delete(table, key)),
    deleteWhere: (table: string, where: RowFilter, blockRange?: BlockRange) =>
      write('deleteWhere', table, () => tx.deleteWhere(table, where, blockRange)),
    replaceBlockRows: (table: string, block: BlockSelector, rows: readonly Row[]) =>
      write('replaceBlockRows', table, async () => {
        const columns = blockColumns(table, block.chainId);
        const where: Record<string, unknown> = { [columns.block]: block.number };
        if (columns.chain !== undefined) where[columns.chain] = block.chainId;
        await tx.deleteWhere(table, where);
        await insertIfAny(table, rows);
      }),
    replaceBlockRangeRows: (
      table: string,
      range: BlockRange & { readonly chainId?: number },
      rows: readonly Row[],
    ) =>
      write('replaceBlockRangeRows', table, async () => {
        const columns = blockColumns(table, range.chainId);
        const where: Record<string, unknown> = {};
        if (columns.chain !== undefined) where[columns.chain] = range.chainId;
        await tx.deleteWhere(table, where, { from: range.from, to: range.to });
        await insertIfAny(table, rows);
      }),
    // Not a write of a table the task names: the job terms table is the storage's own (docs/follow.md).
    checkFence: async (fence: WriteFence) => {
      try {
        if (ctx.signal.aborted) throw ctx.cancelled('checkFence', JOB_TERMS_TABLE);
        await tx.checkFence(fence);
      } catch (err) {
        ctx.storageErrors.add(err);
        throw err;
      }
    },
  };
}

function badValue(table: string, message: string): StorageError {
  return new StorageError(StorageErrorCode.BAD_VALUE, message, { table });
}
