// The pool's books, as plain data (docs/executor.md § The thread pool): which calls are in flight, in
// which state, on which thread, and each thread's running / cancelling counts. thread-pool.ts (the shell)
// owns the threads and their shared memory; it reads a thread's claim word and hands the result here
// (`takeBack(t, from)`). No IO, no clock: times are arguments.

import type { BatchedCallIn, CallTask } from '../protocol.js';
import type { ThreadLoad } from './pool-scheduler.js';
import { NO_TENANT } from './tenant-placement.js';

/** Exec sequence numbers are 31-bit and wrap (thread-messages.ts § shared memory). */
export const SEQ_MASK = 0x7fffffff;

/** Whether exec `seq` is before `upTo` (both 31-bit wrapping sequence numbers, close together). */
export function seqBefore(seq: number, upTo: number): boolean {
  const d = (upTo - seq) & SEQ_MASK;
  return d !== 0 && d < 0x40000000;
}

/** A thread's books: what routing reads (ThreadLoad) plus the calls on it. */
export interface ThreadBooks<C> extends ThreadLoad {
  ready: boolean;
  dead: boolean;
  draining: boolean;
  running: number;
  cancelling: number;
  /** The sequence number of the next exec sent to the thread. */
  sentSeq: number;
  readonly calls: Set<C>;
  /** The tenant of the calls on it, undefined while it has none (core/tenant-placement.ts). */
  tenant?: string | undefined;
  /** A tenant waiting for the thread (core/tenant-placement.ts). */
  reservedFor?: string | undefined;
}

export type CallState = 'resolving' | 'queued' | 'running';

export interface PoolCall<T, M> {
  /** The task-level fields, one object for every attempt of one ExecuteCalls frame. */
  readonly task: CallTask;
  /** The attempt as parsed (its ExecuteCalls entry, or the ExecuteCall's own); posted to its thread as is. */
  readonly entry: BatchedCallIn;
  readonly key: string;
  readonly budgetMs: number;
  state: CallState;
  module: M | undefined;
  thread: T | undefined;
  openWaits: number;
  runningMs: number;
  /** When the current running stretch began: the pickup on its thread, then each resume. */
  runningSince: number;
  /** When the call was sent to its thread. */
  dispatchedAt: number;
  /** Its exec sequence number on its thread. */
  seq: number;
  /** The thread has started it (claimed in shared memory); until then it may be taken back. */
  pickedUp: boolean;
  /** CallStarted sent, or implied by a CallWaiting / terminal frame. */
  startReported: boolean;
  cancelReason: string | undefined;
  /** The thread it was cancelled on (counted in its `cancelling`), while its hard limit runs. */
  cancelledOn: T | undefined;
  overdue: boolean;
}

export function newPoolCall<T, M>(task: CallTask, entry: BatchedCallIn, key: string): PoolCall<T, M> {
  return {
    task,
    entry,
    key,
    budgetMs: task.budgetMs,
    state: 'resolving',
    module: undefined,
    thread: undefined,
    openWaits: 0,
    runningMs: 0,
    runningSince: 0,
    dispatchedAt: 0,
    seq: 0,
    pickedUp: false,
    startReported: false,
    cancelReason: undefined,
    cancelledOn: undefined,
    overdue: false,
  };
}

type AnyCall<T> = PoolCall<T, unknown>;

/** The call goes to `t` now: it runs there (or waits there to be started) under the next sequence number. */
export function assign<T extends ThreadBooks<C>, C extends AnyCall<T>>(call: C, t: T, now: number): void {
  call.state = 'running';
  call.thread = t;
  call.runningSince = call.dispatchedAt = now;
  call.seq = t.sentSeq;
  t.sentSeq = (t.sentSeq + 1) & SEQ_MASK;
  t.calls.add(call);
  t.running++;
  t.tenant = tenantOf(call.task);
}

/** The tenant of a call's task: its `tenant`, or NO_TENANT when the Worker sent none. */
export function tenantOf(task: CallTask): string {
  return task.tenant ?? NO_TENANT;
}

/** The call has ended: off its thread's books. Returns its thread, if it had one. */
export function release<T extends ThreadBooks<C>, C extends AnyCall<T>>(call: C): T | undefined {
  const t = call.thread;
  if (t && t.calls.delete(call)) {
    if (call.openWaits === 0) t.running--;
    if (call.cancelledOn === t) t.cancelling--;
    if (t.calls.size === 0) t.tenant = undefined;
  }
  return t;
}

/**
 * The thread will never start execs from `from` on (the shell revoked them in shared memory): those of
 * its calls are taken off it, in the order they were sent, back to `queued`.
 */
export function takeBack<T extends ThreadBooks<C>, C extends AnyCall<T>>(t: T, from: number): C[] {
  if (from === t.sentSeq) return [];
  const back: C[] = [];
  for (const call of t.calls) if (!call.pickedUp && !seqBefore(call.seq, from)) back.push(call);
  back.sort((a, b) => ((a.seq - from) & SEQ_MASK) - ((b.seq - from) & SEQ_MASK));
  for (const call of back) {
    t.calls.delete(call);
    t.running--;
    call.state = 'queued';
    call.thread = undefined;
  }
  if (t.calls.size === 0) t.tenant = undefined;
  return back;
}

/** A CallWaiting: the first open wait ends a running stretch and frees a place on the thread. */
export function startWait<T extends ThreadBooks<C>, C extends AnyCall<T>>(
  call: C,
  t: T,
  now: number,
): boolean {
  call.startReported = true;
  if (call.openWaits++ !== 0) return false;
  t.running--;
  call.runningMs += now - call.runningSince;
  return true;
}

/** A ResumeCall: the last open wait answered starts a running stretch again. */
export function endWait<T extends ThreadBooks<C>, C extends AnyCall<T>>(call: C, t: T, now: number): void {
  if (call.openWaits > 0 && --call.openWaits === 0) {
    t.running++;
    call.runningSince = now;
  }
}

/** The calls waiting for a thread, in order, with a moving head (cheap shift). */
export class CallQueue<C> {
  private items: C[] = [];
  private head = 0;

  get pending(): boolean {
    return this.head < this.items.length;
  }
  /** Calls in the queue, stale ones (ended while queued) included. */
  get length(): number {
    return this.items.length - this.head;
  }
  push(call: C): void {
    this.items.push(call);
  }
  /** Put taken-back calls first, in their order. */
  pushFront(calls: readonly C[]): void {
    if (calls.length === 0) return;
    this.items = [...calls, ...this.items.slice(this.head)];
    this.head = 0;
  }
  peek(): C | undefined {
    return this.items[this.head];
  }
  /** The call at position `i` from the head. */
  at(i: number): C | undefined {
    return this.items[this.head + i];
  }
  /**
   * Of the first `scanned` calls, keep only those `keep` says, in order (placed and stale ones leave);
   * cheap when every kept one comes after the others.
   */
  compact(scanned: number, keep: (call: C) => boolean): void {
    const end = this.head + scanned;
    let k = this.head;
    while (k < end && !keep(this.items[k]!)) k++;
    if (k === end) {
      for (let i = 0; i < scanned; i++) this.shift();
      return;
    }
    const kept: C[] = [];
    for (let i = k; i < end; i++) if (keep(this.items[i]!)) kept.push(this.items[i]!);
    this.items = [...kept, ...this.items.slice(end)];
    this.head = 0;
  }
  shift(): void {
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
