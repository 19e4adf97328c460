// What the thread pool (thread-pool.ts) reports about itself: calls in flight and queued, live threads
// (not draining) and the code epochs they imported.

import type { ExecutionThread } from './execution-thread.js';

export interface ThreadPoolStats {
  inflight: number;
  queued: number;
  threads: number;
  epochs: number;
}

export function poolStats(
  threads: readonly ExecutionThread<unknown>[],
  calls: ReadonlyMap<string, { readonly state: string }>,
): ThreadPoolStats {
  const epochs = new Set<string>();
  let live = 0;
  for (const t of threads) {
    if (!t.draining) live++;
    for (const e of t.epochs) epochs.add(e);
  }
  let queued = 0;
  for (const c of calls.values()) if (c.state !== 'running') queued++;
  return { inflight: calls.size, queued, threads: live, epochs: epochs.size };
}
