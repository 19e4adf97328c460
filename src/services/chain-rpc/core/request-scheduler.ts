// RequestScheduler: when each HTTP request to one RPC source goes out, where, and what happens when it fails.
// Sans-IO: no clock, no timers, no randomness of its own (docs/ingest.md § The RPC access layer).
//
// Theory of operation. A caller submits a request (one HTTP POST: a single JSON-RPC call or a batch); the
// scheduler answers with commands. A request waits in a FIFO queue until three gates are open:
//   - concurrency: fewer than `maxConcurrent` attempts in flight for the source;
//   - rate: the source's token bucket (./token-bucket.ts) has a token: at most `burst` sends back to back,
//     then `requestsPerSecond` a second (burst 1: sends at least 1000 / requestsPerSecond ms apart);
//   - pause: `now` is past the pause a 429 with Retry-After set for the whole source.
// Then it leaves as `send` with its attempt number, the endpoint to use (attempt k goes to endpoint
// (k − 1) mod endpoints: the primary URL first, the fallback on the next attempt, and so on) and its
// timeout. The driver reports each attempt's outcome:
//   - ok → `resolve`;
//   - a retryable failure (timeout, connection error, an unreadable body, HTTP 429, HTTP 5xx) → the request waits out a
//     backoff, then joins the queue's head again; after `maxAttempts` attempts → `fail` with the last cause;
//   - a fatal failure (any other HTTP status, an answer that is not JSON-RPC) → `fail` at once.
// Backoff is "full jitter": uniform in [0, min(maxBackoffMs, initialBackoffMs · 2^(attempt − 1))), drawn with
// the injected `random`; a Retry-After longer than that wins, and also pauses the whole source (a 429 is about
// the source, not one request). Timers are data: `nextDeadline()` is the earliest backoff end, pause end or
// rate slot that a queued request waits for; the driver arms one OS timer and calls `tick(now)`.
// One scheduler serves every task of a process that reads the source (adapters/shared-clients.ts), so the
// limits hold per process; `reconfigure` takes new limits without losing what is queued, in flight or spent.
//
// Invariants (test/unit/services/chain-rpc/core/request-scheduler.test.ts checks them as properties): at most
// maxConcurrent attempts in flight; at most burst + requestsPerSecond · W / 1000 sends in any window of W ms;
// no send before a pause ends; every submitted request ends in exactly one resolve or fail; at most maxAttempts attempts each.

import { TokenBucket } from './token-bucket.js';

export interface SchedulerLimits {
  /** Attempts in flight at once for this source. */
  readonly maxConcurrent: number;
  /** Sends per second for this source; 0 = unlimited. */
  readonly requestsPerSecond: number;
  /** Sends that may go back to back after a quiet spell (the token bucket's size, ≥ 1). */
  readonly burst: number;
  /** Per-attempt timeout handed to the driver with each send. */
  readonly timeoutMs: number;
  /** Attempts per request, the first included. */
  readonly maxAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /** How many URLs the source has (1, or 2 with a fallback). */
  readonly endpoints: number;
}

/** Why an attempt failed, as the driver classifies it. */
export type AttemptFailure =
  | { readonly kind: 'timeout' }
  | { readonly kind: 'connection' }
  /** HTTP 200 with a body that is not JSON or not every answer (a cut connection, a truncated body). */
  | { readonly kind: 'malformed' }
  | { readonly kind: 'http'; readonly status: number; readonly retryAfterMs?: number }
  | { readonly kind: 'fatal' };

export type SchedulerInput =
  | { readonly type: 'submit'; readonly id: number; readonly now: number }
  | { readonly type: 'succeeded'; readonly id: number; readonly now: number }
  | { readonly type: 'failed'; readonly id: number; readonly failure: AttemptFailure; readonly now: number }
  | { readonly type: 'tick'; readonly now: number };

export type SchedulerCommand =
  | {
      readonly type: 'send';
      readonly id: number;
      readonly attempt: number;
      readonly endpoint: number;
      readonly timeoutMs: number;
    }
  | { readonly type: 'resolve'; readonly id: number; readonly attempts: number }
  | {
      readonly type: 'fail';
      readonly id: number;
      readonly attempts: number;
      readonly failure: AttemptFailure;
      /** Whether the cause was retryable (so a caller knows a later try may work). */
      readonly retryable: boolean;
    };

export class SchedulerInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchedulerInputError';
  }
}

/** Whether an attempt failing this way may be tried again. */
export function isRetryableFailure(failure: AttemptFailure): boolean {
  switch (failure.kind) {
    case 'timeout':
    case 'connection':
    case 'malformed':
      return true;
    case 'http':
      return failure.status === 429 || (failure.status >= 500 && failure.status <= 599);
    case 'fatal':
      return false;
    default:
      return exhaustive(failure);
  }
}

interface Entry {
  /** Attempts sent so far. */
  attempts: number;
  /** When its backoff ends (waiting for a retry), else undefined (queued or in flight). */
  retryAt: number | undefined;
  inFlight: boolean;
}

export class RequestScheduler {
  private readonly entries = new Map<number, Entry>();
  /** Requests ready to send, in order (fresh ones at the tail, retries at the head once their backoff ends). */
  private readonly queue: number[] = [];
  private inFlight = 0;
  private pausedUntil = -Infinity;
  private readonly bucket: TokenBucket;

  constructor(
    private limits: SchedulerLimits,
    /** Uniform in [0, 1): the jitter source. */
    private readonly random: () => number,
  ) {
    checkLimits(limits);
    this.bucket = new TokenBucket({ ratePerSecond: limits.requestsPerSecond, burst: limits.burst });
  }

