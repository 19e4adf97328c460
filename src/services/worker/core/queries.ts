// Read-only questions about the core: task status for GetTaskResult / WatchTasks snapshots, and the
// slot-derived heartbeat counts. They change nothing except dropping a result whose retention passed.

import { requireTaskId } from './admission.js';
import { statusOf, type CoreState } from './core-state.js';
import { WorkerAdmissionError } from './errors.js';
import type { HeartbeatCounts, TaskSnapshot, TaskStatus } from './step.js';
import { isTerminalState } from './types.js';

/**
 * GetTaskResult: ALLOCATED, RUNNING, or a terminal state with its result; NotFound otherwise, and for a
 * task of another client than `client` (when given: docs/security.md § Roles).
 */
export function getTaskResult(s: CoreState, taskId: string, now: number, client?: string): TaskStatus {
  requireTaskId(taskId);
  const status = statusOf(s, taskId, now);
  if (status === undefined || (client !== undefined && status.client !== client))
    throw WorkerAdmissionError.notFound(taskId);
  return { taskId, state: status.state, result: status.result };
}

/**
 * The WatchTasks snapshot of one id; never throws (an unknown id, or one of another client than
 * `client` when given, is `found: false`).
 */
export function taskSnapshot(s: CoreState, taskId: string, now: number, client?: string): TaskSnapshot {
  const status = typeof taskId === 'string' && taskId !== '' ? statusOf(s, taskId, now) : undefined;
  if (status === undefined || (client !== undefined && status.client !== client))
    return { found: false, taskId };
  return {
    found: true,
    taskId,
    state: status.state,
    result: status.result,
    terminal: isTerminalState(status.state),
  };
}

/**
 * reservedSlots = ALLOCATED slots, runningTasks = RUNNING slots (docs/task-lifecycle.md § Slots), and,
 * when some client holds two or more unsubmitted reservations, reclaimableSlots: how many a client
 * holding none could take from the largest holder by the fair-share rule (it reclaims while the holder
 * has at least two more than it: half the holder's count). Without it a Coordinator would see a worker
 * filled by one client's reservations as full and never send anyone else there
 * (docs/security.md § Reservations per client).
 */
export function heartbeatCounts(s: CoreState): HeartbeatCounts {
  const counts = {
    taskSlots: s.slots.capacity,
    reservedSlots: s.slots.reservedCount,
    runningTasks: s.slots.runningCount,
  };
  const reclaimableSlots = Math.floor((s.slots.largestReservationHolder()?.count ?? 0) / 2);
  return reclaimableSlots > 0 ? { ...counts, reclaimableSlots } : counts;
}
