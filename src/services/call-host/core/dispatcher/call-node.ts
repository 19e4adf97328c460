// One call (root or child) while it is alive in the dispatcher, and the states it moves through.
//
//   queued ──dispatch──▶ dispatched ──callStarted──▶ running ──subcall──▶ suspended
//     ▲                      │                        │  ▲                 │ last child ends
//     │ backoff over         │ failed (retryable)     │  └──ResumeCall─── resumeQueued
//   backoff ◀────────────────┴────────────────────────┘
//   (any state) ──completed / failed terminally / cancelled──▶ done (removed)
//   A failed attempt passes through `detached` (off the executor, outcome not yet decided) within one input.
//
// Root calls not yet dispatched have no node: they are an index into the task's call list. A node is
// created on first dispatch (root) or when its parent asks for it (child), and dropped when it ends.

import type { CallArgs } from '../../../../contracts/call-args.js';
import type { Queueable } from './call-queue.js';
import type { Linked } from './live-list.js';
import type { TaskDispatch } from './task-dispatch.js';
import type { TimerEntry } from './timer-heap.js';
import type { PageSlot } from './pages.js';
import type { CallFailure, CallPage, SubcallError, WaitId } from './types.js';

export type CallState =
  | 'queued'
  | 'backoff'
  | 'dispatched'
  | 'running'
  | 'suspended'
  | 'resumeQueued'
  /** The attempt ended at the executor and its outcome is being decided (only inside one input). */
  | 'detached'
  | 'done';

/** A parent's pending answer while it waits for a slot to resume. */
export type ResumePayload =
  | {
      readonly ok: true;
      readonly value: unknown;
      readonly waitId: WaitId | undefined;
      readonly childCallId: string;
    }
  | {
      readonly ok: false;
      readonly error: SubcallError;
      readonly waitId: WaitId | undefined;
      readonly childCallId: string;
    };

export class CallNode implements TimerEntry, Queueable, Linked<CallNode> {
  readonly timerKind = 'call' as const;
  heapIndex = -1;
  timerAt = 0;
  timerSeq = 0;
  queueToken = 0;
  prevLive: CallNode | undefined = undefined;
  nextLive: CallNode | undefined = undefined;
  linked = false;

  state: CallState = 'queued';
  /** Current attempt (1-based once dispatched). */
  attempt = 0;
  /** When the current stretch of the budget clock started (callStarted or resume). */
  startedAt = 0;
  /** Budget the current attempt used before the current stretch (time before a subcall pause). */
  usedMs = 0;
  /** The task's dispatch sequence number when this attempt was sent (window policy). */
  dispatchSeq = 0;
  /** Children not yet ended; non-empty only while suspended. */
  children: Set<CallNode> | undefined = undefined;
  childCounter = 0;
  /** IO waits reported and not yet finished (informational: the budget clock keeps running). */
  ioWaits = 0;
  pendingResume: ResumePayload | undefined = undefined;
  lastFailure: CallFailure | undefined = undefined;
  /** Set when this root is a page of calls (pages.ts). */
  page: CallPage | undefined = undefined;
  /** Set when this root is one call of a split page: where its output goes (pages.ts). */
  pageSlot: PageSlot | undefined = undefined;
  /** Its row in that page. */
  pageRow = 0;

  constructor(
    readonly task: TaskDispatch,
    readonly callId: string,
    /** Position in the task's call list; -1 for a child. */
    readonly index: number,
    readonly parent: CallNode | undefined,
    /** The parent's wait this child answers. */
    readonly waitId: WaitId | undefined,
    readonly depth: number,
    readonly fn: string,
    readonly args: CallArgs,
    readonly block: unknown,
  ) {}
}

/** The attempt lives in the executor (it may receive events and must be cancelled when written off). */
export function atExecutor(state: CallState): boolean {
  return state === 'dispatched' || state === 'running' || state === 'suspended' || state === 'resumeQueued';
}

/** The attempt holds one of the task's execution slots (counts against window and cap). */
export function holdsSlot(state: CallState): boolean {
  return state === 'dispatched' || state === 'running';
}

/** The attempt is alive in the executor but parked on subcalls (holds no slot, clock paused). */
export function isParked(state: CallState): boolean {
  return state === 'suspended' || state === 'resumeQueued';
}
