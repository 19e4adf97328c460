// Who waits on the thread pool (thread-pool.ts): for every initial thread to be ready, and for no call
// to be in flight (a graceful shutdown).

export class PoolWaiters {
  private readyWaiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];

  /** Resolves once `notifyReady` is called (or now, when `allReady`). */
  ready(allReady: boolean): Promise<void> {
    if (allReady) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  notifyReady(): void {
    for (const w of this.readyWaiters.splice(0)) w();
  }

  /** Resolves true once no call is in flight (`inflight()` is 0), or false after `timeoutMs`. */
  drained(inflight: () => number, timeoutMs: number): Promise<boolean> {
    if (inflight() === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.drainWaiters = this.drainWaiters.filter((w) => w !== onDrained);
        resolve(inflight() === 0);
      }, timeoutMs);
      const onDrained = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      this.drainWaiters.push(onDrained);
    });
  }

  notifyDrained(inflight: number): void {
    if (inflight > 0 || this.drainWaiters.length === 0) return;
    for (const w of this.drainWaiters.splice(0)) w();
  }
}
