// Messages between the executor's main thread and its execution threads. Both directions travel as one
// batch per event-loop turn, laid out as parallel arrays of strings and numbers: structured clone copies
// those much faster than arrays of small objects, and this is the hot path of every call.
//
// Calls reach a thread in slices: the attempts of one task sent to the thread in one turn (their ids,
// attempt numbers and arguments as the main thread parsed them, in three parallel arrays), with their
// task-level fields once (one object shared by the slices of a frame,
// which structured clone copies once per message). Structured clone, not JSON text: measured with the
// demo function's 680-byte event rows, 256 attempts a message to a real thread, the whole process spent
// ~2.3 µs per attempt on the clone against ~3.5 µs to JSON.stringify them on the main thread and
// JSON.parse them on the thread (docs/executor.md § Calls in bulk). Results leave as ready-to-send
// frames, or as CallsCompleted entries for the main thread to join.

import { SEQ_MASK } from './core/pool-calls.js';
import type { BatchedCallIn, CallPageInfo, CallTask, WaitError } from './protocol.js';

export { SEQ_MASK, seqBefore } from './core/pool-calls.js';

/** Main → thread. Applied in this order: modules, slices (their attempts in order), then controls. */
export interface MainToThreadBatch {
  readonly modules: ThreadModule[];
  /** Attempts to start, in the order of their exec sequence numbers. */
  readonly slices: ExecSlice[];
  readonly controls: ThreadControl[];
}

/**
 * Attempts of one task that run the same module, sent to one thread together, in the order of their
 * exec sequence numbers. One attempt is index `i` of the three arrays: parallel arrays of strings and
 * numbers clone in about half the time of an object per attempt (measured with the demo's rows, 256
 * attempts a slice: ~0.85 against ~1.7 µs per attempt to serialise and deserialise).
 */
export interface ExecSlice {
  readonly task: CallTask;
  readonly moduleKey: string;
  readonly callIds: string[];
  readonly attempts: number[];
  /**
   * Each attempt's arguments, or their JSON text (an `argsJson` entry) or its UTF-8 (an `argsAt` entry,
   * its own copy of the bytes), which the thread parses.
   */
  readonly args: (readonly unknown[] | string | Uint8Array)[];
  /** The page fields of the attempts that are pages, at their index (docs/executor.md § Pages); made on the first. */
  pages?: (CallPageInfo | undefined)[];
}

/** Appends one attempt to a slice (its ExecuteCalls entry, or its ExecuteCall's fields). */
export function pushExec(slice: ExecSlice, entry: BatchedCallIn): void {
  slice.callIds.push(entry.callId);
  slice.attempts.push(entry.attempt);
  slice.args.push('args' in entry ? entry.args : 'argsJson' in entry ? entry.argsJson : entry.argsBytes);
  if (entry.page !== undefined) (slice.pages ??= [])[slice.callIds.length - 1] = entry.page;
}

/** A compiled module, announced once per thread before its first call. */
export interface ThreadModule {
  readonly moduleKey: string;
  readonly url: string;
  readonly code: string;
  readonly path: string;
}

export type ThreadControl =
  | { readonly t: 'cancel'; readonly callId: string; readonly attempt: number; readonly reason: string }
  | {
      readonly t: 'resume';
      readonly callId: string;
      readonly attempt: number;
      readonly requestId: number;
      readonly ok: boolean;
      readonly value?: unknown;
      readonly error?: WaitError;
    }
  | { readonly t: 'dropIoCache'; readonly ioCache: string };

/** What happened to one attempt, in `ThreadToMainBatch.kinds`. */
export const ThreadEvent = {
  /** A CallWaiting frame. */
  Waiting: 1,
  /** A CallCompleted or CallFailed frame; the attempt is over on this thread. */
  Done: 2,
  /** A CallsCompleted entry (its task asked for bulk results); the attempt is over on this thread. */
  Completed: 3,
} as const;
export type ThreadEvent = (typeof ThreadEvent)[keyof typeof ThreadEvent];

/**
 * Thread → main. `keys[i]` is the attempt key of `frames[i]` (a frame, or a CallsCompleted entry when
 * `kinds[i]` is Completed); order is preserved.
 */
export interface ThreadToMainBatch {
  /** Set once, when the thread has loaded its runtime and takes calls. */
  readonly ready: boolean;
  readonly kinds: ThreadEvent[];
  readonly keys: string[];
  readonly frames: string[];
  /** JSON log lines for the executor's stderr. */
  readonly logs: string[];
}

export interface ThreadData {
  readonly hooksUrl: string;
  readonly runnerUrl: string;
  readonly maxFrameBytes: number;
  /** Read copies the thread keeps (read-copies.ts); 0: none. */
  readonly readCopyMaxEntries: number;
  readonly threadIndex: number;
  /** task: lock down and freeze before any function loads, one module instance per task (task-isolation.ts). */
  readonly isolation: 'task' | 'none';
  /** Shared with the main thread: see `ThreadSignals`. */
  readonly signals: SharedArrayBuffer;
}

