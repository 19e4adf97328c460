// The heartbeat's `errorRate` (DESIGN §4.4: "share of recent tasks that failed", a fraction 0..1): a
// fixed window over the last N terminal tasks, O(1) per record. The Coordinator stops routing to a
// worker above its error-rate red line, so a short burst of failures is forgotten after N tasks.

export class ErrorRateWindow {
  private readonly outcomes: Uint8Array;
  private next = 0;
  private filled = 0;
  private failures = 0;

  constructor(readonly size: number) {
    if (!Number.isSafeInteger(size) || size <= 0)
      throw new RangeError(`window size must be > 0, got ${size}`);
    this.outcomes = new Uint8Array(size);
  }

  record(failed: boolean): void {
    const value = failed ? 1 : 0;
    if (this.filled === this.size) this.failures -= this.outcomes[this.next] ?? 0;
    else this.filled++;
    this.outcomes[this.next] = value;
    this.failures += value;
    this.next = (this.next + 1) % this.size;
  }

  /** Failed share of the recorded tasks; 0 before any. */
  get rate(): number {
    return this.filled === 0 ? 0 : this.failures / this.filled;
  }
}
