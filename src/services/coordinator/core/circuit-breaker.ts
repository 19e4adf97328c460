// The per-Worker circuit breaker (docs/coordinator.md § Penalties and the circuit breaker): the rules that
// bias routing away from a Worker whose RequestTaskSlot keeps failing. Pure functions over three fields
// of the Worker's view (worker-view.ts) that exist only in this process; no IO, no clock: `now` is an
// argument, and nothing here arms a timer — expiry is read against the `now` of each query.
//
// Theory of operation. A rejection or a timeout adds one to the failure count and sets the penalty (a
// ranking tiebreaker) equal to it; when the count reaches the threshold the breaker opens: its deadline
// becomes `now + cooldown`, and every selection before the deadline skips the Worker. At the deadline the
// breaker is half-open: the Worker may be chosen again, but its count is still at the threshold, so one
// more failure re-opens it at once; a success clears count, penalty and deadline (closed). Backpressure
// (a full pool) is a healthy Worker saying "busy" and changes nothing. The three fields survive full
// lists; a Worker removed from the view and seen again starts from zero.
//
//   state      | while                                                  | next failure      | success
//   closed     | deadline 0, or passed with the count below threshold   | count+1; opens at | stays closed
//              |                                                        | the threshold     |
//   open       | now < deadline                                         | re-opens (later   | closed
//              |                                                        | deadline)         |
//   half-open  | deadline passed, count still >= threshold              | re-opens at once  | closed
//
// The selection loop (selection.ts) reads `now < circuitBreakerDeadlineMs` inline, as `isBreakerOpen`
// does: that loop is past V8's inlining budget.

/** The breaker's fields of a Worker's view (WorkerLocalState, worker-view.ts). */
export interface BreakerFields {
  /** The breaker is open while `now < circuitBreakerDeadlineMs`; 0 = never tripped. */
  circuitBreakerDeadlineMs: number;
  /** Rejections + timeouts since the last success. */
  recentFailureCount: number;
  /** Ranking tiebreaker: equals recentFailureCount. */
  penalty: number;
}

/** The two limits of CoordinatorCoreConfig the breaker uses. */
export interface BreakerLimits {
  /** Consecutive rejections/timeouts that open the breaker. */
  readonly circuitBreakerThreshold: number;
  /** How long an open breaker hard-filters the Worker. */
  readonly circuitBreakerCooldownMs: number;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

/** Open: the Worker is skipped until the deadline (exactly at the deadline it is closed again). */
export function isBreakerOpen(b: Readonly<BreakerFields>, now: number): boolean {
  return now < b.circuitBreakerDeadlineMs;
}

/** The breaker's state at `now` (the table above). */
export function breakerState(b: Readonly<BreakerFields>, now: number, limits: BreakerLimits): BreakerState {
  if (isBreakerOpen(b, now)) return 'open';
  if (b.circuitBreakerDeadlineMs > 0 && b.recentFailureCount >= limits.circuitBreakerThreshold) {
    return 'half-open';
  }
  return 'closed';
}

/** A reservation succeeded: clears the failure count, the penalty and the deadline. */
export function recordBreakerSuccess(b: BreakerFields): void {
  b.recentFailureCount = 0;
  b.penalty = 0;
  b.circuitBreakerDeadlineMs = 0;
}

/** A rejection or a timeout. Returns true when this failure opened (or re-opened) the breaker. */
export function recordBreakerFailure(b: BreakerFields, now: number, limits: BreakerLimits): boolean {
  b.recentFailureCount += 1;
  b.penalty = b.recentFailureCount;
  if (b.recentFailureCount < limits.circuitBreakerThreshold) return false;
  b.circuitBreakerDeadlineMs = now + limits.circuitBreakerCooldownMs;
  return true;
}
