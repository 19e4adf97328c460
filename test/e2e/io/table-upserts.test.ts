// CallListCallConfig → TableUpsertsResultHandler on real storage (SQLite file and PostgreSQL), through a
// real Worker and Executor: transfer_upserts returns token_transfers upserts and the writer applies all
// of a task's upserts in one transaction. A malformed upsert fails the task PLUGIN_FAILED, not retryable,
// and writes nothing — whether the writer rejects it before its transaction (no `values`) or storage
// rejects it inside the transaction after the valid upserts before it were applied (unknown column).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskInput, TaskUpdate } from '../../../src/grpc/domain-types.js';
import { transferValues } from './functions/transfer_upserts.js';
import {
  CHAIN_ID,
  newTaskId,
  rowsWhere,
  sortRows,
  startIoStack,
  testDatabases,
  type IoStack,
} from './harness.js';

const dbs = testDatabases('tu');

type Args = [chainId: number, blockNumber: number, fromIdx: number, count: number, bad?: 'shape' | 'column'];

function upsertTask(callList: Args[]): TaskInput {
  return {
    taskId: newTaskId(),
    functionCallConfig: { type: 'CallListCallConfig', config: { function: 'transfer_upserts', callList } },
    resultHandler: { type: 'TableUpsertsResultHandler', config: { tables: ['token_transfers'] } },
    taskTimeoutMs: 60_000,
  };
}

function expectedRow(blockNumber: number, idx: number) {
  return { chain_id: CHAIN_ID, block_number: blockNumber, log_idx: idx, ...transferValues(blockNumber, idx) };
}

function expectPluginFailed(update: TaskUpdate, message: RegExp): void {
  expect(update.state).toBe('FAILED');
  const er = update.result?.executeResult;
  expect(er).toMatchObject({ failureCode: 'PLUGIN_FAILED', retryable: false });
  expect(er?.failureMessage).toMatch(message);
  expect(er?.pluginResults[0]).toMatchObject({ pluginName: 'TableUpsertsResultHandler', success: false });
}

describe.each([
  ['sqlite', dbs.makeSqlite],
  ['postgres', dbs.makePg],
])('CallList → TableUpserts on %s', (_name, makeUrl) => {
  let stack: IoStack;
  const blockRows = (n: number) =>
    rowsWhere(stack.backend, 'token_transfers', { where: { chain_id: CHAIN_ID, block_number: n } });

  beforeAll(async () => {
    stack = await startIoStack({ url: await makeUrl() });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('applies every upsert of every call output', async () => {
    const update = await stack.submit(
      upsertTask([
        [CHAIN_ID, 100, 0, 3],
        [CHAIN_ID, 100, 3, 2],
        [CHAIN_ID, 101, 0, 1],
      ]),
    );
    const er = update.result?.executeResult;
    expect(update.state, `${er?.failureCode}: ${er?.failureMessage}`).toBe('SUCCEEDED');
    expect(er?.pluginResults[0]?.result).toEqual({ upserts: 6, tables: { token_transfers: 6 } });
    expect(await blockRows(100)).toEqual(sortRows([0, 1, 2, 3, 4].map((i) => expectedRow(100, i))));
    expect(await blockRows(101)).toEqual([expectedRow(101, 0)]);
  });

  it('an upsert replaces the row with its key (a rerun leaves the same table)', async () => {
    const before = await rowsWhere(stack.backend, 'token_transfers');
    // Overwrite one row by hand, then rerun: the upsert puts the function's values back.
    await stack.backend.transaction((tx) =>
      tx.upsert(
        'token_transfers',
        { chain_id: CHAIN_ID, block_number: 100, log_idx: 1 },
        { ...transferValues(100, 1), amount: '0' },
      ),
    );
    const update = await stack.submit(upsertTask([[CHAIN_ID, 100, 0, 3]]));
    expect(update.state).toBe('SUCCEEDED');
    expect(await rowsWhere(stack.backend, 'token_transfers')).toEqual(before);
  });

  it('a malformed upsert (no values) fails PLUGIN_FAILED, not retryable, and writes nothing', async () => {
    const before = await rowsWhere(stack.backend, 'token_transfers');
    const update = await stack.submit(
      upsertTask([
        [CHAIN_ID, 200, 0, 3],
        [CHAIN_ID, 200, 3, 2, 'shape'],
      ]),
    );
    expectPluginFailed(update, /values must be an object/);
    expect(await blockRows(200)).toEqual([]);
    expect(await rowsWhere(stack.backend, 'token_transfers')).toEqual(before);
  });

  it('an upsert storage rejects after valid ones in the same transaction writes nothing at all', async () => {
    const before = await rowsWhere(stack.backend, 'token_transfers');
    // One output: 4 valid upserts, then one naming a column token_transfers does not have. The writer
    // applies them in order inside one transaction, so the valid ones reach the database first.
    const update = await stack.submit(
      upsertTask([
        [CHAIN_ID, 300, 0, 4, 'column'],
        [CHAIN_ID, 301, 0, 2],
      ]),
    );
    expectPluginFailed(update, /nope/);
    expect(await blockRows(300)).toEqual([]);
    expect(await blockRows(301)).toEqual([]);
    expect(await rowsWhere(stack.backend, 'token_transfers')).toEqual(before);

    // The table is fine afterwards: the same task without the bad upsert commits.
    const fixed = await stack.submit(
      upsertTask([
        [CHAIN_ID, 300, 0, 4],
        [CHAIN_ID, 301, 0, 2],
      ]),
    );
    expect(fixed.state).toBe('SUCCEEDED');
    expect(await blockRows(300)).toEqual(sortRows([0, 1, 2, 3].map((i) => expectedRow(300, i))));
  });
});
