// The thread pool's decisions, without threads (docs/executor.md § The thread pool). thread-pool.ts is
// the shell: it owns the worker_threads, the shared memory and the one clock read per input, samples the
// threads, and asks these functions what to do. No IO, no clock: every time is an argument, on the
// shell's one clock (ms).
//
//  - Routing: a call goes to the routable thread with the fewest *running* calls (waiting calls do not
//    count, so parents blocked on children never starve them), below `maxCallsPerThread`; none → it
//    queues in the executor, not started.
//  - Stuck detection: a thread whose event loop has not beaten for STUCK_MS, or that has a cancelled
//    call still on it, gets no new calls and gives back the calls it has not started.
//  - Cancellation deadlines: a cancelled call still on its thread `cancelHardLimitMs` later gets the
//    whole thread terminated (`DeadlineTable`, looked at on the shell's sweep tick).
//  - The safety net: a call that has *run* (not waited) for its budget plus a margin is cancelled.
//  - What a call on a lost thread fails with.

import { ExecutorErrorCode } from '../errors.js';
import type { CallFailureKind } from '../protocol.js';

/** How often calls on threads are looked at: pickups, CallStarted reports, stuck threads, safety net. */
export const SWEEP_INTERVAL_MS = 25;
/** A call still running this long after its thread picked it up gets a CallStarted. */
export const STARTED_REPORT_MS = 25;
/** A thread whose event loop has not beaten for this long is stuck: no new calls, unstarted ones go back. */
export const STUCK_MS = 50;
/** Memory is looked at every this many sweeps (100 ms). */
export const MEMORY_CHECK_EVERY = 4;

/** What routing needs to know of a thread. */
export interface ThreadLoad {
  readonly ready: boolean;
  readonly draining: boolean;
  readonly dead: boolean;
  /** Calls running on it (not waiting on the Worker), or sent and not started yet. */
  readonly running: number;
  /** Calls on it that were cancelled and have not ended. */
  readonly cancelling: number;
}

/**
 * A thread beats every BUSY_BEAT_INTERVAL_MS while calls are on it, and only every IDLE_BEAT_INTERVAL_MS
 * without (an idle event loop need not wake a hundred times a second: docs/executor.md § The thread pool).
 */
export const BUSY_BEAT_INTERVAL_MS = 10;
export const IDLE_BEAT_INTERVAL_MS = 250;

/**
 * How long a thread has been silent, as stuck detection reads it: the age of its last beat, but only
 * since it has calls on it (`busyForMs`, undefined while it has none). An idle thread's slow beat says
 * nothing; a thread that just got calls is not stuck for the beat it owed while idle.
 */
export function silenceMs(beatAgeMs: number, busyForMs: number | undefined): number {
  return busyForMs === undefined ? 0 : Math.min(beatAgeMs, busyForMs);
}

/** Stuck: silent (silenceMs) for longer than STUCK_MS. */
export function isStuck(silentMs: number): boolean {
  return silentMs > STUCK_MS;
}

/** Whether the thread may take one more call now. */
export function routable(t: ThreadLoad, beatAgeMs: number, maxCallsPerThread: number): boolean {
  return (
    t.ready &&
    !t.draining &&
    !t.dead &&
    t.running < maxCallsPerThread &&
    t.cancelling === 0 &&
    !isStuck(beatAgeMs)
  );
}

/** The routable thread with the fewest running calls (the first of equals), or undefined. */
export function pickThread<T extends ThreadLoad>(
  threads: readonly T[],
  maxCallsPerThread: number,
  beatAgeMs: (t: T) => number,
): T | undefined {
  let best: T | undefined;
  for (const t of threads) {
    if ((best === undefined || t.running < best.running) && routable(t, beatAgeMs(t), maxCallsPerThread))
      best = t;
  }
  return best;
}

/**
 * Where the next `n` queued calls go, in order: the thread of each, as repeated `pickThread` would choose
 * them if each pick took a place (the routable thread with the fewest running calls, the first of
 * equals, none past `maxCallsPerThread`). So a batch is spread by free capacity, and no thread is given a
 * call while a routable one has fewer running: one thread never hoards a batch while others idle. Fewer
 * than `n` when the threads fill up; `beatAgeMs` is read once per thread.
 */
