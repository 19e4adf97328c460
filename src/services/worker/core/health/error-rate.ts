// The heartbeat's `errorRate` (docs/architecture.md § etcd keys, docs/health.md): a time-decayed share of
// recent terminal tasks that failed through the worker's fault.
//
// Theory of operation. Two exponentially decayed counters, both halving every `halfLifeMs`:
//   failures F — terminal tasks the worker is responsible for (responsibility.ts),
//   tasks    N — every terminal task (succeeded, failed for any reason, cancelled).
// A task that ended `a` ms ago weighs 2^(−a / halfLifeMs). The rate at `now` is
//
//   errorRate = F(now) / max(N(now), minTasks)
//
// In one sentence: the recency-weighted share of this worker's recent tasks that failed through its
// own fault, where a task that ended one half-life ago counts half and fewer than `minTasks` weighted
// tasks count as `minTasks`. F ≤ N always holds (a failure adds to both), so the rate is a fraction in
// [0, 1]. Without new tasks F and N decay together: the rate stays put while N ≥ minTasks (there is
// still enough recent evidence), then falls by half every half-life. So a worker above the
// Coordinator's red line recovers with time alone, including while it is routed no traffic at all; and
// the floor keeps one unlucky task on an idle worker from reading as a 100 % failure rate.
//
// No IO, no clock: every input carries `now` (ms, the caller's monotonic clock). A `now` earlier than
// the last one is treated as the last one (no negative ages).

import { isWorkerResponsible, type TerminalOutcome } from './responsibility.js';

/** Default half-life of the decayed counts: 30 s (two heartbeat timeouts of the Coordinator is ~20 s). */
export const ERROR_RATE_HALF_LIFE_MS = 30_000;
/** Default floor of the denominator: below this many weighted tasks, each failure weighs 1/4 at most. */
export const ERROR_RATE_MIN_TASKS = 4;

export interface ErrorRateOptions {
  readonly halfLifeMs?: number;
  readonly minTasks?: number;
}

/** Inputs of the error rate (one so far: a task reached a terminal state). */
export type ErrorRateInput = {
  readonly type: 'TaskTerminal';
  readonly now: number;
  readonly outcome: TerminalOutcome;
};

/** Below this weight both counters are reset to 0 (no denormals after hours of idling). */
const NEGLIGIBLE = 1e-9;

export class WorkerErrorRate {
  readonly halfLifeMs: number;
  readonly minTasks: number;
  private failures = 0;
  private tasks = 0;
  private atMs = Number.NEGATIVE_INFINITY;

  constructor(options: ErrorRateOptions = {}) {
    const halfLifeMs = options.halfLifeMs ?? ERROR_RATE_HALF_LIFE_MS;
    const minTasks = options.minTasks ?? ERROR_RATE_MIN_TASKS;
    if (!Number.isFinite(halfLifeMs) || halfLifeMs <= 0)
      throw new RangeError(`error rate halfLifeMs must be > 0, got ${halfLifeMs}`);
    if (!Number.isFinite(minTasks) || minTasks < 1)
      throw new RangeError(`error rate minTasks must be >= 1, got ${minTasks}`);
    this.halfLifeMs = halfLifeMs;
    this.minTasks = minTasks;
  }

  step(input: ErrorRateInput): void {
    switch (input.type) {
      case 'TaskTerminal': {
        this.decayTo(input.now);
        this.tasks += 1;
        if (isWorkerResponsible(input.outcome)) this.failures += 1;
        return;
      }
      default: {
        const unreachable: never = input.type;
        throw new Error(`unknown error rate input ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** The rate as of `now` (does not change the state). */
  rateAt(now: number): number {
    const { failures, tasks } = this.weightsAt(now);
    if (failures <= 0) return 0;
    return Math.min(1, failures / Math.max(tasks, this.minTasks));
  }

  /** The decayed counters as of `now` (for tests and debugging). */
  weightsAt(now: number): { failures: number; tasks: number } {
    const f = this.factor(now);
    return { failures: this.failures * f, tasks: this.tasks * f };
  }

  private factor(now: number): number {
    const age = now - this.atMs;
    return age > 0 && Number.isFinite(age) ? 2 ** (-age / this.halfLifeMs) : 1;
  }

  private decayTo(now: number): void {
    if (this.atMs === Number.NEGATIVE_INFINITY) {
      this.atMs = now;
      return;
    }
    const f = this.factor(now);
    this.failures *= f;
    this.tasks *= f;
    if (this.tasks < NEGLIGIBLE) {
      this.tasks = 0;
      this.failures = 0;
    }
    if (now > this.atMs) this.atMs = now;
  }
}
