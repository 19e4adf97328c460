// RwLock: the Coordinator's single synchronisation point (docs/coordinator.md § ReserveWorkerSlot). The
// CoordinatorCore has no lock of its own; the handler selects candidates under the read lock and records
// feedback under the write lock, and the watcher applies registry changes under the write lock.
//
// Node runs one thread, so today every critical section is a synchronous core call and can never
// interleave with another. The lock still exists so that the rule "the core is touched only under the
// lock" is explicit and stays true if a critical section ever awaits: it is async-safe (FIFO, writers are
// not starved), and an uncontended acquisition runs the section synchronously, before `read`/`write`
// return, so the order of calls is the order of effects.

type Waiter = { readonly kind: 'read' | 'write'; readonly grant: () => void };

export class RwLock {
  private readers = 0;
  private writer = false;
  private readonly queue: Waiter[] = [];

  /** Runs `fn` under the shared lock. */
  read<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.run('read', fn);
  }

  /** Runs `fn` under the exclusive lock. */
  write<T>(fn: () => T | Promise<T>): Promise<T> {
    return this.run('write', fn);
  }

  /** For tests and diagnostics. */
  get state(): { readers: number; writer: boolean; waiting: number } {
    return { readers: this.readers, writer: this.writer, waiting: this.queue.length };
  }

  private run<T>(kind: 'read' | 'write', fn: () => T | Promise<T>): Promise<T> {
    if (this.queue.length === 0 && this.canEnter(kind)) {
      this.enter(kind);
      return this.execute(kind, fn);
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        kind,
        grant: () => {
          this.execute(kind, fn).then(resolve, reject);
        },
      });
    });
  }

  private canEnter(kind: 'read' | 'write'): boolean {
    return kind === 'read' ? !this.writer : !this.writer && this.readers === 0;
  }

  private enter(kind: 'read' | 'write'): void {
    if (kind === 'read') this.readers += 1;
    else this.writer = true;
  }

  /** Runs `fn` (already entered), releases when it settles. */
  private execute<T>(kind: 'read' | 'write', fn: () => T | Promise<T>): Promise<T> {
    let result: T | Promise<T>;
    try {
      result = fn();
    } catch (err) {
      this.release(kind);
      return Promise.reject(err);
    }
    if (!(result instanceof Promise)) {
      this.release(kind);
      return Promise.resolve(result);
    }
    return result.finally(() => this.release(kind));
  }

  private release(kind: 'read' | 'write'): void {
    if (kind === 'read') this.readers -= 1;
    else this.writer = false;
    // Admit waiters in FIFO order: one writer, or every reader up to the next writer.
    while (this.queue.length > 0) {
      const next = this.queue[0] as Waiter;
      if (!this.canEnter(next.kind)) return;
      this.queue.shift();
      this.enter(next.kind);
      next.grant();
      if (next.kind === 'write') return;
    }
  }
}
