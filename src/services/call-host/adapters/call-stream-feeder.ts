// Feeds a streaming builder's calls into a task's Calls phase (docs/task-lifecycle.md § The three phases:
// BlockBundleCallConfig with `stream.enabled`: the scan moves into the Calls phase and calls are dispatched
// while it continues).
//
// The feeder pulls calls from the builder's async iterator and appends them to the dispatcher in small
// batches. Memory stays bounded whatever the scan size: it stops pulling while the task has
// `highWater` root calls handed over but not yet dispatched, and resumes when the dispatcher has
// worked that backlog down to `lowWater` (the runner calls `progress()` after each burst of executor
// events). It stops for good as soon as the task is no longer appending (converged early: a call
// failed, timeout, cancellation), closing the iterator so the scan releases its cursor.

import type { CallSpec } from '../../../kernel/plugin-types.js';

/** What the feeder needs of the runner that owns the task's dispatch state. */
export interface StreamTarget {
  /** Whether the task is still in its Calls phase and accepts calls. */
  isAppending(taskId: string): boolean;
  /** Root calls handed over and not yet dispatched. */
  rootsPending(taskId: string): number;
  append(taskId: string, calls: readonly CallSpec[]): void;
  finish(taskId: string): void;
}

export interface StreamFeederOptions {
  /** Calls per append. Default 64. */
  readonly batch?: number;
  /** Stop pulling at this many undispatched root calls. Default 2048. */
  readonly highWater?: number;
}

/** How the feed ended: `error` is the iterator's (the scan's) failure, if any. */
export interface StreamFeedResult {
  readonly error?: unknown;
}

export class CallStreamFeeder {
  private readonly waiters = new Map<string, () => void>();
  private readonly batch: number;
  private readonly highWater: number;
  private readonly lowWater: number;

  constructor(
    private readonly target: StreamTarget,
    options: StreamFeederOptions = {},
  ) {
    this.batch = options.batch ?? 64;
    this.highWater = options.highWater ?? 2048;
    this.lowWater = Math.floor(this.highWater / 2);
  }

  /** Streaming tasks waiting for their backlog to shrink. */
  get waiting(): number {
    return this.waiters.size;
  }

  /** Called by the runner after it applied dispatcher commands: wakes feeders whose backlog shrank. */
  progress(): void {
    if (this.waiters.size === 0) return;
    for (const [taskId, wake] of this.waiters) {
      if (!this.target.isAppending(taskId) || this.target.rootsPending(taskId) <= this.lowWater) {
        this.waiters.delete(taskId);
        wake();
      }
    }
  }

  /** Pulls `source` into the task until it ends, fails, or the task stops appending. Never rejects. */
  async feed(taskId: string, source: AsyncIterable<CallSpec>): Promise<StreamFeedResult> {
    const target = this.target;
    const it = source[Symbol.asyncIterator]();
    let pending: CallSpec[] = [];
    let exhausted = false;
    try {
      for (;;) {
        if (!target.isAppending(taskId)) break;
        if (target.rootsPending(taskId) >= this.highWater) {
          if (pending.length > 0) {
            target.append(taskId, pending);
            pending = [];
          }
          await new Promise<void>((resolve) => this.waiters.set(taskId, resolve));
          continue;
        }
        const r = await it.next();
        if (r.done === true) {
          exhausted = true;
          break;
        }
        pending.push(r.value);
        if (pending.length >= this.batch && target.isAppending(taskId)) {
          target.append(taskId, pending);
          pending = [];
        }
      }
      if (exhausted && target.isAppending(taskId)) {
        if (pending.length > 0) target.append(taskId, pending);
        target.finish(taskId);
      }
      return {};
    } catch (error) {
      return { error };
    } finally {
      this.waiters.delete(taskId);
      // Stopped early: let the scan release its cursor (errors on the way out do not matter).
      if (!exhausted) await Promise.resolve(it.return?.()).catch(() => undefined);
    }
  }
}
