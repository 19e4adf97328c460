// Serves the IO reads of a running function (`ctx.io.get / getMany / scan`) through its task's IO
// scope, in the Calls retry scope. The answer travels back over the executor socket as JSON, so it is
// shaped for that:
//   get     → the row, or null for a missing row
//   getMany → an array in key order, null for each missing row
//   scan    → the whole result as an array: at most `limit` rows, and never more than MAX_CALL_SCAN_ROWS
//             (a larger result is refused, not truncated: pass a limit, or scan in a builder)
// A key may be given bare (`io.get('blocks_by_hash', '0xab…')`) when the table's primary key has one
// column; every other key is the object of primary key columns.

import type { TableConfig } from '../../../../kernel/config-types.js';
import type { Row, RowKey, TaskIo } from '../../../../kernel/plugin-types.js';
import { TaskIoError, TaskIoErrorCode } from '../../core/io/index.js';
import type { CallIoRequest } from '../../../call-host/index.js';
import { callScanToQuery, tableConfig } from './scan-query.js';

/** Most rows one call's scan may return over the socket. */
export const MAX_CALL_SCAN_ROWS = 10_000;

export async function serveCallIo(
  io: TaskIo,
  tables: Readonly<Record<string, TableConfig>>,
  taskId: string,
  request: CallIoRequest,
): Promise<unknown> {
  switch (request.op) {
    case 'get': {
      const row = await io.get(request.table, callKey(tables, request.table, request.key));
      return row ?? null;
    }
    case 'getMany': {
      if (!Array.isArray(request.keys))
        throw badRequest(taskId, request.table, 'getMany keys must be an array');
      const keys = request.keys.map((key) => callKey(tables, request.table, key));
      const rows = await io.getMany(request.table, keys);
      return rows.map((row) => row ?? null);
    }
    case 'scan':
      return scanAll(io, tables, taskId, request.table, request.options);
    default: {
      const unknownOp: never = request;
      throw badRequest(
        taskId,
        undefined,
        `unknown io op ${JSON.stringify((unknownOp as { op?: unknown }).op)}`,
      );
    }
  }
}

async function scanAll(
  io: TaskIo,
  tables: Readonly<Record<string, TableConfig>>,
  taskId: string,
  table: string,
  options: unknown,
): Promise<Row[]> {
  const query = callScanToQuery(table, tableConfig(tables, table), options);
  if (query.limit !== undefined && query.limit > MAX_CALL_SCAN_ROWS)
    throw tooLarge(taskId, table, query.limit);
  // Without a limit, ask for one row more than allowed: getting it proves the result is too large.
  const cap = query.limit ?? MAX_CALL_SCAN_ROWS + 1;
  const rows: Row[] = [];
  if (cap === 0) return rows;
  for await (const row of io.scan(table, { ...query, limit: cap })) {
    rows.push(row);
    if (rows.length > MAX_CALL_SCAN_ROWS) throw tooLarge(taskId, table);
  }
  return rows;
}

/** A bare key value of a single-column primary key becomes `{column: value}`; objects pass as they are. */
function callKey(tables: Readonly<Record<string, TableConfig>>, table: string, key: unknown): RowKey {
  if (typeof key === 'object' && key !== null) return key as RowKey;
  const primaryKey = tableConfig(tables, table).primaryKey;
  const column = primaryKey[0];
  if (primaryKey.length === 1 && column !== undefined && key !== undefined && key !== null)
    return { [column]: key };
  return key as RowKey;
}

function tooLarge(taskId: string, table: string, limit?: number): TaskIoError {
  const what =
    limit === undefined
      ? `returns more than ${MAX_CALL_SCAN_ROWS} rows`
      : `asks for ${limit} rows, more than the ${MAX_CALL_SCAN_ROWS} a call may receive`;
  return new TaskIoError(
    TaskIoErrorCode.SCAN_TOO_LARGE,
    `task ${taskId}: io.scan of "${table}" ${what}; pass a limit of at most ${MAX_CALL_SCAN_ROWS}, or scan in a builder and hand the rows to calls`,
    { retryable: false, taskId, phase: 'calls', operation: 'scan', table },
  );
}

function badRequest(taskId: string, table: string | undefined, message: string): TaskIoError {
  return new TaskIoError(TaskIoErrorCode.BAD_REQUEST, `task ${taskId}: ${message}`, {
    retryable: false,
    taskId,
    phase: 'calls',
    table,
  });
}
