// The ingest-follow driver against fakes of its ports (node, job state, task runner), on virtual time (a sleep
// moves the clock): the cursor is stored after each write and before the next, a write whose task fails with
// CHAIN_MOVED makes the follower walk back (a reorg event, the orphans sent with the next write), a stop
// asked through the store ends the loop, and the tasks carry the follow writer config.
import { describe, expect, it } from 'vitest';
import {
  runIngestFollow,
  type IngestFollowEvent,
  type IngestFollowLoopOptions,
} from '../../../../src/client/ingest-follow/ingest-follow-loop.js';
import type { RunnableTask, TaskRunner } from '../../../../src/client/run-with-retries.js';
import type { TaskRunResult } from '../../../../src/client/types.js';
import type { ChainBlock } from '../../../../src/services/ingest-follow/core/ingest-follow-core.js';

const block = (n: number, fork = 0): ChainBlock => ({
  number: n,
  hash: `0x${n}-${fork}`,
  parentHash: n === 0 ? '0x' : `0x${n - 1}-${n - 1 >= 3 ? fork : 0}`,
});

/** A node whose chain is blocks 0..head of fork 0, replaced from height 3 up when `fork` > 0. */
class FakeNode {
  chain: ChainBlock[] = [0, 1, 2, 3, 4].map((n) => block(n));
  head = () => Promise.resolve(this.chain.at(-1) as ChainBlock);
  header = (n: number) => Promise.resolve(this.chain[n] ?? null);
}

interface Harness {
  node: FakeNode;
  progress: number[];
  tasks: Record<string, unknown>[];
  stopAfterPolls: number;
  /** Called before each write: may change the node (a reorg between the poll and the write). */
  beforeWrite?: (config: Record<string, unknown>) => void;
  /** From this height on the writer refuses the task's fence (a newer follower claimed the job). */
  fencedFrom?: number;
  /** From this height on the Worker has no URL for the task's source (SOURCE_NOT_DECLARED). */
  undeclaredFrom?: number;
}

function runner(h: Harness): TaskRunner {
  return {
    run(task: RunnableTask): Promise<TaskRunResult> {
      const config = task.resultHandler?.config as Record<string, unknown>;
      h.tasks.push(config);
      h.beforeWrite?.(config);
      const n = (config.block as { number: number } | undefined)?.number;
      const b = n === undefined ? undefined : h.node.chain[n];
      const moved = b !== undefined && config.parentHash !== undefined && b.parentHash !== config.parentHash;
      const refusal =
        n !== undefined && n >= (h.fencedFrom ?? Infinity)
          ? 'FENCED'
          : n !== undefined && n >= (h.undeclaredFrom ?? Infinity)
            ? 'SOURCE_NOT_DECLARED'
            : undefined;
      if (refusal !== undefined) {
        const failed = { pluginName: 'ChainIngestResultHandler', success: false, failureCode: refusal };
        const fenced = { taskId: task.taskId, state: 'FAILED', success: false, failureCode: 'PLUGIN_FAILED' };
        return Promise.resolve({
          ...fenced,
          retryable: false,
          pluginResults: [failed],
          attempts: 1,
        } as never);
      }
      const result = {
        taskId: task.taskId,
        state: moved ? 'FAILED' : 'SUCCEEDED',
        success: !moved,
        failureCode: moved ? 'CHAIN_MOVED' : '',
        failureMessage: moved ? 'the chain moved' : '',
        retryable: false,
        pluginResults: moved
          ? [{ pluginName: 'ChainIngestResultHandler', success: false, failureCode: 'CHAIN_MOVED' }]
          : [
              {
                pluginName: 'ChainIngestResultHandler',
                success: true,
                result: { rows: 1, orphaned: 0, ...(b ? { written: b } : {}) },
              },
            ],
        attempts: 1,
      };
      return Promise.resolve(result as unknown as TaskRunResult);
    },
  };
}

async function run(h: Harness, over: Partial<IngestFollowLoopOptions> = {}): Promise<IngestFollowEvent[]> {
  let now = 0;
  let polls = 0;
  const events: IngestFollowEvent[] = [];
  const loop = runIngestFollow(
    h.node,
    {
      setProgress: (p) => {
        h.progress.push(p.cursor);
        return Promise.resolve();
      },
      stopRequested: () => Promise.resolve(++polls > h.stopAfterPolls),
    },
    runner(h),
    {
      jobId: 'ig-test',
      runId: 'r1',
      template: { chainId: 1, writer: { source: { name: 'rpc' }, traces: false } },
      from: 0,
      finality: 4,
      pollIntervalMs: 1000,
      retryDelayMs: 500,
      stored: [],
      seen: { reorgs: 0, deepestReorg: 0 },
      policy: { retries: 0, slotTtlMs: 5000, initialBackoffMs: 1, maxBackoffMs: 1 },
      sleep: (ms) => {
        now += ms;
        return Promise.resolve();
      },
      random: () => 0.5,
      clock: () => now,
      ...over,
    },
  );
  for await (const e of loop) events.push(e);
  return events;
}

