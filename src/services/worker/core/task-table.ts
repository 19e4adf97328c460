// Active (submitted, not yet terminal) tasks (docs/task-lifecycle.md § Slots). A record exists from the
// moment `handleSubmitTask` accepts the task (phase Preparing) until it converges; each record owns one slot
// and one deadline timer (acceptance time + effective timeout).

import { TimerTable } from './timer-table.js';
import type { ActivePhase, CodeEpoch, PluginConfig, TaskInput } from './types.js';

/** `TaskInput` after admission: the result handler normalised to `null` when absent or empty. */
export interface AcceptedTaskInput extends TaskInput {
  readonly resultHandler: PluginConfig | null;
}

export interface TaskRecord {
  readonly taskId: string;
  readonly slotId: string;
  readonly input: AcceptedTaskInput;
  phase: ActivePhase;
  readonly acceptedAtMs: number;
  /** The effective timeout (ms) resolved at admission. */
  readonly timeoutMs: number;
  /** Absolute deadline: `acceptedAtMs + timeoutMs`. */
  readonly deadlineMs: number;
  /** Pinned at activation. */
  codeEpoch: CodeEpoch | undefined;
  /** Who submitted it (callerIdentity; absent: anonymous). Only this client sees or reuses the id. */
  readonly client?: string;
}

export class TaskTable {
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly deadlines = new TimerTable<string>();

  get size(): number {
    return this.tasks.size;
  }

  get(taskId: string): TaskRecord | undefined {
    return this.tasks.get(taskId);
  }

  records(): IterableIterator<TaskRecord> {
    return this.tasks.values();
  }

  add(record: TaskRecord): void {
    if (this.tasks.has(record.taskId))
      throw new Error(`TaskTable.add: task ${record.taskId} is already active`);
    this.tasks.set(record.taskId, record);
    this.deadlines.set(record.taskId, record.deadlineMs);
  }

  delete(taskId: string): void {
    this.tasks.delete(taskId);
    this.deadlines.delete(taskId);
  }

  nextDeadline(): number | undefined {
    return this.deadlines.peek()?.at;
  }

  /** Pops one task whose deadline is due at `now` (its timer is disarmed; the record stays). */
  popTimedOut(now: number): string | undefined {
    return this.deadlines.popDue(now);
  }

  armedDeadline(taskId: string): number | undefined {
    return this.deadlines.get(taskId);
  }
}
