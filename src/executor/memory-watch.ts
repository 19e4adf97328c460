// The executor's memory bound (docs/security.md, "Task isolation"): which execution thread to terminate
// when memory runs away. Pure: the thread pool samples, this decides.
//
// Three bounds, because V8 only bounds part of what a call can hold:
//  - the heap: each thread runs with `resourceLimits.maxOldGenerationSizeMb = threadHeapMb`; V8 kills a
//    thread over it (ERR_WORKER_OUT_OF_MEMORY) by itself.
//  - a thread's heap plus its off-heap memory (Buffers, ArrayBuffers: `process.memoryUsage()` of a thread
//    counts its own isolate's allocations) above `threadMemoryMb`: V8 has no limit for this, so each
//    thread publishes the figure in shared memory on its idle beats (thread-messages.ts) and the main
//    thread terminates a thread over the bound. `Buffer.alloc(4 GiB)` itself still succeeds; the thread
//    holding it is gone within a sampling interval.
//  - the process RSS above `maxRssMb`: catches what the per-thread figure misses (a thread stuck in a
//    loop publishes nothing new, native memory). The thread to terminate is the one holding the most by
//    its last figure, preferring a stuck one (it cannot have published its latest growth); at most one
//    per RSS_COOLDOWN_MS, so the freed memory can show up in the RSS before anything else is killed.
// Calls on a terminated thread fail with code EXECUTOR_MEMORY_LIMIT, retryable (the Worker's retry policy
// bounds the attempts; a call that allocates the same again fails its task after them).

/** The soonest a second thread is terminated for the process RSS. */
export const RSS_COOLDOWN_MS = 1000;

export interface MemoryLimits {
  readonly threadHeapMb: number;
  /** 0: unchecked. */
  readonly threadMemoryMb: number;
  /** 0: unchecked. */
  readonly maxRssMb: number;
}

export interface ThreadMemorySample {
  readonly index: number;
  /** Heap used plus external memory, MiB, as the thread last published it. */
  readonly memoryMb: number;
  /** The thread's event loop has not run lately (its figure may be stale). */
  readonly stuck: boolean;
}

export interface MemoryKill {
  readonly index: number;
  readonly reason: string;
  /** Decided for the process RSS (starts the cooldown). */
  readonly forRss: boolean;
}

/** The threads to terminate now, given the samples, the process RSS (MiB) and the last RSS kill. */
export function judgeMemory(
  samples: readonly ThreadMemorySample[],
  rssMb: number,
  limits: MemoryLimits,
  now: number,
  lastRssKillAt: number | undefined,
): MemoryKill[] {
  const kills: MemoryKill[] = [];
  if (limits.threadMemoryMb > 0) {
    for (const s of samples) {
      if (s.memoryMb > limits.threadMemoryMb) {
        kills.push({
          index: s.index,
          forRss: false,
          reason: `it holds ${s.memoryMb} MiB (heap + off-heap), over executor.threadMemoryMb (${limits.threadMemoryMb})`,
        });
      }
    }
  }
  if (kills.length > 0 || limits.maxRssMb <= 0 || rssMb <= limits.maxRssMb) return kills;
  if (lastRssKillAt !== undefined && now - lastRssKillAt < RSS_COOLDOWN_MS) return kills;
  let victim: ThreadMemorySample | undefined;
  for (const s of samples) {
    if (
      victim === undefined ||
      (s.stuck && !victim.stuck) ||
      (s.stuck === victim.stuck && s.memoryMb > victim.memoryMb)
    )
      victim = s;
  }
  if (victim !== undefined) {
    kills.push({
      index: victim.index,
      forRss: true,
      reason: `the executor's RSS is ${rssMb} MiB, over executor.maxRssMb (${limits.maxRssMb}), and this thread holds the most (${victim.memoryMb} MiB${victim.stuck ? ', stuck' : ''})`,
    });
  }
  return kills;
}
