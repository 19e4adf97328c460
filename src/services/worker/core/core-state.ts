// The whole state of one WorkerCore, as plain data shared by the input handlers
// (admission.ts, task-events.ts, timer-events.ts, watch-events.ts, queries.ts). Only `WorkerCore` holds
// it; handlers are functions of (state, input, now) that mutate it and append commands.

import { ANONYMOUS_CLIENT } from '../../../kernel/client-identity.js';
import type { WorkerCommand } from './commands.js';
import type { WorkerCoreConfig } from './config.js';
import { ResultStore } from './result-store.js';
import { SlotTable } from './slot-table.js';
import { TaskTable } from './task-table.js';
import { TaskState, type TaskResult, type TaskState as TaskStateT } from './types.js';
import { WatchTable } from './watch-table.js';

export interface CoreState {
  readonly config: WorkerCoreConfig;
  readonly slots: SlotTable;
  readonly tasks: TaskTable;
  readonly results: ResultStore;
  readonly watches: WatchTable;
  /** The executor has reported ready (first heartbeat) and has not been lost since. */
  ready: boolean;
  /** Draining started; never ends. */
  draining: boolean;
  /** `Drained` was emitted. */
  drainedEmitted: boolean;
}

export function createCoreState(config: WorkerCoreConfig, newSlotId: () => string): CoreState {
  return {
    config,
    slots: new SlotTable(config.taskSlots, newSlotId),
    tasks: new TaskTable(),
    results: new ResultStore(),
    watches: new WatchTable(),
    ready: false,
    draining: false,
    drainedEmitted: false,
  };
}

/** Admissions are open. */
export function isServing(s: CoreState): boolean {
  return s.ready && !s.draining;
}

/** Sets readiness/draining; reports a change of either as `ServingStatusChanged`. */
export function setServingFlags(
  s: CoreState,
  flags: { ready?: boolean; draining?: boolean },
  commands: WorkerCommand[],
): void {
  const ready = flags.ready ?? s.ready;
  const draining = flags.draining ?? s.draining;
  if (ready === s.ready && draining === s.draining) return;
  s.ready = ready;
  s.draining = draining;
  commands.push({ type: 'ServingStatusChanged', serving: isServing(s), ready, draining });
  maybeDrained(s, commands);
}

/** Emits `Drained` once, when draining and no slot is in use. */
export function maybeDrained(s: CoreState, commands: WorkerCommand[]): void {
  if (s.draining && !s.drainedEmitted && s.slots.inUse === 0) {
    s.drainedEmitted = true;
    commands.push({ type: 'Drained' });
  }
}

/** What a task id currently is, at `now`: active (RUNNING), reserved (ALLOCATED), retained, or unknown. */
export function statusOf(
  s: CoreState,
  taskId: string,
  now: number,
): { state: TaskStateT; result: TaskResult | undefined; client: string } | undefined {
  const task = s.tasks.get(taskId);
  if (task !== undefined) return { state: TaskState.RUNNING, result: undefined, client: owner(task.client) };
  const slot = s.slots.byTask(taskId);
  if (slot !== undefined)
    return { state: TaskState.ALLOCATED, result: undefined, client: owner(slot.client) };
  const retained = s.results.get(taskId, now);
  if (retained !== undefined)
    return { state: retained.state, result: retained.result, client: owner(retained.client) };
  return undefined;
}

/** A recorded client, anonymous when none was recorded. */
export function owner(client: string | undefined): string {
  return client ?? ANONYMOUS_CLIENT;
}
