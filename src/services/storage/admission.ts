// Backend admission: at most `capacity` storage operations at once, per backend. A caller that finds no
// free permit queues (FIFO, no barging) for at most `waitMs`, then fails with OVERLOADED, a retryable
// error the task IO scope backs off on, instead of piling unbounded work onto the database. Aborting the
// caller's signal while it waits fails it with CANCELLED and removes it from the queue at once.
//
// A transaction holds one permit for its whole duration; a scan holds one only while it fetches a page.
// The same class, with capacity 1, serves as the SQLite connection lock (see sqlite-backend.ts).

import { StorageError, StorageErrorCode } from './errors.js';

/** Gives the permit back. Idempotent. */
export type Release = () => void;

export interface AdmissionSnapshot {
  readonly inUse: number;
  readonly waiting: number;
  readonly capacity: number;
}

interface Waiter {
  readonly grant: (release: Release) => void;
  readonly fail: (err: StorageError) => void;
  readonly tag: string | undefined;
}

export interface AcquireOptions {
  readonly signal?: AbortSignal | undefined;
  /** Overrides the admission's `waitMs` for this caller (e.g. the time left of a shared deadline). */
  readonly waitMs?: number | undefined;
  /** The table the operation is about, for error details. */
  readonly table?: string | undefined;
  /** What kind of work waits, for `nextTag()` (the SQLite group commit asks whether a write is next). */
  readonly tag?: string | undefined;
}

export class Admission {
  private used = 0;
  // A Set keeps insertion order (FIFO) and deletes a cancelled waiter in O(1).
  private readonly queue = new Set<Waiter>();
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly capacity: number,
    readonly waitMs: number,
    /** Names the backend (its display URL) in errors. */
    private readonly backend: string,
    /** What is being admitted, for messages: "storage operation", "SQLite connection". */
    private readonly what = 'storage operation',
  ) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0)
      throw new RangeError(`admission capacity must be a positive integer, got ${capacity}`);
  }

  get snapshot(): AdmissionSnapshot {
    return { inUse: this.used, waiting: this.queue.size, capacity: this.capacity };
  }

  /** Resolves with a release function once a permit is free; see the header for the failure modes. */
  acquire(opts: AcquireOptions = {}): Promise<Release> {
    const { signal } = opts;
    const where = opts.table === undefined ? {} : { table: opts.table };
    if (this.closed) return Promise.reject(this.closedError(where));
    if (signal?.aborted) return Promise.reject(this.cancelledError(signal, where));
    if (this.used < this.capacity && this.queue.size === 0) {
      this.used++;
      return Promise.resolve(this.releaser());
    }
    const waitMs = Math.max(0, opts.waitMs ?? this.waitMs);
    return new Promise<Release>((resolve, reject) => {
      const cleanup = (): void => {
        this.queue.delete(waiter);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        grant: (release) => {
          cleanup();
          resolve(release);
        },
        fail: (err) => {
          cleanup();
          reject(err);
        },
        tag: opts.tag,
      };
      const onAbort = (): void => waiter.fail(this.cancelledError(signal, where));
      const timer = setTimeout(
        () =>
          waiter.fail(
            new StorageError(
              StorageErrorCode.OVERLOADED,
              `no ${this.what} slot free within ${waitMs} ms (${this.capacity} in use) on ${this.backend}`,
              { backend: this.backend, ...where },
            ),
          ),
        waitMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.add(waiter);
    });
  }

  /** The tag of the oldest waiter: the one a release hands the permit to next (undefined: none waits). */
  nextTag(): string | undefined {
    return this.queue.values().next().value?.tag;
  }

  /** Fails every waiter with CLOSED and refuses new callers; held permits are still released normally. */
  close(): void {
    this.closed = true;
    for (const waiter of [...this.queue]) waiter.fail(this.closedError());
  }

  /** Resolves once no permit is held (immediately when none is). */
  whenIdle(): Promise<void> {
    if (this.used === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.values().next();
      if (!next.done) {
        // The permit passes straight to the oldest waiter: `used` stays the same.
        next.value.grant(this.releaser());
        return;
      }
      this.used--;
      if (this.used === 0 && this.idleWaiters.length > 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of waiters) resolve();
      }
    };
  }

  private closedError(where: { table?: string } = {}): StorageError {
    return new StorageError(StorageErrorCode.CLOSED, `storage backend ${this.backend} is closed`, {
      backend: this.backend,
      ...where,
    });
  }

  private cancelledError(signal: AbortSignal | undefined, where: { table?: string }): StorageError {
    return new StorageError(
      StorageErrorCode.CANCELLED,
      `storage operation cancelled while waiting for admission on ${this.backend}`,
      { backend: this.backend, cause: signal?.reason, ...where },
    );
  }
}