// ---- shared memory: pickups and liveness --------------------------------------------------------------
//
// Each thread shares one small SharedArrayBuffer with the main thread, so the main thread can see what a
// thread is doing even while that thread is stuck in a loop and cannot post anything:
//  - CLAIM, the next exec sequence number the thread may start. The main thread numbers the execs it
//    sends to a thread 0, 1, 2… (31-bit, wrapping); the thread starts exec `s` only if it moves CLAIM from
//    `s` to `s + 1` (compare-and-swap). The main thread takes back every exec it sent but the thread has
//    not started by moving CLAIM to its next sequence number; the thread then skips those. One CAS on one
//    word, so an exec is either started by the thread or taken back by the main thread, never both.
//  - BEAT, the thread's clock (`monoMs`) when its event loop last ran: a timer, every batch in and out.
//  - a ring of pickup times, so the main thread's CallStarted says how long the call has really run.
//  - MEM, the thread's heap used plus external memory in MiB, for the memory bound (memory-watch.ts).

const CLAIM = 0;
const BEAT = 1;
const MEM = 2;
const CONTROL_SLOTS = 3;
/** Pickup times kept per thread (a power of two); older ones fall back to the dispatch time. */
const RING = 4096;

/** The views over one thread's shared buffer. */
export interface ThreadSignals {
  readonly control: Int32Array;
  readonly ringSeq: Int32Array;
  readonly ringTime: Int32Array;
}

export function newSignalsBuffer(): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * (CONTROL_SLOTS + 2 * RING));
  signalViews(sab).ringSeq.fill(-1);
  return sab;
}

export function signalViews(sab: SharedArrayBuffer): ThreadSignals {
  const size = Int32Array.BYTES_PER_ELEMENT;
  return {
    control: new Int32Array(sab, 0, CONTROL_SLOTS),
    ringSeq: new Int32Array(sab, size * CONTROL_SLOTS, RING),
    ringTime: new Int32Array(sab, size * (CONTROL_SLOTS + RING), RING),
  };
}

// Every thread of a process reads the same monotonic clock through process.hrtime; performance.now() is
// relative to each thread's own start. So: the hrtime clock, in whole ms, wrapped to 32 bits (compare
// with `ageMs`).
const MONO_OFFSET = Number(process.hrtime.bigint() / 1000n) / 1000 - performance.now();

export function monoMs(): number {
  return monoAt(performance.now());
}

/** The `monoMs` reading that goes with a `performance.now()` reading of this thread (one clock read). */
export function monoAt(perfNowMs: number): number {
  return Math.floor(perfNowMs + MONO_OFFSET) | 0;
}

/** `now - then` for two `monoMs` readings (wrap-safe). */
export function ageMs(now: number, then: number): number {
  return (now - then) | 0;
}

/** Thread side: try to start exec `seq`; false if the main thread took it back. */
export function claimExec(s: ThreadSignals, seq: number, now: number): boolean {
  if (Atomics.compareExchange(s.control, CLAIM, seq, (seq + 1) & SEQ_MASK) !== seq) return false;
  const i = seq & (RING - 1);
  Atomics.store(s.ringSeq, i, -1);
  Atomics.store(s.ringTime, i, now);
  Atomics.store(s.ringSeq, i, seq);
  return true;
}

/** Thread side: the event loop is running. */
export function beat(s: ThreadSignals, now: number): void {
  Atomics.store(s.control, BEAT, now);
}

/** Thread side: the memory the thread holds now (heap used + external, MiB). */
export function publishMemory(s: ThreadSignals, mb: number): void {
  Atomics.store(s.control, MEM, Math.min(0x7fffffff, Math.max(0, Math.round(mb))));
}

/** Main side: the memory the thread last published (MiB). */
export function lastMemoryMb(s: ThreadSignals): number {
  return Atomics.load(s.control, MEM);
}

/** Main side: the thread's last beat. */
export function lastBeat(s: ThreadSignals): number {
  return Atomics.load(s.control, BEAT);
}

/** Main side: the first exec sequence number the thread has neither started nor skipped. */
export function claimedUpTo(s: ThreadSignals): number {
  return Atomics.load(s.control, CLAIM);
}

/**
 * Main side: take back every exec sent (below `sent`) that the thread has not started. Returns the first
 * sequence number taken back (`sent` if none): execs from there on will never run on this thread.
 */
export function revokeUnclaimed(s: ThreadSignals, sent: number): number {
  for (;;) {
    const w = Atomics.load(s.control, CLAIM);
    if (w === sent) return sent;
    if (Atomics.compareExchange(s.control, CLAIM, w, sent) === w) return w;
  }
}

/** Main side: when the thread picked up exec `seq` (`monoMs`), if the ring still has it. */
export function pickupTime(s: ThreadSignals, seq: number): number | undefined {
  const i = seq & (RING - 1);
  if (Atomics.load(s.ringSeq, i) !== seq) return undefined;
  const t = Atomics.load(s.ringTime, i);
  return Atomics.load(s.ringSeq, i) === seq ? t : undefined;
}
