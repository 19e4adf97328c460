// The thread pool's configuration (thread-pool.ts) and the log lines it writes. The design is in
// docs/executor.md § The thread pool.

import type { CompiledFunction } from './function-compiler.js';
import type { MemoryLimits } from './memory-watch.js';

export interface ThreadPoolOptions {
  readonly threads: number;
  readonly maxCallsPerThread: number;
  readonly cancelHardLimitMs: number;
  readonly maxFrameBytes: number;
  /** Read copies each thread keeps (read-copies.ts); 0 turns them off. */
  readonly readCopyMaxEntries: number;
  /** task: threads lock down, freeze their global and import functions per task; none: no isolation. */
  readonly isolation: 'task' | 'none';
  readonly memory: MemoryLimits;
  /** Extra running time past `budgetMs` before the local safety net cancels. Default max(1000, budget). */
  readonly safetyMarginMs?: number;
  /** Resolves a call's module (compiled, cached). */
  readonly resolveModule: (epoch: string, name: string) => CompiledFunction | Promise<CompiledFunction>;
  /** One outbound protocol frame, already JSON. */
  readonly send: (json: string) => void;
  readonly log: (line: string) => void;
}

/** A log line for the executor's stderr (its `time` is wall-clock, for people reading logs). */
export function logLine(level: string, msg: string): string {
  return JSON.stringify({ level, time: Date.now(), component: 'executor', msg });
}
