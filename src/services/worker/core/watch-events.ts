// Watch inputs: WatchTasks streams attaching and detaching, and the disconnect grace they arm.
//
// When the last stream of an active task detaches and the grace is on (`watchDisconnectGraceMs > 0`),
// the grace timer starts; a new stream clears it; if it expires the task converges FAILED /
// WATCH_DISCONNECTED (retryable=false). Only tasks that were watched are affected, and no extra flag is
// needed for that: the count can only fall to zero for an active task if a stream was attached while
// it was active (or already attached when it was submitted). A task never watched never arms a grace.
// The adapter reports a detach only once gRPC confirmed the stream is gone (keepalive included).

import type { WorkerCommand } from './commands.js';
import type { CoreState } from './core-state.js';
import { APPLIED, IgnoredReason, ignored, type Applied, type Step } from './step.js';
import { activeTaskOrIgnored } from './task-events.js';
import { disconnectWatch } from './timer-events.js';

export function watchAttached(s: CoreState, taskId: string, _now: number): Step<Applied> {
  s.watches.attach(taskId);
  s.watches.clearGrace(taskId);
  return { result: APPLIED, commands: [] };
}

export function watchDetached(s: CoreState, taskId: string, now: number): Step<Applied> {
  const remaining = s.watches.detach(taskId);
  if (remaining === undefined) {
    return {
      result: ignored(IgnoredReason.WatchNotAttached, `no watch attached to task ${taskId}`),
      commands: [],
    };
  }
  const task = s.tasks.get(taskId);
  const grace = s.config.watchDisconnectGraceMs;
  if (remaining === 0 && task !== undefined && grace > 0) {
    s.watches.startGrace(taskId, now + grace);
  }
  return { result: APPLIED, commands: [] };
}

export function watchDisconnected(s: CoreState, taskId: string, now: number): Step<Applied> {
  const task = activeTaskOrIgnored(s, taskId, now);
  if ('applied' in task) return { result: task, commands: [] };
  const at = s.watches.graceDeadline(taskId);
  if (at === undefined || at > now) {
    const why = at === undefined ? 'no disconnect grace is running' : `the grace runs until ${at}`;
    return { result: ignored(IgnoredReason.NotDue, `task ${taskId}: ${why}`), commands: [] };
  }
  const commands: WorkerCommand[] = [];
  disconnectWatch(s, task, now, commands);
  return { result: APPLIED, commands };
}
