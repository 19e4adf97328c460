// BlockBundleCallConfig → BlockBundleWriteResultHandler on real storage (SQLite file and PostgreSQL),
// through a real Worker and Executor, with bundles of 10 blocks over a generated 30-block chain whose
// bundle 2 (blocks 11..20) holds a forked height. Built in the Builder phase and streamed during the
// Calls phase, the task leaves the same table state: exactly the ERC-20 transfers of the bundle's
// canonical blocks (no row of the non-canonical sibling), and rows of the neighbouring bundles untouched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskInput, TaskUpdate } from '../../../src/grpc/domain-types.js';
import {
  ERC20_TRANSFER_SELECTOR,
  tokenTransfersOf,
  writeSyntheticChain,
  type TokenTransferRow,
} from '../../../src/services/storage/block-data/index.js';
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
const BUNDLE_SIZE = 10;
const BUNDLE = 2;
const RANGE = { from: 11, to: 20 };
const chain = forkedChain(RANGE.from, RANGE.to);
const dbs = testDatabases('bb');

/** Rows in the neighbouring bundles that the bundle write must leave alone. */
const SENTINELS: TokenTransferRow[] = [RANGE.from - 1, RANGE.to + 1].map((n) => ({
  chain_id: chain.chainId,
  block_number: n,
  log_idx: 9_999,
  token: `0x${'ab'.repeat(20)}`,
  from_address: `0x${'01'.repeat(20)}`,
  to_address: `0x${'02'.repeat(20)}`,
  amount: String(n),
}));

function bundleTask(stream: boolean): TaskInput {
  return {
    taskId: newTaskId(),
    functionCallConfig: {
      type: 'BlockBundleCallConfig',
      config: {
        function: 'erc20_transfers',
        table: 'events',
        chainId: chain.chainId,
        bundle: BUNDLE,
        bundleSize: BUNDLE_SIZE,
        where: { selector: ERC20_TRANSFER_SELECTOR },
        stream: { enabled: stream },
      },
    },
    resultHandler: {
      type: 'BlockBundleWriteResultHandler',
      config: { table: 'token_transfers', chainId: chain.chainId, bundle: BUNDLE, bundleSize: BUNDLE_SIZE },
    },
    taskTimeoutMs: 60_000,
  };
}

function expectSucceeded(update: TaskUpdate): void {
  const er = update.result?.executeResult;
  expect(update.state, `${er?.failureCode}: ${er?.failureMessage}`).toBe('SUCCEEDED');
}

/** The transfers of the canonical blocks of the bundle, and those only the fork's sibling has. */
function expectedRows(): { canonical: TokenTransferRow[]; siblingOnly: TokenTransferRow[] } {
  const canonical: TokenTransferRow[] = [];
  const siblings: TokenTransferRow[] = [];
  for (let h = RANGE.from; h <= RANGE.to; h++) {
    const { canonical: block, sibling } = blocksAt(chain, h);
    canonical.push(...tokenTransfersOf(block.events));
    if (sibling !== undefined) siblings.push(...tokenTransfersOf(sibling.events));
  }
  const keep = new Set(canonical.map((r) => JSON.stringify(r)));
  return {
    canonical: sortRows(canonical),
    siblingOnly: siblings.filter((r) => !keep.has(JSON.stringify(r))),
  };
}

describe.each([
  ['sqlite', dbs.makeSqlite],
  ['postgres', dbs.makePg],
])('BlockBundle → BlockBundleWrite on %s', (_name, makeUrl) => {
  let stack: IoStack;
  const bundleRows = () =>
    rowsWhere(stack.backend, 'token_transfers', { where: { chain_id: chain.chainId }, blockRange: RANGE });
  const sentinelRows = async () =>
    (await rowsWhere(stack.backend, 'token_transfers')).filter((r) => r.log_idx === 9_999);

  beforeAll(async () => {
    stack = await startIoStack({ url: await makeUrl() });
    await writeSyntheticChain(stack.backend, stack.config.tables, {
      chainId: chain.chainId,
      fromBlock: 1,
      blocks: BLOCKS,
      seed: chain.seed,
      chunk: BLOCKS,
    });
    await stack.backend.transaction((tx) => tx.insertRows('token_transfers', SENTINELS));
  });

  afterAll(async () => {
    await stack?.close();
  });

  it('the generated bundle holds a forked height whose sibling has transfers of its own', () => {
    const { canonical, siblingOnly } = expectedRows();
    expect(chain.forkHeight).toBeGreaterThanOrEqual(RANGE.from);
    expect(chain.forkHeight).toBeLessThanOrEqual(RANGE.to);
    expect(canonical.length).toBeGreaterThan(0);
    expect(siblingOnly.length).toBeGreaterThan(0);
  });

  it('built and streamed, the task leaves the same table: the canonical transfers of the bundle', async () => {
    const { canonical, siblingOnly } = expectedRows();

    const built = await stack.submit(bundleTask(false));
    expectSucceeded(built);
    expect(built.result?.executeResult.pluginResults[0]?.result).toMatchObject({
      range: RANGE,
      rows: canonical.length,
    });
    const afterBuilt = await bundleRows();
    expect(afterBuilt).toEqual(canonical);

    // Empty the bundle so the streamed run has to write every row itself.
    const deleted = await stack.backend.transaction((tx) =>
      tx.deleteWhere('token_transfers', { chain_id: chain.chainId }, RANGE),
    );
    expect(deleted).toBe(canonical.length);
    expect(await bundleRows()).toEqual([]);

    const streamed = await stack.submit(bundleTask(true));
    expectSucceeded(streamed);
    expect(streamed.result?.executeResult.pluginResults[0]?.result).toMatchObject({ rows: canonical.length });
    const afterStreamed = await bundleRows();
    expect(afterStreamed).toEqual(afterBuilt);

    // Not one row of the non-canonical sibling, and the neighbouring bundles are as they were.
    for (const r of siblingOnly) expect(afterStreamed).not.toContainEqual(r);
    expect(await sentinelRows()).toEqual(sortRows(SENTINELS));
  });

  it('rerunning the streamed task (new task id) changes nothing', async () => {
    const before = await rowsWhere(stack.backend, 'token_transfers');
    expectSucceeded(await stack.submit(bundleTask(true)));
    expectSucceeded(await stack.submit(bundleTask(false)));
    expect(await rowsWhere(stack.backend, 'token_transfers')).toEqual(before);
  });
});
