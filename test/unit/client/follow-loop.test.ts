// The follow driver (src/client/backfill/follow-loop.ts) against fakes of its ports, on a virtual clock
// (sleep advances it): what it records in the job's store and in which order, the tasks it runs, a failed
// height tried again, a stop asked through the store, and the stop on a reorg deeper than finality.
import { describe, expect, it } from 'vitest';
import {
  followTaskOf,
  runFollow,
  type FollowEvent,
  type FollowLoopOptions,
  type FollowStatePort,
} from '../../../src/client/backfill/follow-loop.js';
import type { BackfillTemplate } from '../../../src/client/backfill/plan.js';
import type { RunnableTask, TaskRunner } from '../../../src/client/run-with-retries.js';
import type { TaskRunResult } from '../../../src/client/types.js';
import type { CanonicalBlock } from '../../../src/services/follow/core/follow-core.js';
import { JobFencedError } from '../../../src/services/follow/core/errors.js';

const TEMPLATE: BackfillTemplate = {
  functionCallConfig: {
    type: 'BlockTableCallConfig',
    config: { function: 'f', table: 'events', chainId: 1, block: { number: 0 } },
  },
  resultHandler: {
    type: 'BlockWriteResultHandler',
    config: { table: 'out', chainId: 1, block: { number: 0 } },
  },
};

/** Canonical blocks 0..n-1 of fork `tag`, linked by parent hash. */
function chainOf(n: number, tag = 'a', base: CanonicalBlock[] = []): CanonicalBlock[] {
  const blocks = [...base];
  for (let h = blocks.length; h < n; h++) {
    blocks.push({ number: h, hash: `0x${h}${tag}`, parentHash: blocks[h - 1]?.hash ?? '0x' });
  }
  return blocks;
}

function result(task: RunnableTask, success: boolean): TaskRunResult {
  return {
    taskId: task.taskId,
    workerAddr: 'w',
    state: success ? 'SUCCEEDED' : 'FAILED',
    success,
    failureCode: success ? '' : 'CALL_FAILED',
    failureMessage: success ? '' : 'boom',
    retryable: false,
    pluginResults: success ? [{ pluginName: 'w', success: true, result: { rows: 1 } } as never] : [],
    update: {} as never,
    attempts: 1,
    durationMs: 1,
  };
}

interface Harness {
  chain: CanonicalBlock[];
  log: string[];
  tasks: RunnableTask[];
  failOnce: Set<number>;
  /** Heights whose writer refuses the task's fence (FENCED): a newer runner claimed the job meanwhile. */
  fencedWrites: Set<number>;
  stopAsked: boolean;
  /** A newer runner claimed the job: the store refuses every write from now on. */
  fenced: boolean;
  events: FollowEvent[];
}

