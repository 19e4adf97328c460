// Cheap cancellation for hot paths: `CancelSignal` is the part of AbortSignal that BlockX's call paths
// use, and `DeadlineQueue` one shared timer for many deadlines.
//
// Why not an AbortController per call: on Node 20 one controller with one listener costs 6-8 µs and an
// EventTarget's worth of garbage, paid by every reservation the Coordinator serves although almost none
// is ever cancelled. The Coordinator hands its Worker calls a CancelSignal over the gRPC call itself
// (src/grpc/server.ts `cancelSignalOf`); an AbortSignal is still a CancelSignal, so callers holding one
// (the TypeScript client, tests) pass it unchanged.

/** What a cancellable operation reads and listens to. Every AbortSignal is one. */
export interface CancelSignal {
  readonly aborted: boolean;
  /** `listener` runs once, when the signal aborts. Adding to an aborted signal never runs it. */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** One deadline in a DeadlineQueue; pass it back to `remove`. */
export interface DeadlineEntry {
  readonly at: number;
  readonly onExpire: () => void;
}

export interface DeadlineQueueOptions {
  /** Milliseconds, the clock deadlines are given in (default Date.now). */
  readonly clock?: () => number;
  /** Timer functions (default the global ones); tests pass fakes. */
  readonly setTimer?: (fn: () => void, ms: number) => { unref?(): unknown };
  readonly clearTimer?: (timer: { unref?(): unknown }) => void;
}

/**
 * Many deadlines, one OS timer. `add` costs a set insertion; `remove` (the usual end: the operation
 * finished in time) a deletion, and never touches the timer. The timer is armed for the earliest
 * deadline known when it was armed; when it fires, every entry that is due expires (its `onExpire` runs
 * once, after it has left the queue) and the timer is re-armed for the earliest one left, if any. Under
 * steady traffic whose operations finish in time it therefore fires about once per timeout, however many
 * operations ran. The timer is unref'd: pending deadlines never keep the process alive.
 *
 * Expiry is never early, and late only by the event loop's own delay.
 */
export class DeadlineQueue {
  private readonly entries = new Set<DeadlineEntry>();
  private readonly clock: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => { unref?(): unknown };
  private readonly clearTimer: (timer: { unref?(): unknown }) => void;
  private timer: { unref?(): unknown } | undefined;
  private armedAt = Number.POSITIVE_INFINITY;

  constructor(opts: DeadlineQueueOptions = {}) {
    this.clock = opts.clock ?? Date.now;
    this.setTimer = opts.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer = opts.clearTimer ?? ((t) => clearTimeout(t as NodeJS.Timeout));
  }

  /** Pending deadlines. */
  get size(): number {
    return this.entries.size;
  }

  /** Runs `onExpire` once at `at` (clock ms) unless the entry is removed first. */
  add(at: number, onExpire: () => void): DeadlineEntry {
    const entry: DeadlineEntry = { at, onExpire };
    this.entries.add(entry);
    if (at < this.armedAt) this.arm(at);
    return entry;
  }

  /** The operation ended first: its deadline no longer applies. */
  remove(entry: DeadlineEntry): void {
    this.entries.delete(entry);
  }

  private arm(at: number): void {
    if (this.timer !== undefined) this.clearTimer(this.timer);
    this.armedAt = at;
    this.timer = this.setTimer(() => this.fire(), Math.max(0, at - this.clock()));
    this.timer.unref?.();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = this.clock();
    const due: DeadlineEntry[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.entries) {
      if (entry.at <= now) due.push(entry);
      else if (entry.at < next) next = entry.at;
    }
    for (const entry of due) this.entries.delete(entry);
    if (next !== Number.POSITIVE_INFINITY && next < this.armedAt) this.arm(next);
    // After the re-arm, so an onExpire that adds an earlier deadline re-arms the timer for it.
    for (const entry of due) entry.onExpire();
  }
}
