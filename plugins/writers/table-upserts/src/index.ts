// TableUpsertsResultHandler: the calls return upserts `{table, key, values}` (or arrays of them, or null)
// and the writer applies all of them in ONE transaction, in output order (a later upsert of the same key
// wins). Upserts replace whole rows by primary key, so running the same task twice leaves the same table
// state. `tables` optionally restricts which tables the task may write. The config has already been
// validated against ../schema.json.
//
// The upserts go to storage in lock order (lockOrder: by table, then key), not output order: two tasks
// upserting overlapping keys then take their row locks in the same order and never deadlock (see
// docs/storage.md, "Concurrent writes on PostgreSQL"). The sort is stable, so upserts of one key keep
// their output order and the later still wins.
import { defineWriter, type WriterResult } from 'blockx/plugin';
import { collectUpserts, lockOrder } from './upserts.js';

export { TableUpsertsError, TableUpsertsErrorCode } from './errors.js';
export type { Upsert } from './upserts.js';

export interface TableUpsertsResultHandlerConfig {
  /** Allow-list of tables the upserts may name; default: any table declared `writable: true` (docs/storage.md). */
  readonly tables?: readonly string[];
}

const PLUGIN_NAME = 'TableUpsertsResultHandler';

const tableUpsertsWriter = defineWriter<TableUpsertsResultHandlerConfig>({
  name: PLUGIN_NAME,
  async execute(_taskCtx, config, outputs, io): Promise<WriterResult[]> {
    // Every output is checked before the transaction opens: a bad one writes nothing.
    const upserts = collectUpserts(outputs, config.tables ? new Set(config.tables) : undefined);
    const perTable = new Map<string, number>();
    for (const u of upserts) perTable.set(u.table, (perTable.get(u.table) ?? 0) + 1);
    if (upserts.length > 0) {
      // IO errors propagate unchanged: the IO scope has classified them (`retryable`) and retried already.
      await io.transaction(async (tx) => {
        for (const u of lockOrder(upserts)) await tx.upsert(u.table, u.key, u.values);
      });
    }
    const tables = Object.fromEntries([...perTable].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return [{ pluginName: PLUGIN_NAME, success: true, result: { upserts: upserts.length, tables } }];
  },
});

export default tableUpsertsWriter;
