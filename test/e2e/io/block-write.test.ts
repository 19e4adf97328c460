// BlockTableCallConfig → BlockWriteResultHandler on real storage (SQLite file and PostgreSQL), through a
// real Worker and Executor: erc20_transfers over the events of one block of a generated chain writes that
// block's token_transfers rows. Checks them against a direct decode of the generated events, at a forked
// height too (the non-canonical sibling's rows never mix in), by number and by hash, and that writes are
// idempotent block replacements: a replay leaves the same table, a narrower run replaces only its block.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskInput, TaskUpdate } from '../../../src/grpc/domain-types.js';
import {
  ERC20_TRANSFER_SELECTOR,
  tokenTransfersOf,
  writeSyntheticChain,
} from '../../../src/services/storage/block-data/index.js';
import type { RowFilter } from '../../../src/services/storage/types.js';
import {
  blocksAt,
  forkedChain,
  newTaskId,
  rowsWhere,
  sortRows,
  startIoStack,
  testDatabases,
  type IoStack,
} from './harness.js';

const BLOCKS = 30;
const chain = forkedChain(1, BLOCKS);
const dbs = testDatabases('bw');

type BlockSelector = { number: number } | { hash: string };

function transferTask(block: BlockSelector, number: number, where: RowFilter = {}): TaskInput {
  return {
    taskId: newTaskId(),
    functionCallConfig: {
      type: 'BlockTableCallConfig',
      config: {
        function: 'erc20_transfers',
        table: 'events',
        chainId: chain.chainId,
        block,
        where: { selector: ERC20_TRANSFER_SELECTOR, ...where },
      },
    },
    resultHandler: {
      type: 'BlockWriteResultHandler',
      config: { table: 'token_transfers', chainId: chain.chainId, block: { number } },
    },
    taskTimeoutMs: 60_000,
  };
}

function expectSucceeded(update: TaskUpdate): void {
  const er = update.result?.executeResult;
  expect(update.state, `${er?.failureCode}: ${er?.failureMessage}`).toBe('SUCCEEDED');
}

/** Heights 1..BLOCKS other than the fork whose canonical block holds at least one transfer. */
function plainHeights(n: number): number[] {
  const out: number[] = [];
  for (let h = 1; h <= BLOCKS && out.length < n; h++) {
    if (h === chain.forkHeight) continue;
    const { canonical, sibling } = blocksAt(chain, h);
    if (sibling === undefined && tokenTransfersOf(canonical.events).length > 0) out.push(h);
  }
  return out;
}

describe.each([
  ['sqlite', dbs.makeSqlite],
  ['postgres', dbs.makePg],
])('BlockTable → BlockWrite on %s', (_name, makeUrl) => {
  let stack: IoStack;
  const tokenRows = (number?: number) =>
    rowsWhere(stack.backend, 'token_transfers', {
      where:
        number === undefined
          ? { chain_id: chain.chainId }
          : { chain_id: chain.chainId, block_number: number },
    });

  beforeAll(async () => {
    stack = await startIoStack({ url: await makeUrl() });
    const totals = await writeSyntheticChain(stack.backend, stack.config.tables, {
      chainId: chain.chainId,
      fromBlock: 1,
      blocks: BLOCKS,
      seed: chain.seed,
      chunk: BLOCKS,
    });
    expect(totals.siblings).toBeGreaterThanOrEqual(1);
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('writes exactly the ERC-20 transfers of the canonical events of each block', async () => {
    const heights = plainHeights(3);
    expect(heights).toHaveLength(3);
    const updates = await Promise.all(heights.map((h) => stack.submit(transferTask({ number: h }, h))));
    updates.forEach(expectSucceeded);
    for (const [i, h] of heights.entries()) {
      const expected = tokenTransfersOf(blocksAt(chain, h).canonical.events);
      expect(await tokenRows(h)).toEqual(sortRows(expected));
      expect(updates[i]?.result?.executeResult.pluginResults[0]?.result).toMatchObject({
        rows: expected.length,
      });
    }
  });

  it('at a forked height: by number only canonical rows; by hash exactly the chosen block', async () => {
    const h = chain.forkHeight;
    const { canonical, sibling } = blocksAt(chain, h);
    expect(sibling).toBeDefined();
    const canonicalRows = sortRows(tokenTransfersOf(canonical.events));
    const siblingRows = sortRows(tokenTransfersOf(sibling?.events ?? []));
    expect(siblingRows).not.toEqual(canonicalRows);

    expectSucceeded(await stack.submit(transferTask({ number: h }, h)));
    expect(await tokenRows(h)).toEqual(canonicalRows);

    // {hash} picks that exact block, canonical or not (recomputing a fork): the sibling's rows replace
    // the canonical ones wholesale, none of the canonical block's rows survive ...
    expectSucceeded(await stack.submit(transferTask({ hash: sibling!.block.hash }, h)));
    expect(await tokenRows(h)).toEqual(siblingRows);

    // ... and the canonical hash brings back exactly the canonical rows.
    expectSucceeded(await stack.submit(transferTask({ hash: canonical.block.hash }, h)));
    expect(await tokenRows(h)).toEqual(canonicalRows);
  });

  it('replaying a task (new task id, same config) leaves the identical table', async () => {
    const [h] = plainHeights(1);
    const before = await rowsWhere(stack.backend, 'token_transfers');
    expect(before.length).toBeGreaterThan(0);
    expectSucceeded(await stack.submit(transferTask({ number: h! }, h!)));
    expectSucceeded(await stack.submit(transferTask({ number: chain.forkHeight }, chain.forkHeight)));
    expect(await rowsWhere(stack.backend, 'token_transfers')).toEqual(before);
  });

  it('fewer outputs replace the block’s old rows; other blocks stay untouched', async () => {
    const [h] = plainHeights(1);
    const all = tokenTransfersOf(blocksAt(chain, h!).canonical.events);
    const token = all[0]!.token;
    const narrowed = all.filter((r) => r.token === token);
    expect(narrowed.length).toBeLessThan(all.length);
    const others = (await rowsWhere(stack.backend, 'token_transfers')).filter((r) => r.block_number !== h);
    expect(others.length).toBeGreaterThan(0);

    const update = await stack.submit(transferTask({ number: h! }, h!, { contract_id: token }));
    expectSucceeded(update);
    expect(update.result?.executeResult.pluginResults[0]?.result).toMatchObject({ rows: narrowed.length });
    expect(await tokenRows(h)).toEqual(sortRows(narrowed));
    const othersAfter = (await rowsWhere(stack.backend, 'token_transfers')).filter(
      (r) => r.block_number !== h,
    );
    expect(othersAfter).toEqual(others);
  });
});
