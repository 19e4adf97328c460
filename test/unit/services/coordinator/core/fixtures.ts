// Shared builders for the coordinator core tests.
import type { CoordinatorCoreConfig } from '../../../../../src/services/coordinator/core/config.js';
import { DEFAULT_COORDINATOR_CORE_CONFIG } from '../../../../../src/services/coordinator/core/config.js';
import { CoordinatorCore } from '../../../../../src/services/coordinator/core/coordinator-core.js';
import type { WorkerHeartbeat } from '../../../../../src/contracts/heartbeat.js';

/** A healthy, idle Worker with 4 slots whose heartbeat was taken at `lastHeartbeatMs` (default 1000). */
export function hb(workerAddr: string, over: Partial<WorkerHeartbeat> = {}): WorkerHeartbeat {
  return {
    workerAddr,
    taskSlots: 4,
    reservedSlots: 0,
    runningTasks: 0,
    cpuPercent: 0.1,
    memoryPercent: 0.2,
    memoryAvailableBytes: 8_000_000_000,
    memoryTotalBytes: 16_000_000_000,
    processRssBytes: 100_000_000,
    errorRate: 0,
    lastHeartbeatMs: 1_000,
    ...over,
  };
}

/** An initialized core holding `workers`, with a config override. */
export function coreWith(
  workers: readonly WorkerHeartbeat[],
  config: Partial<CoordinatorCoreConfig> = {},
  now = 1_000,
): CoordinatorCore {
  const core = new CoordinatorCore({ ...DEFAULT_COORDINATOR_CORE_CONFIG, ...config });
  core.applyFullWorkerList(workers, now);
  return core;
}

/** The chosen address, or the error code prefixed with '!'. */
export function pick(
  core: CoordinatorCore,
  now: number,
  exclude: readonly string[] = [],
  taskId = 't1',
): string {
  const r = core.selectCandidate(taskId, exclude, now);
  return r.ok ? r.workerAddr : `!${r.error.code}`;
}