  /**
   * New limits from `now` on (a task of the process asked for other ones): what is queued or in flight
   * stays, the tokens spent stay spent, and the sends the new limits allow go at once. The number of
   * endpoints cannot change: a request's next endpoint follows from its attempts.
   */
  reconfigure(limits: SchedulerLimits, now: number): SchedulerCommand[] {
    checkLimits(limits);
    if (limits.endpoints !== this.limits.endpoints) {
      throw new SchedulerInputError(
        `endpoints cannot change from ${this.limits.endpoints} to ${limits.endpoints}`,
      );
    }
    this.limits = limits;
    this.bucket.reconfigure({ ratePerSecond: limits.requestsPerSecond, burst: limits.burst }, now);
    const out: SchedulerCommand[] = [];
    this.release(now, out);
    return out;
  }

  /** The limits in force. */
  get currentLimits(): SchedulerLimits {
    return this.limits;
  }

  handle(input: SchedulerInput): SchedulerCommand[] {
    const out: SchedulerCommand[] = [];
    switch (input.type) {
      case 'submit':
        if (this.entries.has(input.id))
          throw new SchedulerInputError(`request ${input.id} is already submitted`);
        this.entries.set(input.id, { attempts: 0, retryAt: undefined, inFlight: false });
        this.queue.push(input.id);
        break;
      case 'succeeded': {
        const entry = this.inFlightEntry(input.id);
        this.finishAttempt(input.id, entry);
        out.push({ type: 'resolve', id: input.id, attempts: entry.attempts });
        break;
      }
      case 'failed': {
        const entry = this.inFlightEntry(input.id);
        entry.inFlight = false;
        this.inFlight--;
        const { failure } = input;
        const retryable = isRetryableFailure(failure);
        const retryAfter = failure.kind === 'http' && retryable ? (failure.retryAfterMs ?? 0) : 0;
        // The pause holds for the source even when this request gives up: the next one would get a 429 too.
        if (retryAfter > 0) this.pausedUntil = Math.max(this.pausedUntil, input.now + retryAfter);
        if (!retryable || entry.attempts >= this.limits.maxAttempts) {
          this.entries.delete(input.id);
          out.push({ type: 'fail', id: input.id, attempts: entry.attempts, failure, retryable });
          break;
        }
        const ceiling = Math.min(
          this.limits.maxBackoffMs,
          this.limits.initialBackoffMs * 2 ** (entry.attempts - 1),
        );
        const delay = Math.max(retryAfter, Math.floor(this.random() * ceiling));
        entry.retryAt = input.now + delay;
        break;
      }
      case 'tick':
        break;
      default:
        return exhaustive(input);
    }
    this.release(input.now, out);
    return out;
  }

  /** The earliest time a waiting request could go out, or undefined when nothing waits on time. */
  nextDeadline(): number | undefined {
    let next: number | undefined;
    for (const entry of this.entries.values()) {
      if (entry.retryAt !== undefined && (next === undefined || entry.retryAt < next)) next = entry.retryAt;
    }
    if (this.queue.length > 0 && this.inFlight < this.limits.maxConcurrent) {
      const gate = Math.max(this.bucket.nextAt(), this.pausedUntil);
      if (next === undefined || gate < next) next = gate;
    }
    return next;
  }

  /** Requests submitted and not yet resolved or failed. */
  get pending(): number {
    return this.entries.size;
  }

  private inFlightEntry(id: number): Entry {
    const entry = this.entries.get(id);
    if (entry === undefined || !entry.inFlight) {
      throw new SchedulerInputError(`request ${id} has no attempt in flight`);
    }
    return entry;
  }

  private finishAttempt(id: number, entry: Entry): void {
    entry.inFlight = false;
    this.inFlight--;
    this.entries.delete(id);
  }

  /** Moves retries whose backoff ended to the queue's head, then sends what the gates let through. */
  private release(now: number, out: SchedulerCommand[]): void {
    const due: number[] = [];
    for (const [id, entry] of this.entries) {
      if (entry.retryAt !== undefined && entry.retryAt <= now) {
        entry.retryAt = undefined;
        due.push(id);
      }
    }
    this.queue.unshift(...due);
    while (
      this.queue.length > 0 &&
      this.inFlight < this.limits.maxConcurrent &&
      now >= this.pausedUntil &&
      this.bucket.allows(now)
    ) {
      const id = this.queue.shift() as number;
      const entry = this.entries.get(id) as Entry;
      entry.attempts++;
      entry.inFlight = true;
      this.inFlight++;
      this.bucket.take(now);
      out.push({
        type: 'send',
        id,
        attempt: entry.attempts,
        endpoint: (entry.attempts - 1) % this.limits.endpoints,
        timeoutMs: this.limits.timeoutMs,
      });
    }
  }
}

function checkLimits(limits: SchedulerLimits): void {
  for (const key of ['maxConcurrent', 'maxAttempts', 'endpoints', 'burst'] as const) {
    if (!Number.isInteger(limits[key]) || limits[key] < 1) {
      throw new SchedulerInputError(`${key} must be an integer ≥ 1, got ${limits[key]}`);
    }
  }
  if (!(Number.isFinite(limits.requestsPerSecond) && limits.requestsPerSecond >= 0)) {
    throw new SchedulerInputError(`requestsPerSecond must be ≥ 0, got ${limits.requestsPerSecond}`);
  }
}

function exhaustive(value: never): never {
  throw new SchedulerInputError(`unexpected input ${JSON.stringify(value)}`);
}