export function placeCalls<T extends ThreadLoad>(
  threads: readonly T[],
  n: number,
  maxCallsPerThread: number,
  beatAgeMs: (t: T) => number,
): T[] {
  const open: T[] = [];
  const running: number[] = [];
  for (const t of threads) {
    if (!routable(t, beatAgeMs(t), maxCallsPerThread)) continue;
    open.push(t);
    running.push(t.running);
  }
  const picks: T[] = [];
  while (picks.length < n) {
    let best = -1;
    for (let i = 0; i < open.length; i++)
      if (running[i]! < maxCallsPerThread && (best < 0 || running[i]! < running[best]!)) best = i;
    if (best < 0) break;
    // Give `best` as many as keeps it at most level with the next least loaded (at least one).
    let next = maxCallsPerThread;
    for (let i = 0; i < open.length; i++) if (i !== best && running[i]! < next) next = running[i]!;
    const take = Math.min(
      n - picks.length,
      Math.max(1, next - running[best]!),
      maxCallsPerThread - running[best]!,
    );
    for (let k = 0; k < take; k++) picks.push(open[best]!);
    running[best]! += take;
  }
  return picks;
}

/** Whether the sweep takes back the calls `t` was sent and has not started. */
export function shouldTakeBack(t: ThreadLoad, beatAgeMs: number): boolean {
  return t.cancelling > 0 || isStuck(beatAgeMs);
}

/** The running-time books of one call on a thread. */
export interface CallClock {
  readonly budgetMs: number;
  /** Running time of the stretches that ended (each wait ends one). */
  readonly runningMs: number;
  /** When the current stretch began: the pickup on its thread, then each resume. */
  readonly runningSince: number;
  readonly openWaits: number;
  readonly startReported: boolean;
  readonly cancelReason: string | undefined;
}

/**
 * When a picked-up call's running time started: the pickup its thread recorded (`pickupAgeMs` ago), but
 * never before it was sent; without a record (the ring moved on), when it was sent.
 */
export function pickupStart(now: number, dispatchedAt: number, pickupAgeMs: number | undefined): number {
  const onThread = now - dispatchedAt;
  const ran = pickupAgeMs === undefined ? onThread : Math.min(Math.max(0, pickupAgeMs), onThread);
  return now - ran;
}

/** The `elapsedMs` of a CallStarted due now, or undefined (reported already, or not long enough). */
export function startedReportDue(call: CallClock, now: number): number | undefined {
  // Not reported yet means it has not waited either: runningSince is its pickup.
  if (call.startReported || now - call.runningSince < STARTED_REPORT_MS) return undefined;
  return Math.round(now - call.runningSince);
}

/** The cancel reason when the safety net is due: the call ran past its budget plus the margin. */
export function safetyNetDue(call: CallClock, now: number, marginMs?: number): string | undefined {
  if (call.cancelReason !== undefined || call.budgetMs <= 0) return undefined;
  const ran = call.runningMs + (call.openWaits === 0 ? now - call.runningSince : 0);
  const limit = call.budgetMs + (marginMs ?? Math.max(1000, call.budgetMs));
  if (ran <= limit) return undefined;
  return `executor safety net: ran ${Math.round(ran)} ms against a budget of ${call.budgetMs} ms`;
}

export interface LostCallFailure {
  readonly kind: CallFailureKind;
  readonly retryable: true;
  readonly message: string;
  readonly code?: string;
}

/** What a call that was running on a lost thread fails with. */
export function lostCallFailure(
  thread: { readonly index: number; readonly memoryKill: string | undefined },
  call: { readonly overdue: boolean; readonly cancelReason: string | undefined },
  reason: string,
): LostCallFailure {
  if (thread.memoryKill !== undefined) {
    const code = ExecutorErrorCode.EXECUTOR_MEMORY_LIMIT;
    const message = `${code}: execution thread ${thread.index} was terminated: ${thread.memoryKill}`;
    return { kind: 'executor_crash', retryable: true, message, code };
  }
  if (call.overdue)
    return {
      kind: 'deadline',
      retryable: true,
      message: `cancelled (${call.cancelReason}) and its execution thread ${reason}`,
    };
  return { kind: 'executor_crash', retryable: true, message: `execution thread ${thread.index} ${reason}` };
}

/** Deadlines as data: the shell arms one OS timer at `nextDeadline()` and hands `takeDue(now)` back. */
export class DeadlineTable<K> {
  private readonly at = new Map<K, number>();

  set(key: K, deadline: number): void {
    this.at.set(key, deadline);
  }
  delete(key: K): void {
    this.at.delete(key);
  }
  clear(): void {
    this.at.clear();
  }
  get size(): number {
    return this.at.size;
  }
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const d of this.at.values()) if (next === undefined || d < next) next = d;
    return next;
  }
  /** The keys due at `now`, earliest first; they leave the table. */
  takeDue(now: number): K[] {
    const due: [K, number][] = [];
    for (const [k, d] of this.at) if (d <= now) due.push([k, d]);
    due.sort((a, b) => a[1] - b[1]);
    for (const [k] of due) this.at.delete(k);
    return due.map(([k]) => k);
  }
}
