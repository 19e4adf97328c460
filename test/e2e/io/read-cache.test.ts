// The task read cache on real storage (SQLite file and PostgreSQL), through a real Worker and Executor:
// a BlockTableCallConfig task makes one call per event of a block, and every call reads the same `blocks`
// row with ctx.io.get. Storage is asked once per task (cacheMisses +1) and the other N − 1 reads hit
// (cacheHits +N−1), whether the executor's read copies serve the repeats or the Worker does, measured
// as the delta of the worker's StorageIoScopeFactory.stats() over the task.
// The call's own block row is already in the cache: the builder's block lookup scanned it as a full row,
// and full rows from scans seed the cache, so all N reads of it hit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskInput, TaskUpdate } from '../../../src/grpc/domain-types.js';
import { writeSyntheticChain } from '../../../src/services/storage/block-data/index.js';
import type { StorageIoScopeFactoryStats } from '../../../src/services/worker/adapters/io/index.js';
import {
  blocksAt,
  CHAIN_ID,
  newTaskId,
  startIoStack,
  testDatabases,
  type ForkedChain,
  type IoStack,
} from './harness.js';

const BLOCKS = 10;
const chain: ForkedChain = { chainId: CHAIN_ID, seed: 1, forkHeight: 0 };
const dbs = testDatabases('rc');

/** The first height of the chain with at least 20 events (N calls, one per event). */
function busyHeight(): number {
  for (let h = 2; h <= BLOCKS; h++) if (blocksAt(chain, h).canonical.events.length >= 20) return h;
  throw new Error('no block with 20 events');
}

function readerTask(height: number, which: 'self' | 'parent'): TaskInput {
  return {
    taskId: newTaskId(),
    functionCallConfig: {
      type: 'BlockTableCallConfig',
      config: {
        function: 'block_reader',
        table: 'events',
        chainId: CHAIN_ID,
        block: { number: height },
        extraArgs: [which],
      },
    },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    taskTimeoutMs: 60_000,
  };
}

function outputsOf(update: TaskUpdate): { idx: number; number: number | null; hash: string | null }[] {
  const er = update.result?.executeResult;
  expect(update.state, `${er?.failureCode}: ${er?.failureMessage}`).toBe('SUCCEEDED');
  return er?.pluginResults[0]?.result as never;
}

// Executor read copies (src/executor/read-copies.ts) on by default: the hits they serve are reported back,
// so the counts are the same as with copies off, where every read reaches the Worker's cache.
describe.each([
  ['sqlite', dbs.makeSqlite, 10_000],
  ['postgres', dbs.makePg, 10_000],
  ['sqlite, executor read copies off', dbs.makeSqlite, 0],
])('task read cache on %s', (_name, makeUrl, readCopyMaxEntries) => {
  let stack: IoStack;
  const height = busyHeight();
  const { canonical } = blocksAt(chain, height);
  const n = canonical.events.length;

  /** Runs the task and returns its outputs and the factory's counters over it. */
  async function measured(task: TaskInput) {
    const before: StorageIoScopeFactoryStats = stack.factory.stats();
    const update = await stack.submit(task);
    const after = stack.factory.stats();
    expect(after.openScopes).toBe(0);
    return {
      outputs: outputsOf(update),
      hits: after.cacheHits - before.cacheHits,
      misses: after.cacheMisses - before.cacheMisses,
      retries: after.retries - before.retries,
    };
  }

  beforeAll(async () => {
    stack = await startIoStack({ url: await makeUrl(), executor: { readCopyMaxEntries } });
    await writeSyntheticChain(stack.backend, stack.config.tables, {
      chainId: CHAIN_ID,
      fromBlock: 0,
      blocks: BLOCKS + 1,
      seed: chain.seed,
      chunk: BLOCKS + 1,
    });
  });

  afterAll(async () => {
    await stack?.close();
  });

  it(`N calls reading the same parent row: 1 miss, N − 1 hits`, async () => {
    const { outputs, hits, misses, retries } = await measured(readerTask(height, 'parent'));
    expect(outputs).toHaveLength(n);
    // Every call got the parent row (right number and hash), not a miss.
    const parent = blocksAt(chain, height - 1).canonical.block;
    expect(canonical.block.parent_hash).toBe(parent.hash);
    for (const out of outputs) expect(out).toMatchObject({ number: height - 1, hash: parent.hash });
    expect(outputs.map((o) => o.idx).sort((a, b) => a - b)).toEqual(canonical.events.map((e) => e.idx));
    expect({ misses, hits, retries }).toEqual({ misses: 1, hits: n - 1, retries: 0 });
  });

  it('the cache is per task: a second task reads the row from storage again', async () => {
    const { hits, misses } = await measured(readerTask(height, 'parent'));
    expect({ misses, hits }).toEqual({ misses: 1, hits: n - 1 });
  });

  it(`N calls reading their own block row: N hits, seeded by the builder's block lookup`, async () => {
    const { outputs, hits, misses } = await measured(readerTask(height, 'self'));
    for (const out of outputs) expect(out).toMatchObject({ number: height, hash: canonical.block.hash });
    expect({ misses, hits }).toEqual({ misses: 0, hits: n });
  });
});
