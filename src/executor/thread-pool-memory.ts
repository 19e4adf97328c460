// The thread pool's memory bound (thread-pool.ts): the live threads memory-watch.ts names for
// termination, from their published figures and the process RSS (docs/executor.md § The thread pool).

import { isStuck } from './core/pool-scheduler.js';
import type { ExecutionThread } from './execution-thread.js';
import { judgeMemory, type MemoryKill, type MemoryLimits } from './memory-watch.js';
import * as shm from './thread-messages.js';

/** Each thread the memory bound names, with its verdict; none when both bounds are off. */
export function* memoryVictims<T extends ExecutionThread<unknown>>(
  threads: readonly T[],
  limits: MemoryLimits,
  now: number,
  mono: number,
  lastRssKillAt: number | undefined,
): Generator<{ readonly thread: T; readonly kill: MemoryKill }> {
  const { threadMemoryMb, maxRssMb } = limits;
  if (threadMemoryMb <= 0 && maxRssMb <= 0) return;
  const live = threads.filter((t) => t.ready && !t.dead);
  const samples = live.map((t) => {
    const stuck = isStuck(shm.ageMs(mono, shm.lastBeat(t.signals)));
    return { index: t.index, memoryMb: shm.lastMemoryMb(t.signals), stuck };
  });
  const rssMb = maxRssMb > 0 ? Math.round(process.memoryUsage.rss() / 2 ** 20) : 0;
  for (const kill of judgeMemory(samples, rssMb, limits, now, lastRssKillAt)) {
    const thread = live.find((x) => x.index === kill.index);
    if (thread) yield { thread, kill };
  }
}
