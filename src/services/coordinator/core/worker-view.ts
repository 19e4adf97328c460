// What the Coordinator knows about one Worker: the last heartbeat it read from etcd plus three fields that
// exist only in this process and are never written back (seeds/coordinator.md § Core types). Losing them on
// restart only loses routing bias, never correctness: the Worker's slot table is the source of truth.

import type { WorkerHeartbeat } from '../../registry/heartbeat.js';

export interface WorkerLocalState {
  /** The breaker is open while `now < circuitBreakerDeadlineMs`; 0 = never tripped. */
  circuitBreakerDeadlineMs: number;
  /** Rejections + timeouts since the last success. */
  recentFailureCount: number;
  /** Ranking tiebreaker: equals recentFailureCount. */
  penalty: number;
}

/** The heartbeat fields are writable here: the core refreshes a view in place on every update. */
export type WorkerView = { -readonly [K in keyof WorkerHeartbeat]: WorkerHeartbeat[K] } & WorkerLocalState;

/** A fresh view for a heartbeat, carrying over the local fields of `previous` when given. */
export function createWorkerView(hb: WorkerHeartbeat, previous?: WorkerLocalState): WorkerView {
  // Explicit fields (not a spread of `hb`): every view has the same shape, which keeps the selection loop
  // monomorphic, and stray properties of the input never leak into the view.
  return {
    workerAddr: hb.workerAddr,
    taskSlots: hb.taskSlots,
    reservedSlots: hb.reservedSlots,
    runningTasks: hb.runningTasks,
    cpuPercent: hb.cpuPercent,
    memoryPercent: hb.memoryPercent,
    memoryAvailableBytes: hb.memoryAvailableBytes,
    memoryTotalBytes: hb.memoryTotalBytes,
    processRssBytes: hb.processRssBytes,
    errorRate: hb.errorRate,
    lastHeartbeatMs: hb.lastHeartbeatMs,
    circuitBreakerDeadlineMs: previous?.circuitBreakerDeadlineMs ?? 0,
    recentFailureCount: previous?.recentFailureCount ?? 0,
    penalty: previous?.penalty ?? 0,
  };
}

/** Overwrites the heartbeat fields of `view` in place, keeping its local fields (and its identity). */
export function assignHeartbeat(view: WorkerView, hb: WorkerHeartbeat): void {
  view.taskSlots = hb.taskSlots;
  view.reservedSlots = hb.reservedSlots;
  view.runningTasks = hb.runningTasks;
  view.cpuPercent = hb.cpuPercent;
  view.memoryPercent = hb.memoryPercent;
  view.memoryAvailableBytes = hb.memoryAvailableBytes;
  view.memoryTotalBytes = hb.memoryTotalBytes;
  view.processRssBytes = hb.processRssBytes;
  view.errorRate = hb.errorRate;
  view.lastHeartbeatMs = hb.lastHeartbeatMs;
}

/** Slots the Worker has committed: reserved plus running. */
export function usedTotal(v: WorkerHeartbeat): number {
  return v.reservedSlots + v.runningTasks;
}

/** Slots still free by the last heartbeat; may be negative if a heartbeat reports over-commitment. */
export function freeCapacity(v: WorkerHeartbeat): number {
  return v.taskSlots - (v.reservedSlots + v.runningTasks);
}