describe('runIngestFollow', () => {
  it('writes each block in order, storing the cursor after each, then says caught-up; a stop asked in the store ends it', async () => {
    const h: Harness = { node: new FakeNode(), progress: [], tasks: [], stopAfterPolls: 2 };
    const events = await run(h);
    expect(events.filter((e) => e.type === 'block').map((e) => (e as { height: number }).height)).toEqual([
      0, 1, 2, 3, 4,
    ]);
    // The cursor moves after every write (the first entry is the head seen by the first poll).
    expect(h.progress.slice(-5)).toEqual([1, 2, 3, 4, 5]);
    expect(events).toContainEqual({ type: 'caught-up', head: 4, hash: '0x4-0' });
    expect(events.at(-1)).toEqual({ type: 'stopped', reason: 'requested' });
    expect(h.tasks[1]).toMatchObject({
      chainId: 1,
      follow: true,
      traces: false,
      block: { number: 1 },
      parentHash: '0x0-0',
    });
    expect(h.tasks[0]).not.toHaveProperty('parentHash');
  });

  it('a write that finds the chain moved (CHAIN_MOVED) makes it walk back: a reorg event, the orphans in the next write', async () => {
    const h: Harness = { node: new FakeNode(), progress: [], tasks: [], stopAfterPolls: 3 };
    h.beforeWrite = (config) => {
      // Between the poll that saw block 4 and its write, blocks 3 and 4 are replaced by 3', 4', 5'.
      if ((config.block as { number: number }).number === 4 && h.node.chain[3]?.hash === '0x3-0') {
        h.node.chain = [...h.node.chain.slice(0, 3), block(3, 1), block(4, 1), block(5, 1)];
      }
    };
    const events = await run(h);
    const reorg = events.find((e) => e.type === 'reorg');
    expect(reorg).toMatchObject({ ancestor: 2, height: 3, depth: 1, oldTip: '0x3-0', newTip: '0x5-1' });
    const next = h.tasks.find((t) => Array.isArray(t.orphans));
    expect(next).toMatchObject({
      block: { number: 3 },
      parentHash: '0x2-0',
      orphans: [{ number: 3, hash: '0x3-0' }],
    });
    expect(
      events
        .filter((e) => e.type === 'block')
        .map((e) => (e as { hash: string }).hash)
        .slice(-3),
    ).toEqual(['0x3-1', '0x4-1', '0x5-1']);
  });

  it('sends its fence with every write, and a write the writer fenced off ends it with JOB_FENCED', async () => {
    const h: Harness = { node: new FakeNode(), progress: [], tasks: [], stopAfterPolls: 100, fencedFrom: 2 };
    const fence = { jobId: 'ig-test', term: 5 };
    await expect(run(h, { fence })).rejects.toMatchObject({ code: 'JOB_FENCED', term: 5 });
    expect(h.tasks.map((t) => (t.block as { number: number }).number)).toEqual([0, 1, 2]);
    for (const t of h.tasks) expect(t).toMatchObject({ fence });
    // The cursor stays after the last block written.
    expect(h.progress.at(-1)).toBe(2);
  });

  it("a write failure stopOn names the job's stops it with that reason, instead of trying again", async () => {
    const h: Harness = {
      node: new FakeNode(),
      progress: [],
      tasks: [],
      stopAfterPolls: 100,
      undeclaredFrom: 2,
    };
    const stopOn = (r: TaskRunResult) =>
      r.pluginResults.some((p) => p.failureCode === 'SOURCE_NOT_DECLARED') ? 'no URL for rpc' : undefined;
    const events = await run(h, { stopOn });
    expect(events.at(-1)).toEqual({ type: 'stopped', reason: 'job-failure', failure: 'no URL for rpc' });
    // Block 2 was tried once: no retry after retryDelayMs, nothing after it.
    expect(h.tasks.map((t) => (t.block as { number: number }).number)).toEqual([0, 1, 2]);
    expect(events.filter((e) => e.type === 'failed')).toHaveLength(1);
    // Without stopOn the same failure is tried again after the delay, until the store asks to stop.
    const again: Harness = {
      node: new FakeNode(),
      progress: [],
      tasks: [],
      stopAfterPolls: 6,
      undeclaredFrom: 2,
    };
    const plain = await run(again);
    expect(plain.at(-1)).toMatchObject({ type: 'stopped', reason: 'requested' });
    expect(again.tasks.filter((t) => (t.block as { number: number }).number === 2).length).toBeGreaterThan(1);
  });

  it('with announcements, a new head ends the wait: the block is written before the next poll was due', async () => {
    const h: Harness = { node: new FakeNode(), progress: [], tasks: [], stopAfterPolls: 3 };
    let now = 0;
    const waits: number[] = [];
    let writtenAt: number | undefined;
    h.beforeWrite = (config) => {
      if ((config.block as { number: number }).number === 5) writtenAt = now;
    };
    const announcements = {
      wait: async (ms: number) => {
        waits.push(ms);
        if (waits.length === 1) {
          // Caught up at block 4; the node announces 5 and 6 a moment later.
          now += 10;
          h.node.chain = [...h.node.chain, block(5), block(6)];
          return true;
        }
        now += ms;
        return false;
      },
    };
    const node = Object.assign(h.node, { announcements });
    const events = await run({ ...h, node }, { clock: () => now });
    const heights = events.filter((e) => e.type === 'block').map((e) => (e as { height: number }).height);
    expect(heights).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // The first wait was a poll interval long, and the announcement cut it short.
    expect(waits[0]).toBe(1000);
    expect(writtenAt).toBe(10);
  });

  it('a stop signal ends it before the next command', async () => {
    const h: Harness = { node: new FakeNode(), progress: [], tasks: [], stopAfterPolls: 100 };
    const stop = new AbortController();
    stop.abort();
    const events = await run(h, { stop: stop.signal });
    expect(events).toEqual([{ type: 'stopped', reason: 'stop' }]);
    expect(h.tasks).toEqual([]);
  });
});