async function drive(
  h: Harness,
  opts: Partial<FollowLoopOptions> & { until: (h: Harness) => boolean; onCaughtUp?: (h: Harness) => void },
): Promise<void> {
  let now = 0;
  let ranAway = false;
  const stop = new AbortController();
  const state: FollowStatePort = {
    setApplied: async (height, hash) => {
      if (h.fenced) throw new JobFencedError('j', 1, 2);
      h.log.push(`applied ${height} ${hash === '' ? 'unknown' : hash}`);
    },
    setFinal: async (cursor) => void h.log.push(`final ${cursor}`),
    setSeen: async () => {},
    stopRequested: async () => h.stopAsked,
  };
  const runner: TaskRunner = {
    run: async (task) => {
      h.tasks.push(task);
      const config = task.resultHandler?.config as { block: { number: number } };
      h.log.push(`run ${config.block.number}`);
      if (h.fencedWrites.has(config.block.number)) {
        const failed = { pluginName: 'BlockWriteResultHandler', success: false, failureCode: 'FENCED' };
        return { ...result(task, false), failureCode: 'PLUGIN_FAILED', pluginResults: [failed as never] };
      }
      const fail = h.failOnce.delete(config.block.number);
      return result(task, !fail);
    },
  };
  const chain = {
    read: async (lo: number, hi: number) => ({
      head: h.chain.at(-1)?.number ?? null,
      blocks: h.chain.filter((b) => b.number >= lo && b.number <= hi),
    }),
  };
  for await (const e of runFollow(chain, state, runner, {
    jobId: 'j',
    runId: 'r',
    template: TEMPLATE,
    from: 0,
    finality: 2,
    pollIntervalMs: 100,
    retryDelayMs: 1000,
    pageSize: 50,
    concurrency: 4,
    policy: { retries: 0, slotTtlMs: 5000, initialBackoffMs: 1, maxBackoffMs: 1 },
    stop: stop.signal,
    // Virtual time: a sleep moves the clock at once; it yields a turn of the event loop, and a loop that
    // never ends fails instead of spinning.
    sleep: async (ms) => {
      now += ms;
      if (now > 1_000_000 && !ranAway) {
        ranAway = true;
        stop.abort();
      }
      await new Promise((resolve) => setImmediate(resolve));
    },
    random: () => 0.5,
    clock: () => now,
    ...opts,
  })) {
    h.events.push(e);
    if (e.type === 'caught-up') opts.onCaughtUp?.(h);
    if (opts.until(h)) stop.abort();
  }
  if (ranAway) throw new Error('the loop ran away (a million virtual ms without ending)');
}

const harness = (chain: CanonicalBlock[]): Harness => ({
  chain,
  log: [],
  tasks: [],
  failOnce: new Set(),
  fencedWrites: new Set(),
  stopAsked: false,
  fenced: false,
  events: [],
});
const caughtUps = (h: Harness) => h.events.filter((e) => e.type === 'caught-up').length;

