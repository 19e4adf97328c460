// Timer-driven inputs: slot lease expiry, task timeout, watch grace, result retention.
//
// All four deadlines live in timer tables; `tickTimers(now)` fires everything due at `now` in a fixed
// order (slot leases → task timeouts → watch grace → result purge) and `nextDeadline()` tells the app
// when to call it next. The single-timer handlers are exposed too, for drivers that arm a timer per
// entity; they check that the timer is really due, so a stale or early timer event is ignored.
// "Due" means `deadline <= now` everywhere.

import type { WorkerCommand } from './commands.js';
import { convergeTask, failed } from './convergence.js';
import { maybeDrained, type CoreState } from './core-state.js';
import { FailureCode } from './errors.js';
import { SlotState, type SlotRecord } from './slot-table.js';
import { APPLIED, IgnoredReason, ignored, type Applied, type Step, type TickSummary } from './step.js';
import { activeTaskOrIgnored } from './task-events.js';
import type { TaskRecord } from './task-table.js';

/**
 * Reclaims an ALLOCATED slot whose lease expired. A task still Preparing on it loses its slot: it
 * converges FAILED / SLOT_LOST (docs/task-lifecycle.md § The three phases, Preparing), so its
 * watchers get a terminal update and a late activation result is ignored as TaskTerminal.
 */
function reclaimSlot(
  s: CoreState,
  slot: SlotRecord,
  now: number,
  commands: WorkerCommand[],
): 'reclaimed' | 'lost' {
  const task = s.tasks.get(slot.taskId);
  if (task !== undefined && task.slotId === slot.slotId) {
    const message = `slot lease (${slot.ttlMs} ms) expired while the task was still preparing its activation`;
    convergeTask(s, task, failed(FailureCode.SLOT_LOST, message), now, commands, true);
    return 'lost';
  }
  s.slots.release(slot.slotId);
  commands.push({ type: 'SlotReclaimed', slotId: slot.slotId, taskId: slot.taskId });
  maybeDrained(s, commands);
  return 'reclaimed';
}

function timeOut(s: CoreState, task: TaskRecord, now: number, commands: WorkerCommand[]): void {
  const message = `task exceeded its timeout of ${task.timeoutMs} ms`;
  convergeTask(s, task, failed(FailureCode.TIMED_OUT, message), now, commands, true);
}

export function disconnectWatch(
  s: CoreState,
  task: TaskRecord,
  now: number,
  commands: WorkerCommand[],
): void {
  const message = `no WatchTasks stream for ${s.config.watchDisconnectGraceMs} ms after the last one disconnected`;
  convergeTask(s, task, failed(FailureCode.WATCH_DISCONNECTED, message), now, commands, true);
}

export function slotLeaseExpired(s: CoreState, slotId: string, now: number): Step<Applied> {
  const slot = s.slots.get(slotId);
  if (slot === undefined || slot.state !== SlotState.ALLOCATED || slot.leaseDeadlineMs === undefined) {
    return {
      result: ignored(IgnoredReason.SlotNotAllocated, `slot ${slotId} is not ALLOCATED`),
      commands: [],
    };
  }
  if (slot.leaseDeadlineMs > now) {
    return {
      result: ignored(IgnoredReason.NotDue, `slot ${slotId} lease runs until ${slot.leaseDeadlineMs}`),
      commands: [],
    };
  }
  const commands: WorkerCommand[] = [];
  reclaimSlot(s, slot, now, commands);
  return { result: APPLIED, commands };
}

export function taskTimedOut(s: CoreState, taskId: string, now: number): Step<Applied> {
  const task = activeTaskOrIgnored(s, taskId, now);
  if ('applied' in task) return { result: task, commands: [] };
  if (task.deadlineMs > now) {
    return {
      result: ignored(IgnoredReason.NotDue, `task ${taskId} deadline is ${task.deadlineMs}`),
      commands: [],
    };
  }
  const commands: WorkerCommand[] = [];
  timeOut(s, task, now, commands);
  return { result: APPLIED, commands };
}

export function tickTimers(s: CoreState, now: number): Step<TickSummary> {
  const commands: WorkerCommand[] = [];
  let slotsReclaimed = 0;
  let slotsLost = 0;
  let tasksTimedOut = 0;
  let watchesDisconnected = 0;
  let resultsPurged = 0;

  for (
    let slotId = s.slots.popExpiredLease(now);
    slotId !== undefined;
    slotId = s.slots.popExpiredLease(now)
  ) {
    const slot = s.slots.get(slotId);
    if (slot === undefined || slot.state !== SlotState.ALLOCATED) continue;
    if (reclaimSlot(s, slot, now, commands) === 'lost') slotsLost++;
    else slotsReclaimed++;
  }
  for (let taskId = s.tasks.popTimedOut(now); taskId !== undefined; taskId = s.tasks.popTimedOut(now)) {
    const task = s.tasks.get(taskId);
    if (task === undefined) continue;
    timeOut(s, task, now, commands);
    tasksTimedOut++;
  }
  for (
    let taskId = s.watches.popGraceExpired(now);
    taskId !== undefined;
    taskId = s.watches.popGraceExpired(now)
  ) {
    const task = s.tasks.get(taskId);
    // A new stream clears the grace, so the count is 0 here; checked anyway, because failing a task
    // that has a watcher would break the promise the grace makes.
    if (task === undefined || s.watches.count(taskId) > 0) continue;
    disconnectWatch(s, task, now, commands);
    watchesDisconnected++;
  }
  // Last, so a result converged in this very tick is never purged by it (unless retention is 0).
  while (s.results.purgeOneExpired(now) !== undefined) resultsPurged++;

  return {
    result: { slotsReclaimed, slotsLost, tasksTimedOut, watchesDisconnected, resultsPurged },
    commands,
  };
}

/** The earliest armed deadline of any kind, or undefined when nothing is scheduled. */
export function nextDeadline(s: CoreState): number | undefined {
  let earliest: number | undefined;
  for (const at of [
    s.slots.nextLeaseDeadline(),
    s.tasks.nextDeadline(),
    s.watches.nextGraceDeadline(),
    s.results.nextExpiry(),
  ]) {
    if (at !== undefined && (earliest === undefined || at < earliest)) earliest = at;
  }
  return earliest;
}
