// TokenBucket: the requests-per-second limit of one RPC source in one process (docs/ingest.md § The RPC access
// layer). Sans-IO: `now` is an argument, no clock, no timers.
//
// Theory of operation. A bucket holds at most `burst` tokens and gains `ratePerSecond` tokens a second; a
// request takes one token to go. So over any window of W ms at most burst + ratePerSecond · W / 1000
// requests go, and after a quiet spell `burst` may go back to back (burst 1: evenly spaced sends).
// It is kept in the form of the generic cell rate algorithm: instead of a token count that would drift
// with floating-point refills, one number, `fullAt` — the time at which the bucket is full again. With an
// emission interval T = 1000 / ratePerSecond, a take at `now` is allowed iff now ≥ fullAt − (burst − 1) · T
// (at least one token left), and moves fullAt to max(fullAt, now) + T. `nextAt` returns that very
// expression, so waking at it always passes.
// New limits (`reconfigure`) keep the tokens spent: the debt fullAt − now is converted from the old
// interval to the new one, and capped at the new bucket's size.

export interface TokenBucketLimits {
  /** Tokens gained per second; 0 = no limit (every take is allowed). */
  readonly ratePerSecond: number;
  /** Tokens the bucket holds at most (≥ 1): requests that may go back to back after a quiet spell. */
  readonly burst: number;
}

export class TokenBucketError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenBucketError';
  }
}

export class TokenBucket {
  /** When the bucket is full again; at or before `now` it is full. */
  private fullAt = -Infinity;
  private intervalMs = 0;
  private toleranceMs = 0;

  constructor(limits: TokenBucketLimits) {
    this.apply(limits);
  }

  /** Whether a take at `now` is allowed (without taking). */
  allows(now: number): boolean {
    // The same expression as nextAt, so a wake-up at nextAt always passes (no rounding in between).
    return now >= this.nextAt();
  }

  /** Takes a token at `now`; throws when none is left (ask `allows` or `nextAt` first). */
  take(now: number): void {
    if (!this.allows(now)) throw new TokenBucketError(`no token at ${now}: the next is at ${this.nextAt()}`);
    if (this.intervalMs > 0) this.fullAt = Math.max(this.fullAt, now) + this.intervalMs;
  }

  /** The earliest time a take is allowed (−Infinity when one is allowed at any time). */
  nextAt(): number {
    return this.intervalMs === 0 ? -Infinity : this.fullAt - this.toleranceMs;
  }

  /** New limits from `now` on; the tokens already spent stay spent (capped at the new size). */
  reconfigure(limits: TokenBucketLimits, now: number): void {
    const spentTokens = this.intervalMs === 0 ? 0 : Math.max(0, this.fullAt - now) / this.intervalMs;
    this.apply(limits);
    this.fullAt =
      this.intervalMs === 0 || spentTokens === 0
        ? -Infinity
        : now + Math.min(spentTokens, limits.burst) * this.intervalMs;
  }

  private apply(limits: TokenBucketLimits): void {
    if (!(Number.isFinite(limits.ratePerSecond) && limits.ratePerSecond >= 0)) {
      throw new TokenBucketError(`ratePerSecond must be a number ≥ 0, got ${limits.ratePerSecond}`);
    }
    if (!Number.isInteger(limits.burst) || limits.burst < 1) {
      throw new TokenBucketError(`burst must be an integer ≥ 1, got ${limits.burst}`);
    }
    this.intervalMs = limits.ratePerSecond > 0 ? 1000 / limits.ratePerSecond : 0;
    this.toleranceMs = (limits.burst - 1) * this.intervalMs;
  }
}
