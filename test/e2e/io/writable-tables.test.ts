// Tasks write only tables declared `writable: true` (docs/storage.md, "Which tables tasks may write"), on
// real storage (SQLite file and PostgreSQL) through a real Worker and Executor. The probe of issue 16: a
// CallListCallConfig task with an empty call list and `BlockWriteResultHandler {table: "events", block: 2}`
// deleted block 2's events. Now:
//   - SubmitTask refuses it (INVALID_ARGUMENT naming tables.events.writable), and the same for `blocks`;
//   - past admission, the task IO scope refuses the write itself (NOT_WRITABLE, before any SQL): the probe
//     run straight against the writer, and a TableUpserts task whose upserts name `events` at run time
//     fails PLUGIN_FAILED, not retryable, leaving the events rows and its own token_transfers upsert unwritten;
//   - the writable output table token_transfers is still written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import blockWriter, {
  type BlockWriteResultHandlerConfig,
} from '../../../plugins/writers/block-write/src/index.js';
import type { TaskInput } from '../../../src/grpc/domain-types.js';
import type { TaskCtx } from '../../../src/kernel/plugin-types.js';
import { writeSyntheticChain } from '../../../src/services/storage/block-data/index.js';
import { pluginConfigOf } from '../../support/plugin-config.js';
import { CHAIN_ID, newTaskId, rowsWhere, startIoStack, testDatabases, type IoStack } from './harness.js';

const dbs = testDatabases('wt');
const BLOCK = 2;
// The writer's config as a Worker hands it over: validated, the schema defaults filled in.
const blockConfig = await pluginConfigOf<BlockWriteResultHandlerConfig>(
  new URL('../../../plugins/writers/block-write/', import.meta.url),
);

function blockWriteTask(table: string): TaskInput {
  return {
    taskId: newTaskId(),
    functionCallConfig: { type: 'CallListCallConfig', config: { function: 'erc20_transfers', callList: [] } },
    resultHandler: {
      type: 'BlockWriteResultHandler',
      config: { table, chainId: CHAIN_ID, block: { number: BLOCK } },
    },
    taskTimeoutMs: 60_000,
  };
}

describe.each([
  ['sqlite', dbs.makeSqlite],
  ['postgres', dbs.makePg],
])('writers write only writable tables on %s', (_name, makeUrl) => {
  let stack: IoStack;
  const rowsOf = (table: 'events' | 'blocks', column: string) =>
    rowsWhere(stack.backend, table, { where: { chain_id: CHAIN_ID, [column]: BLOCK } });
  let events: Awaited<ReturnType<typeof rowsOf>>;
  let blocks: Awaited<ReturnType<typeof rowsOf>>;

  beforeAll(async () => {
    stack = await startIoStack({ url: await makeUrl() });
    await writeSyntheticChain(stack.backend, stack.config.tables, {
      chainId: CHAIN_ID,
      fromBlock: 1,
      blocks: 4,
      seed: 7,
      chunk: 4,
    });
    events = await rowsOf('events', 'block_number');
    blocks = await rowsOf('blocks', 'number');
    expect(events.length).toBeGreaterThan(0);
    expect(blocks.length).toBeGreaterThan(0);
  });

  afterAll(async () => {
    await stack?.close();
  });

  it.each([
    ['events', 'block_number'],
    ['blocks', 'number'],
  ] as const)('SubmitTask refuses a BlockWrite of %s; its rows stay', async (table, column) => {
    await expect(stack.submit(blockWriteTask(table))).rejects.toMatchObject({
      code: 3, // INVALID_ARGUMENT
      details: expect.stringMatching(new RegExp(`tables\\.${table}\\.writable`)) as unknown,
    });
    expect(await rowsOf(table, column)).toEqual(table === 'events' ? events : blocks);
  });

  it('the task IO scope refuses the probe write itself: NOT_WRITABLE, nothing deleted', async () => {
    const scope = await stack.factory.open(`probe-${newTaskId()}`);
    try {
      const taskCtx: TaskCtx = {
        taskId: scope.taskId,
        stage: 'plugin',
        deadlineMs: 0,
        signal: new AbortController().signal,
      };
      const run = blockWriter.execute(
        taskCtx,
        blockConfig({ table: 'events', chainId: CHAIN_ID, block: { number: BLOCK } }),
        [],
        scope.io('result'),
      );
      await expect(run).rejects.toMatchObject({
        code: 'NOT_WRITABLE',
        retryable: false,
        message: expect.stringMatching(
          /table "events" is not writable by tasks \(rule: tables\.events\.writable/,
        ) as unknown,
      });
    } finally {
      await scope.close();
    }
    expect(await rowsOf('events', 'block_number')).toEqual(events);
  });

  it('a run-time upsert of events fails the task PLUGIN_FAILED, not retryable, and writes nothing', async () => {
    const event = events[0]!;
    const key = {
      chain_id: event.chain_id,
      block_number: event.block_number,
      block_hash: event.block_hash,
      idx: event.idx,
    };
    const update = await stack.submit({
      taskId: newTaskId(),
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'events_upsert', callList: [[key, { ...event, data: '0xdead' }]] },
      },
      resultHandler: { type: 'TableUpsertsResultHandler', config: {} },
      taskTimeoutMs: 60_000,
    });
    expect(update.state).toBe('FAILED');
    const er = update.result?.executeResult;
    expect(er).toMatchObject({ failureCode: 'PLUGIN_FAILED', retryable: false });
    expect(er?.failureMessage).toMatch(/tables\.events\.writable/);
    expect(await rowsOf('events', 'block_number')).toEqual(events);
    expect(
      await rowsWhere(stack.backend, 'token_transfers', {
        where: { chain_id: CHAIN_ID, block_number: BLOCK },
      }),
    ).toEqual([]);
  });

  it('a BlockWrite of the writable output table token_transfers still succeeds', async () => {
    const update = await stack.submit(blockWriteTask('token_transfers'));
    const er = update.result?.executeResult;
    expect(update.state, `${er?.failureCode}: ${er?.failureMessage}`).toBe('SUCCEEDED');
    expect(er?.pluginResults[0]?.result).toMatchObject({ table: 'token_transfers', rows: 0 });
    expect(await rowsOf('events', 'block_number')).toEqual(events);
  });
});
