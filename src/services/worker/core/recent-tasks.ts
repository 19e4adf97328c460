// The Worker's recent tasks (WorkerAdminService.ListRecentTasks, docs/dashboard-data.md): a bounded
// record of the last tasks admitted or ended here, and cumulative counters since the process started.
//
// Theory of operation. Every change to a record (admitted → RUNNING, ended → SUCCEEDED/FAILED) takes
// the next sequence number and moves the record to the newest end of an insertion-ordered Map, so the
// Map is always sorted by `seq`. A reader polls with the `lastSeq` of its previous answer and gets only
// the records that changed since. When the Map holds `capacity` records the least recently changed one
// is dropped; if that record had changed after a reader's cursor, the reader missed it, and the answer
// says so (`truncated`). The counters count every terminal task, even one whose record was dropped, so
// a reader computes throughput from their deltas, not from the records.
//
// Nothing from a task's input is kept: the builder type, times, state, failure code and a failure
// message cut to MAX_FAILURE_MESSAGE_CHARS. No IO, no clock: `now` is an argument.

import type { TaskState } from '../../../contracts/task.js';

/** Records kept (the ring's size). */
export const RECENT_TASKS_CAPACITY = 256;
/** Records one ListRecentTasks answer carries at most (also the default `limit`). */
export const MAX_RECENT_TASKS_PER_LIST = 256;
/** Failure messages are cut to this many characters (the last one an ellipsis). */
export const MAX_FAILURE_MESSAGE_CHARS = 512;
/** Builder types and code versions are cut to this many characters. */
export const MAX_LABEL_CHARS = 128;

/** A record is made when its task is admitted: RUNNING, then its terminal state. */
export type RecentTaskRecordState = Exclude<TaskState, 'UNSPECIFIED' | 'ALLOCATED'>;

export interface RecentTaskRecord {
  readonly taskId: string;
  readonly state: RecentTaskRecordState;
  readonly startedAtMs: number;
  /** 0 while the task runs. */
  readonly endedAtMs: number;
  readonly builder: string;
  readonly failureCode: string;
  readonly failureMessage: string;
  readonly codeVersion: string;
  /** The sequence number of this record's last change. */
  readonly seq: number;
  /** The submitter, when known (not sent: it decides who sees the record, docs/security.md § Roles). */
  readonly client?: string;
}

export interface TaskAdmitted {
  readonly taskId: string;
  readonly builder: string;
  readonly now: number;
  readonly client?: string;
  readonly codeVersion?: string;
}

export interface TaskEnded {
  readonly taskId: string;
  readonly succeeded: boolean;
  readonly failureCode: string;
  readonly failureMessage: string;
  readonly now: number;
  /** Used when the admission record is gone (dropped, or the task ended without one). */
  readonly startedAtMs?: number;
  readonly builder?: string;
  readonly codeVersion?: string;
}

export interface RecentTasksPage {
  /** Records changed after the cursor, newest change first. */
  readonly tasks: readonly RecentTaskRecord[];
  readonly lastSeq: number;
  readonly succeededTotal: number;
  readonly failedTotal: number;
  /** Changes after the cursor that this page does not carry (dropped from the ring, or over `limit`). */
  readonly truncated: boolean;
}

/** `text` cut to `max` characters, the last one an ellipsis when cut (code points, never half of one). */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(0, max - 1)).join('')}…`;
}

export class RecentTasks {
  private readonly records = new Map<string, RecentTaskRecord>();
  private seq = 0;
  /** The highest `seq` among dropped records: a cursor below it missed a change. */
  private droppedSeq = 0;
  private succeeded = 0;
  private failed = 0;

  constructor(readonly capacity: number = RECENT_TASKS_CAPACITY) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, got ${capacity}`);
    }
  }

  get size(): number {
    return this.records.size;
  }

  get succeededTotal(): number {
    return this.succeeded;
  }

  get failedTotal(): number {
    return this.failed;
  }

  admitted(e: TaskAdmitted): void {
    this.put({
      taskId: e.taskId,
      state: 'RUNNING',
      startedAtMs: e.now,
      endedAtMs: 0,
      builder: cutText(e.builder, MAX_LABEL_CHARS),
      failureCode: '',
      failureMessage: '',
      codeVersion: cutText(e.codeVersion ?? '', MAX_LABEL_CHARS),
      seq: 0,
      ...(e.client === undefined ? {} : { client: e.client }),
    });
  }

  ended(e: TaskEnded): void {
    if (e.succeeded) this.succeeded++;
    else this.failed++;
    const before = this.records.get(e.taskId);
    this.put({
      taskId: e.taskId,
      state: e.succeeded ? 'SUCCEEDED' : 'FAILED',
      startedAtMs: before?.startedAtMs ?? e.startedAtMs ?? 0,
      endedAtMs: e.now,
      builder: before?.builder ?? cutText(e.builder ?? '', MAX_LABEL_CHARS),
      failureCode: e.succeeded ? '' : cutText(e.failureCode, MAX_LABEL_CHARS),
      failureMessage: e.succeeded ? '' : cutText(e.failureMessage, MAX_FAILURE_MESSAGE_CHARS),
      codeVersion: cutText(e.codeVersion ?? '', MAX_LABEL_CHARS) || (before?.codeVersion ?? ''),
      seq: 0,
      ...(before?.client === undefined ? {} : { client: before.client }),
    });
  }

  /**
   * Records changed after `afterSeq`, newest change first, at most `limit` (≤ 0 or above
   * MAX_RECENT_TASKS_PER_LIST: that cap). A cursor beyond `lastSeq` (from another process) reads as 0.
   */
  list(afterSeq: number, limit: number): RecentTasksPage {
    const cap =
      limit > 0 && limit < MAX_RECENT_TASKS_PER_LIST ? Math.floor(limit) : MAX_RECENT_TASKS_PER_LIST;
    const after = Number.isFinite(afterSeq) && afterSeq >= 0 && afterSeq <= this.seq ? afterSeq : 0;
    const all = [...this.records.values()];
    const tasks: RecentTaskRecord[] = [];
    // From 0 the reader asks for what is retained: records dropped before are not "missed".
    let truncated = after > 0 && this.droppedSeq > after;
    for (let i = all.length - 1; i >= 0; i--) {
      const r = all[i]!;
      if (r.seq <= after) break;
      if (tasks.length === cap) {
        truncated = true;
        break;
      }
      tasks.push(r);
    }
    return {
      tasks,
      lastSeq: this.seq,
      succeededTotal: this.succeeded,
      failedTotal: this.failed,
      truncated,
    };
  }

  private put(record: RecentTaskRecord): void {
    this.seq++;
    this.records.delete(record.taskId);
    this.records.set(record.taskId, { ...record, seq: this.seq });
    while (this.records.size > this.capacity) {
      const [oldestId, oldest] = this.records.entries().next().value as [string, RecentTaskRecord];
      this.records.delete(oldestId);
      if (oldest.seq > this.droppedSeq) this.droppedSeq = oldest.seq;
    }
  }
}
