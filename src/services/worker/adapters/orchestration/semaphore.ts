// A counting semaphore for the phase-level admission of docs/task-lifecycle.md § The three phases
// (`builderSem`, `executorSem`, `pluginSem`, `scanSem`).
//
// - FIFO and fair: a released permit goes straight to the oldest waiter, so a steady stream of new
//   acquirers can never starve one that waits (no barging: a new acquirer queues behind waiters even
//   when a permit is momentarily free).
// - Cancellable: `acquire(signal)` rejects with the signal's reason when it aborts while waiting, and
//   the waiter leaves the queue at once.
// - O(1) everything: waiters form a doubly linked list, so acquire, release and cancel never scan.
// - A release function works once; calling it again is a no-op (a `finally` that runs twice cannot
//   inflate the permit count).

/** Gives the permit back. Idempotent. */
export type Release = () => void;

interface Waiter {
  resolve: (release: Release) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  prev: Waiter | undefined;
  next: Waiter | undefined;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('semaphore acquire aborted', 'AbortError');
}

export class Semaphore {
  private permits: number;
  private head: Waiter | undefined;
  private tail: Waiter | undefined;
  private queued = 0;

  constructor(
    /** For logs and errors, e.g. `executorSem`. */
    readonly name: string,
    /** Total permits. */
    readonly capacity: number,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity <= 0) {
      throw new RangeError(`semaphore ${name}: capacity must be a positive integer, got ${capacity}`);
    }
    this.permits = capacity;
  }

  /** Free permits right now. */
  get available(): number {
    return this.permits;
  }

  /** Permits held. */
  get inUse(): number {
    return this.capacity - this.permits;
  }

  /** Acquirers waiting for a permit. */
  get waiting(): number {
    return this.queued;
  }

  /** A permit now, or undefined (never jumps the queue). */
  tryAcquire(): Release | undefined {
    if (this.permits > 0 && this.head === undefined) {
      this.permits--;
      return this.releaser();
    }
    return undefined;
  }

  /** Resolves with a release function once a permit is free; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const now = this.tryAcquire();
    if (now !== undefined) return Promise.resolve(now);
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: undefined,
        prev: this.tail,
        next: undefined,
      };
      if (this.tail === undefined) this.head = waiter;
      else this.tail.next = waiter;
      this.tail = waiter;
      this.queued++;
      if (signal !== undefined) {
        waiter.onAbort = () => {
          this.unlink(waiter);
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
    });
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.handOff();
    };
  }

  /** A permit came back: give it to the oldest waiter, or return it to the pool. */
  private handOff(): void {
    const waiter = this.head;
    if (waiter === undefined) {
      this.permits++;
      return;
    }
    this.unlink(waiter);
    waiter.resolve(this.releaser());
  }

  private unlink(waiter: Waiter): void {
    if (waiter.prev === undefined) this.head = waiter.next;
    else waiter.prev.next = waiter.next;
    if (waiter.next === undefined) this.tail = waiter.prev;
    else waiter.next.prev = waiter.prev;
    waiter.prev = undefined;
    waiter.next = undefined;
    this.queued--;
    if (waiter.signal !== undefined && waiter.onAbort !== undefined) {
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      waiter.onAbort = undefined;
    }
  }
}

/** The phase-level admission semaphores of one worker (docs/task-lifecycle.md § The three phases). */
export interface AdmissionSemaphores {
  readonly builderSem: Semaphore;
  readonly executorSem: Semaphore;
  readonly pluginSem: Semaphore;
  /** For the streaming builder (BlockBundleCallConfig); nothing takes it until that builder lands. */
  readonly scanSem: Semaphore;
}

export interface AdmissionSlots {
  readonly builderSlots: number;
  readonly executorTaskSlots: number;
  readonly pluginSlots: number;
  readonly scanSlots: number;
}

/** The defaults of docs/task-lifecycle.md § Defaults. */
export const DEFAULT_ADMISSION_SLOTS: AdmissionSlots = Object.freeze({
  builderSlots: 16,
  executorTaskSlots: 32,
  pluginSlots: 16,
  scanSlots: 8,
});

export function createAdmissionSemaphores(
  slots: AdmissionSlots = DEFAULT_ADMISSION_SLOTS,
): AdmissionSemaphores {
  return {
    builderSem: new Semaphore('builderSem', slots.builderSlots),
    executorSem: new Semaphore('executorSem', slots.executorTaskSlots),
    pluginSem: new Semaphore('pluginSem', slots.pluginSlots),
    scanSem: new Semaphore('scanSem', slots.scanSlots),
  };
}
