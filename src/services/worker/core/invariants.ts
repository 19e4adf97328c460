// Internal consistency of the core's tables, checked by tests after every step (and available to a
// debug build). Returns the violations; an empty list means the state is consistent.

import type { CoreState } from './core-state.js';
import { SlotState } from './slot-table.js';
import { TaskPhase } from './types.js';

export function checkInvariants(s: CoreState): string[] {
  const problems: string[] = [];
  const seenTasks = new Set<string>();
  let allocated = 0;
  let running = 0;
  let graceArmed = 0;
  let unsubmitted = 0;

  for (const slot of s.slots.slots()) {
    if (seenTasks.has(slot.taskId)) problems.push(`task ${slot.taskId} holds more than one slot`);
    seenTasks.add(slot.taskId);
    if (s.slots.byTask(slot.taskId) !== slot) problems.push(`slot ${slot.slotId} is not indexed by its task`);
    const task = s.tasks.get(slot.taskId);
    if (slot.state === SlotState.ALLOCATED) {
      allocated++;
      if (slot.leaseDeadlineMs === undefined || s.slots.armedLease(slot.slotId) !== slot.leaseDeadlineMs) {
        // A popped-but-not-yet-processed lease exists only inside tickTimers, never between inputs.
        problems.push(`ALLOCATED slot ${slot.slotId} has no armed lease matching its deadline`);
      }
      if (task !== undefined && task.phase !== TaskPhase.Preparing) {
        problems.push(`slot ${slot.slotId} is ALLOCATED but its task is in phase ${task.phase}`);
      }
    } else {
      running++;
      if (s.slots.armedLease(slot.slotId) !== undefined)
        problems.push(`RUNNING slot ${slot.slotId} has a lease`);
      if (task === undefined) problems.push(`RUNNING slot ${slot.slotId} has no active task`);
      else if (task.phase === TaskPhase.Preparing)
        problems.push(`RUNNING slot ${slot.slotId} task still Preparing`);
    }
    if (s.results.has(slot.taskId)) {
      problems.push(`task ${slot.taskId} holds a slot and a retained result`);
    }
    // Unsubmitted = ALLOCATED with no task on it: what the per-client reservation rules count.
    const isUnsubmitted = slot.state === SlotState.ALLOCATED && task?.slotId !== slot.slotId;
    if (isUnsubmitted) unsubmitted++;
    if (s.slots.isUnsubmitted(slot) !== isUnsubmitted) {
      problems.push(`slot ${slot.slotId} is ${isUnsubmitted ? '' : 'not '}unsubmitted but indexed otherwise`);
    }
  }
  let indexed = 0;
  for (const count of s.slots.unsubmittedCounts().values()) indexed += count;
  if (indexed !== unsubmitted)
    problems.push(`per-client reservations ${indexed} != ${unsubmitted} unsubmitted`);
  if (allocated !== s.slots.reservedCount || running !== s.slots.runningCount) {
    problems.push(
      `slot counters drifted: ${s.slots.reservedCount}/${s.slots.runningCount} vs ${allocated}/${running}`,
    );
  }
  if (s.slots.inUse > s.slots.capacity)
    problems.push(`${s.slots.inUse} slots in use > capacity ${s.slots.capacity}`);
  if (s.slots.armedLeaseCount !== allocated)
    problems.push(`armed leases ${s.slots.armedLeaseCount} != ${allocated}`);

  for (const task of s.tasks.records()) {
    const slot = s.slots.get(task.slotId);
    if (slot === undefined || slot.taskId !== task.taskId) problems.push(`task ${task.taskId} lost its slot`);
    if (s.tasks.armedDeadline(task.taskId) !== task.deadlineMs)
      problems.push(`task ${task.taskId} deadline disarmed`);
    if (s.results.has(task.taskId)) problems.push(`active task ${task.taskId} also has a retained result`);
    if (s.watches.graceDeadline(task.taskId) !== undefined) {
      graceArmed++;
      if (s.watches.count(task.taskId) > 0 || s.config.watchDisconnectGraceMs === 0) {
        problems.push(`task ${task.taskId} has a disconnect grace while watched, or with the grace off`);
      }
    }
  }
  if (s.watches.graceCount !== graceArmed)
    problems.push('a disconnect grace timer belongs to no active task');
  if (s.draining && s.slots.inUse === 0 && !s.drainedEmitted) problems.push('drained without Drained');
  return problems;
}
