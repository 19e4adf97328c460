// The requests-per-second limit of a source holds per process, across all its tasks (docs/ingest.md § The
// RPC access layer): three ingestion tasks of one Worker process fetch blocks from Anvil at once, each with
// its own copy of the source's settings, through a proxy that notes when each request arrives. Together
// they stay within burst + requestsPerSecond · W over every window W (with room for arrival jitter); three
// clients of their own (a limit per task) send about three times as fast and break that bound, which is
// what the shared bucket prevents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockFetcher } from '../../../../src/services/chain-rpc/adapters/block-fetcher.js';
import { RpcClient } from '../../../../src/services/chain-rpc/adapters/rpc-client.js';
import {
  declareProcessSources,
  sharedBlockFetcher,
  type TaskSource,
} from '../../../../src/services/chain-rpc/adapters/shared-clients.js';
import { defaultSourceConfig } from '../../../../src/kernel/config-defaults.js';
import { ANVIL_LIMITS, startAnvil, type AnvilNode } from '../../../support/anvil.js';
import { startFaultProxy, type FaultProxy } from '../../../support/rpc-fault-proxy.js';

const RATE = 20;
const TASKS = 3;
const BLOCKS_PER_TASK = 20;
/**
 * How far apart from their sends two requests may be seen to arrive: the proxy shares this process's event
 * loop with the clients, and on a loaded box a turn of it can hold arrivals back and then note them together.
 */
const ARRIVAL_JITTER_MS = 250;
/** The most requests one second of arrivals may hold under the shared limit: burst + rate · (1 s + jitter). */
const SHARED_BOUND = 1 + Math.floor((RATE * (1000 + ARRIVAL_JITTER_MS)) / 1000);

/** The most requests that arrived within any window of `windowMs`. */
function busiestWindow(arrivals: readonly number[], windowMs: number): number {
  const sorted = [...arrivals].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while ((sorted[j] as number) - (sorted[i] as number) > windowMs) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

describe('one token bucket per source per process, against Anvil', () => {
  let anvil: AnvilNode;
  let proxy: FaultProxy;
  const source = (): TaskSource => ({
    ...ANVIL_LIMITS,
    name: 'limited',
    maxConcurrentRequests: 16,
    requestsPerSecond: RATE,
  });
  /** Each task fetches its own heights, all at once (as the writer does for a bundle). */
  const runTasks = (fetchers: readonly BlockFetcher[]) =>
    Promise.all(
      fetchers.map((f, t) =>
        Promise.all(
          Array.from({ length: BLOCKS_PER_TASK }, (_, i) =>
            f.fetch(1 + t * BLOCKS_PER_TASK + i, { traces: true }),
          ),
        ),
      ),
    );

  beforeAll(async () => {
    anvil = await startAnvil();
    await anvil.rpc('anvil_mine', [`0x${(TASKS * BLOCKS_PER_TASK + 1).toString(16)}`]);
    proxy = await startFaultProxy(anvil.url);
    declareProcessSources({ limited: { ...defaultSourceConfig(), rpcUrl: proxy.url } });
  });
  afterAll(async () => {
    sharedBlockFetcher(source()).client.close();
    declareProcessSources({});
    await proxy?.close();
    await anvil?.stop();
  });

  it('three tasks together send at most burst + rate · W requests in any window W', async () => {
    // Each task resolves its source from its own config object, as each task's writer config is.
    const fetchers = Array.from({ length: TASKS }, () => sharedBlockFetcher(source()));
    const blocks = await runTasks(fetchers);
    expect(blocks.flat().map((b) => b.number)).toEqual(
      Array.from({ length: TASKS * BLOCKS_PER_TASK }, (_, i) => i + 1),
    );
    const arrivals = [...proxy.arrivals];
    // At least one HTTP request per block; learning what the node serves may add a few.
    expect(arrivals.length).toBeGreaterThanOrEqual(TASKS * BLOCKS_PER_TASK);
    expect(busiestWindow(arrivals, 1_000)).toBeLessThanOrEqual(SHARED_BOUND);
    const span = Math.max(...arrivals) - Math.min(...arrivals);
    expect(span).toBeGreaterThanOrEqual(((arrivals.length - 1) * 1000) / RATE - ARRIVAL_JITTER_MS);
  }, 30_000);

  it('with a client per task (the limit per task), the same load goes about three times as fast', async () => {
    const before = proxy.arrivals.length;
    const clients = Array.from(
      { length: TASKS },
      () => new RpcClient({ ...ANVIL_LIMITS, ...source(), urls: [proxy.url] }),
    );
    try {
      await runTasks(clients.map((c) => new BlockFetcher(c)));
    } finally {
      for (const c of clients) c.close();
    }
    const arrivals = proxy.arrivals.slice(before);
    expect(busiestWindow(arrivals, 1_000)).toBeGreaterThan(SHARED_BOUND);
  }, 30_000);
});
