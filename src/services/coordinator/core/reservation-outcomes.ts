// The outcomes of a reservation that ReservationMachine (reservation.ts) and its adapters share: the
// fixed messages, how a grant's state counts against local capacity, and how a rejection is counted
// (docs/coordinator.md § ReserveWorkerSlot). Pure.

import { CoordinatorError, CoordinatorErrorCode } from './errors.js';
import type { ClaimResult } from './inputs.js';
import type { ReserveResult } from './reservation-types.js';

export const ALL_CANDIDATES_REJECTED = 'all candidates rejected';
export const UNABLE_TO_CONFIRM = 'unable to confirm slot reservation';
export const REQUEST_CANCELLED = `${UNABLE_TO_CONFIRM}: request cancelled`;
/** The message of a task whose request the adapter lost (a SlotReserver that threw). */
export const INTERNAL_RESERVATION_ERROR = 'internal coordinator error';

/** A RequestTaskSlot answer for a task id the Worker holds a retained terminal result of. */
export function isTerminalGrant(state: string): boolean {
  return state === 'TASK_STATE_SUCCEEDED' || state === 'TASK_STATE_FAILED';
}

/**
 * What a granted RequestTaskSlot means for the local capacity adjustment: a new slot, unless the Worker
 * answered for a task it already runs (the same slot, already in its heartbeat's runningTasks) or holds
 * a retained result of (no slot at all).
 */
export function claimResultOfGrant(state: string): ClaimResult {
  return isTerminalGrant(state) || state === 'TASK_STATE_RUNNING' ? 'noSlot' : 'slot';
}

/** How the core counts an explicit rejection: a full pool is backpressure, anything else a failure. */
export function rejectionOutcome(code: CoordinatorErrorCode): 'rejection' | 'backpressure' {
  return code === CoordinatorErrorCode.NoSlot ? 'backpressure' : 'rejection';
}

export function allRejected(): ReserveResult {
  return {
    ok: false,
    error: new CoordinatorError(CoordinatorErrorCode.AllCandidatesRejected, ALL_CANDIDATES_REJECTED),
  };
}

export function cancelledResult(): ReserveResult {
  return { ok: false, error: new CoordinatorError(CoordinatorErrorCode.SlotUncertain, REQUEST_CANCELLED) };
}
