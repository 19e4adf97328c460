// The status row of one Worker as the Coordinator sees it at `now`: what `blockx status` and debug
// endpoints show. Derived, never stored.

import type { CoordinatorCoreConfig } from './config.js';
import { isBreakerOpen } from './circuit-breaker.js';
import { heartbeatFreshness } from './freshness.js';
import { freeCapacityAt } from './worker-view.js';
import type { WorkerView } from './worker-view.js';

/** One row of the status view (`blockx status`, debug endpoints). */
export interface WorkerStatus {
  readonly workerAddr: string;
  readonly taskSlots: number;
  readonly usedSlots: number;
  /** Free capacity as selection sees it: the heartbeat's, net of this Coordinator's own claims. */
  readonly freeSlots: number;
  readonly lastHeartbeatMs: number;
  readonly heartbeatAgeMs: number;
  readonly heartbeatFresh: boolean;
  readonly cpuPercent: number;
  readonly memoryPercent: number;
  readonly errorRate: number;
  readonly breakerOpen: boolean;
  /** When the open breaker closes; undefined when it is closed. */
  readonly breakerDeadlineMs: number | undefined;
  readonly recentFailureCount: number;
  readonly penalty: number;
}

export function workerStatus(v: WorkerView, now: number, config: CoordinatorCoreConfig): WorkerStatus {
  const free = freeCapacityAt(v, now, config.slotTtlMs);
  const breakerOpen = isBreakerOpen(v, now);
  return {
    workerAddr: v.workerAddr,
    taskSlots: v.taskSlots,
    usedSlots: v.taskSlots - free,
    freeSlots: free,
    lastHeartbeatMs: v.lastHeartbeatMs,
    heartbeatAgeMs: now - v.lastHeartbeatMs,
    heartbeatFresh: heartbeatFreshness(v.lastHeartbeatMs, now, config) === 'fresh',
    cpuPercent: v.cpuPercent,
    memoryPercent: v.memoryPercent,
    errorRate: v.errorRate,
    breakerOpen,
    breakerDeadlineMs: breakerOpen ? v.circuitBreakerDeadlineMs : undefined,
    recentFailureCount: v.recentFailureCount,
    penalty: v.penalty,
  };
}