describe('runFollow', () => {
  it('marks a height unknown before its task, records the hash after, and moves the cursor only then', async () => {
    const h = harness(chainOf(5));
    await drive(h, { until: (x) => caughtUps(x) > 0 });
    for (let n = 0; n < 5; n++) {
      const unknown = h.log.indexOf(`applied ${n} unknown`);
      const ran = h.log.indexOf(`run ${n}`);
      const applied = h.log.indexOf(`applied ${n} 0x${n}a`);
      expect(unknown).toBeGreaterThanOrEqual(0);
      expect(unknown).toBeLessThan(ran);
      expect(ran).toBeLessThan(applied);
    }
    // Heights 0..2 are final (head 4 − finality 2): the cursor passes them after their hashes are stored.
    const final = h.log.findIndex((l) => l.startsWith('final '));
    expect(final).toBeGreaterThan(h.log.indexOf('applied 0 0x0a'));
    expect(h.log.filter((l) => l.startsWith('final ')).at(-1)).toBe('final 3');
    expect(h.events.at(-1)).toEqual({ type: 'stopped', reason: 'stop' });
  });

  it('runs a height on exactly its block hash, and empties a vanished height with a task of no calls', async () => {
    const h = harness(chainOf(4));
    await drive(h, {
      until: (x) => caughtUps(x) > 1,
      onCaughtUp: (x) => {
        x.chain = x.chain.slice(0, 3); // the chain got shorter: height 3 vanished
      },
    });
    const of = (n: number) =>
      h.tasks.filter((t) => (t.resultHandler?.config as { block: { number: number } }).block.number === n);
    expect(of(2)[0]?.functionCallConfig).toEqual({
      type: 'BlockTableCallConfig',
      config: { function: 'f', table: 'events', chainId: 1, block: { hash: '0x2a' } },
    });
    expect(of(3).at(-1)?.functionCallConfig).toEqual({
      type: 'CallListCallConfig',
      config: { function: 'f', callList: [] },
    });
    expect(h.events).toContainEqual(expect.objectContaining({ type: 'block', height: 3, hash: null }));
    expect(h.log).toContain('applied 3 null');
    expect(followTaskOf(TEMPLATE, 7, null).resultHandler?.config).toMatchObject({ block: { number: 7 } });
  });

  it('reports a failed height and tries it again after retryDelayMs', async () => {
    const h = harness(chainOf(3));
    h.failOnce.add(1);
    await drive(h, { until: (x) => caughtUps(x) > 0 });
    const one = h.events.filter((e) => e.type === 'block' && e.height === 1);
    expect(one.map((e) => (e.type === 'block' ? e.state : ''))).toEqual(['FAILED', 'SUCCEEDED']);
    expect(h.log.filter((l) => l === 'run 1')).toHaveLength(2);
  });

  it('runs no task whose unknown mark the store refused, and ends with the store’s error', async () => {
    const h = harness(chainOf(5));
    const fenced = drive(h, {
      until: () => false,
      onCaughtUp: (x) => {
        x.fenced = true; // a newer runner claimed the job
        x.chain = chainOf(8, 'a', x.chain);
      },
    });
    await expect(fenced).rejects.toBeInstanceOf(JobFencedError);
    // Without the check after the mark, heights 5..7 run unmarked and the test says so.
    expect(h.log.filter((l) => /^run [5-7]$/.test(l))).toEqual([]);
    expect(h.log.filter((l) => /^run [0-4]$/.test(l))).toHaveLength(5);
  });

  it('carries the fence in each task of a fencing writer, and ends fenced when a writer refuses it', async () => {
    const h = harness(chainOf(6));
    h.fencedWrites.add(3);
    const fence = { jobId: 'j', term: 7 };
    const run = drive(h, { until: () => false, fence });
    await expect(run).rejects.toMatchObject({ code: 'JOB_FENCED', jobId: 'j', term: 7 });
    expect(h.tasks.length).toBeGreaterThan(0);
    for (const t of h.tasks) expect(t.resultHandler?.config).toMatchObject({ fence });
    // The refused height is not recorded as applied, and no new task starts after the refusal.
    expect(h.log).not.toContain('applied 3 0x3a');
    expect(h.log.filter((l) => l === 'run 3')).toHaveLength(1);
  });

  it('gives the fence to any writer (a writer that follows accepts one), and none when there is none', () => {
    const other = { ...TEMPLATE, resultHandler: { type: 'MyWriter', config: { table: 'out' } } };
    const fence = { jobId: 'j', term: 1 };
    expect(followTaskOf(TEMPLATE, 7, '0x7', fence).resultHandler?.config).toMatchObject({ fence });
    expect(followTaskOf(other, 7, null, fence).resultHandler?.config).toEqual({
      table: 'out',
      block: { number: 7 },
      fence,
    });
    expect(followTaskOf(TEMPLATE, 7, '0x7').resultHandler?.config).not.toHaveProperty('fence');
  });

  it('stops when the store says a stop was asked (blockx jobs stop)', async () => {
    const h = harness(chainOf(3));
    await drive(h, {
      until: () => false,
      onCaughtUp: (x) => {
        x.stopAsked = true;
      },
    });
    expect(h.events.at(-1)).toEqual({ type: 'stopped', reason: 'requested' });
  });

  it('stops on a reorg deeper than finality with the core’s error, running nothing for it', async () => {
    const h = harness(chainOf(8));
    await drive(h, {
      until: () => false,
      onCaughtUp: (x) => {
        x.chain = chainOf(8, 'b', x.chain.slice(0, 2)); // replaces 2..7; 2..5 were final
      },
    });
    const last = h.events.at(-1);
    expect(last).toMatchObject({ type: 'stopped', reason: 'reorg-beyond-finality' });
    expect(last?.type === 'stopped' ? last.error?.message : '').toMatch(/block \d was final with hash 0x\da/);
    expect(h.log.filter((l) => /^run \d$/.test(l))).toHaveLength(8);
  });
});
