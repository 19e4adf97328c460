// Fencing inside the block writer (docs/follow.md § Fencing), on a SQLite file and on PostgreSQL, through a
// real Worker and Executor: two runners of one follow job (two job stores, each with connections of its
// own) claim terms one after the other, and the task of the deposed one — started on the block it saw,
// committing after the new runner's task of the same height on the block canonical now — is refused with
// FENCED and writes nothing, so the height keeps the new runner's rows. Played with the built-in
// BlockWriteResultHandler and with a third-party-style writer that accepts a fence
// (test/fixtures/plugins/follow-writers/fenced-rows, loaded by the Worker from plugins.dirs). On
// PostgreSQL, a write that checked its term first holds a newer claim off until it commits.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WriteFence } from '../../../src/contracts/write-fence.js';
import type { TaskInput, TaskUpdate } from '../../../src/grpc/domain-types.js';
import { JobStore } from '../../../src/services/follow/adapters/job-store.js';
import {
  ERC20_TRANSFER_SELECTOR,
  tokenTransfersOf,
  writeSyntheticChain,
} from '../../../src/services/storage/block-data/index.js';
import { conformanceSettings } from '../../support/storage-conformance.js';
import {
  blocksAt,
  forkedChain,
  newTaskId,
  REPO,
  rowsWhere,
  sortRows,
  startIoStack,
  testDatabases,
  type IoStack,
} from './harness.js';

const BLOCKS = 20;
const chain = forkedChain(1, BLOCKS);
const dbs = testDatabases('fw');

const FOLLOW_WRITERS = path.join(REPO, 'test/fixtures/plugins/follow-writers');

/** The task a follow runner sends for `height` on block `hash`, fenced by its term, to `writer`. */
function taskOf(
  height: number,
  hash: string,
  fence: WriteFence,
  writer = 'BlockWriteResultHandler',
): TaskInput {
  return {
    taskId: newTaskId(),
    functionCallConfig: {
      type: 'BlockTableCallConfig',
      config: {
        function: 'erc20_transfers',
        table: 'events',
        chainId: chain.chainId,
        block: { hash },
        where: { selector: ERC20_TRANSFER_SELECTOR },
      },
    },
    resultHandler: {
      type: writer,
      config: { table: 'token_transfers', chainId: chain.chainId, block: { number: height }, fence },
    },
    taskTimeoutMs: 60_000,
  };
}

function failureOf(update: TaskUpdate): string {
  const er = update.result?.executeResult;
  return `${update.state} ${er?.failureCode}: ${er?.failureMessage}`;
}

describe.each([
  { name: 'SQLite', makeUrl: dbs.makeSqlite, postgres: false },
  { name: 'PostgreSQL', makeUrl: dbs.makePg, postgres: true },
])('fenced block writes on $name', ({ makeUrl, postgres }) => {
  let stack: IoStack;
  let url: string;
  const rowsAt = (h: number) =>
    rowsWhere(stack.backend, 'token_transfers', { where: { chain_id: chain.chainId, block_number: h } });

  beforeAll(async () => {
    url = await makeUrl();
    stack = await startIoStack({ url, pluginDirs: [FOLLOW_WRITERS] });
    await writeSyntheticChain(stack.backend, stack.config.tables, {
      chainId: chain.chainId,
      fromBlock: 1,
      blocks: BLOCKS,
      seed: chain.seed,
      chunk: BLOCKS,
    });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it.each(['BlockWriteResultHandler', 'FencedRowsResultHandler'])(
    "a deposed runner's task that commits after the new runner's writes nothing (%s)",
    async (writer) => {
      const jobId = `fl-fence-${postgres ? 'pg' : 'lite'}-${writer}`;
      const followTask = (height: number, hash: string, fence: WriteFence) =>
        taskOf(height, hash, fence, writer);
      const h = chain.forkHeight;
      const { canonical, sibling } = blocksAt(chain, h);
      const newRows = sortRows(tokenTransfersOf(canonical.events));
      const oldRows = sortRows(tokenTransfersOf(sibling!.events));
      expect(oldRows).not.toEqual(newRows);
      // Opened one after the other: two first-use migrations of one SQLite file at once would meet its lock.
      const oldRunner = await JobStore.open(conformanceSettings(url), process.cwd());
      const newRunner = await JobStore.open(conformanceSettings(url), process.cwd());
      try {
        const oldFence = { jobId, term: await oldRunner.claimTerm(jobId) };
        // While it holds the job, the old runner's writes land: the height holds the block it saw.
        const first = await stack.submit(followTask(h, sibling!.block.hash, oldFence));
        expect(first.state, failureOf(first)).toBe('SUCCEEDED');
        expect(await rowsAt(h)).toEqual(oldRows);

        // A newer runner takes the job and runs the height on the block canonical now.
        const newFence = { jobId, term: await newRunner.claimTerm(jobId) };
        expect(newFence.term).toBeGreaterThan(oldFence.term);
        const second = await stack.submit(followTask(h, canonical.block.hash, newFence));
        expect(second.state, failureOf(second)).toBe('SUCCEEDED');
        expect(await rowsAt(h)).toEqual(newRows);

        // The old runner's task of the same height commits last: refused, not retried, nothing written.
        const late = await stack.submit(followTask(h, sibling!.block.hash, oldFence));
        expect(late.state).toBe('FAILED');
        expect(late.result?.executeResult.failureCode).toBe('PLUGIN_FAILED');
        expect(late.result?.executeResult.pluginResults[0]?.failureCode, failureOf(late)).toBe('FENCED');
        expect(late.result?.executeResult.retryable).toBe(false);
        expect(await rowsAt(h)).toEqual(newRows);
        // Nor on a height the new runner has not written yet.
        const other = h === 1 ? 2 : h - 1;
        const before = await rowsAt(other);
        const stray = await stack.submit(
          followTask(other, blocksAt(chain, other).canonical.block.hash, oldFence),
        );
        expect(stray.state).toBe('FAILED');
        expect(await rowsAt(other)).toEqual(before);
      } finally {
        await Promise.all([oldRunner.close(), newRunner.close()]);
      }
    },
  );

  it.runIf(postgres)('a write that checked its term holds a newer claim off until it commits', async () => {
    const jobId = 'fl-fence-hold';
    const h = chain.forkHeight;
    const rows = sortRows(tokenTransfersOf(blocksAt(chain, h).canonical.events));
    const oldRunner = await JobStore.open(conformanceSettings(url), process.cwd());
    const newRunner = await JobStore.open(conformanceSettings(url), process.cwd());
    try {
      const fence = { jobId, term: await oldRunner.claimTerm(jobId) };
      let checked!: () => void;
      const isChecked = new Promise<void>((resolve) => (checked = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const write = stack.backend.transaction(async (tx) => {
        await tx.checkFence(fence);
        checked();
        await released;
        await tx.deleteWhere('token_transfers', { chain_id: chain.chainId, block_number: h });
        await tx.insertRows('token_transfers', rows);
      });
      await isChecked;
      let claimed = false;
      const claim = newRunner.claimTerm(jobId).then((term) => {
        claimed = true;
        return term;
      });
      // The claim's delete of the term row waits for the writer's share lock on it.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(claimed).toBe(false);
      release();
      await write;
      expect(await claim).toBe(fence.term + 1);
      expect(await rowsAt(h)).toEqual(rows);
      // From now on the old term's writes are refused.
      await expect(stack.backend.transaction((tx) => tx.checkFence(fence))).rejects.toMatchObject({
        code: 'FENCED',
        retryable: false,
      });
    } finally {
      await Promise.all([oldRunner.close(), newRunner.close()]);
    }
  });
});
