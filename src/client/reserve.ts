// Placing a task: reserve a slot through the Coordinator and submit to the Worker it names (or submit
// straight to one Worker), retrying the way docs/coordinator.md § Errors says a client must:
//
//   Unavailable        → safe to retry at once. The first retry goes out immediately; while the answer
//                        stays Unavailable, retries follow the backoff so a starting cluster is not hammered.
//   Aborted            → SlotUncertain: a Worker may hold a slot for this task until its TTL. Wait one
//                        slot TTL, then reserve again with the SAME task id (RequestTaskSlot is idempotent
//                        per task id, so a slot that still exists is handed back, never a second one).
//                        A client-side deadline on ReserveWorkerSlot is the same uncertainty.
//   ResourceExhausted  → no capacity: exponential backoff with jitter, then reserve again.
//   anything else      → final.
//
// After a reservation, SubmitTask to the slot's Worker: Unavailable or a deadline → submit again to the
// same Worker with the same slot (SubmitTask is idempotent per task id: a task already running there
// answers RUNNING, never a second execution) — but after SUBMIT_UNAVAILABLE_LIMIT Unavailable answers
// in a row the Worker is taken as gone (killed, restarting) and the task is reserved again, with the same
// task id, so the Coordinator can place it elsewhere instead of the client waiting out every attempt on a
// dead address (docs/retries.md); InvalidSlot (the slot expired first) → reserve again; no
// capacity → backoff, reserve again. In direct-to-worker mode (no slot id, the Worker reserves inline)
// the same rules apply to SubmitTask alone.
//
// `decideRetry` is the whole policy as a pure function of (phase, error code, state); `placeTask` is the
// loop that runs it. Every call counts as one attempt; after `maxAttempts` the last error is thrown.
import { BlockxClientError, ClientErrorCode, toClientError } from './errors.js';

export type PlacementPhase = 'reserve' | 'submit' | 'direct-submit';

export interface BackoffPolicy {
  readonly initialMs: number;
  readonly maxMs: number;
}

export interface RetryPolicy {
  /** Calls (reserve and submit) before giving up. */
  readonly maxAttempts: number;
  /** The Coordinator's slot TTL: the wait after an uncertain reservation. */
  readonly slotTtlMs: number;
  readonly backoff: BackoffPolicy;
}

export interface RetryState {
  /** Calls made so far, the failed one included. */
  readonly attempts: number;
  /** The base of the next backoff wait. */
  readonly backoffMs: number;
  /** The code of the previous failure, if any. */
  readonly last: ClientErrorCode | undefined;
  /** Failures in a row with the code `last` (absent: 1 when `last` is set). */
  readonly streak?: number;
}

/** Unavailable answers in a row from one reserved Worker before the client reserves again. */
export const SUBMIT_UNAVAILABLE_LIMIT = 3;

export type RetryDecision =
  | {
      readonly type: 'retry';
      /** 'reserve': get a (new) reservation; 'resubmit': SubmitTask again to the same Worker and slot. */
      readonly action: 'reserve' | 'resubmit';
      readonly delayMs: number;
      readonly next: RetryState;
    }
  | { readonly type: 'fail'; readonly reason: 'final' | 'attempts_exhausted' };

export function initialRetryState(policy: RetryPolicy): RetryState {
  return { attempts: 0, backoffMs: policy.backoff.initialMs, last: undefined };
}

/**
 * What to do after `code` failed a call of `phase`. `state.attempts` counts that call. `random` returns
 * a number in [0, 1) for the jitter: a backoff wait is uniform in [base/2, base], and the base doubles
 * up to `backoff.maxMs`.
 */
export function decideRetry(
  phase: PlacementPhase,
  code: ClientErrorCode,
  state: RetryState,
  policy: RetryPolicy,
  random: () => number,
): RetryDecision {
  const plan = retryPlan(phase, code);
  if (plan === undefined) return { type: 'fail', reason: 'final' };
  if (state.attempts >= policy.maxAttempts) return { type: 'fail', reason: 'attempts_exhausted' };
  const streak = state.last === code ? (state.streak ?? 1) + 1 : 1;
  const { wait } = plan;
  const action =
    phase === 'submit' && code === ClientErrorCode.UNAVAILABLE && streak >= SUBMIT_UNAVAILABLE_LIMIT
      ? 'reserve'
      : plan.action;
  const marked = { ...state, last: code, streak };
  switch (wait) {
    case 'now-then-backoff':
      if (streak === 1) return { type: 'retry', action, delayMs: 0, next: marked };
      return backoff(action, marked, policy, random);
    case 'backoff':
      return backoff(action, marked, policy, random);
    case 'slot-ttl':
      return { type: 'retry', action, delayMs: policy.slotTtlMs, next: marked };
    case 'none':
      return { type: 'retry', action, delayMs: 0, next: marked };
    default: {
      const _exhaustive: never = wait;
      throw new Error(`unknown wait ${String(_exhaustive)}`);
    }
  }
}

type Wait = 'now-then-backoff' | 'backoff' | 'slot-ttl' | 'none';

/** The retry table; undefined = final. */
function retryPlan(
  phase: PlacementPhase,
  code: ClientErrorCode,
): { action: 'reserve' | 'resubmit'; wait: Wait } | undefined {
  switch (phase) {
    case 'reserve':
      if (code === ClientErrorCode.UNAVAILABLE) return { action: 'reserve', wait: 'now-then-backoff' };
      if (code === ClientErrorCode.SLOT_UNCERTAIN || code === ClientErrorCode.DEADLINE) {
        return { action: 'reserve', wait: 'slot-ttl' };
      }
      if (code === ClientErrorCode.NO_CAPACITY) return { action: 'reserve', wait: 'backoff' };
      return undefined;
    case 'submit':
      if (code === ClientErrorCode.UNAVAILABLE) return { action: 'resubmit', wait: 'now-then-backoff' };
      if (code === ClientErrorCode.DEADLINE) return { action: 'resubmit', wait: 'backoff' };
      if (code === ClientErrorCode.INVALID_SLOT) return { action: 'reserve', wait: 'none' };
      if (code === ClientErrorCode.NO_CAPACITY) return { action: 'reserve', wait: 'backoff' };
      return undefined;
    case 'direct-submit':
      if (code === ClientErrorCode.UNAVAILABLE) return { action: 'resubmit', wait: 'now-then-backoff' };
      if (code === ClientErrorCode.DEADLINE || code === ClientErrorCode.NO_CAPACITY) {
        return { action: 'resubmit', wait: 'backoff' };
      }
      return undefined;
    default: {
      const _exhaustive: never = phase;
      throw new Error(`unknown phase ${String(_exhaustive)}`);
    }
  }
}

function backoff(
  action: 'reserve' | 'resubmit',
  state: RetryState,
  policy: RetryPolicy,
  random: () => number,
): RetryDecision {
  const base = state.backoffMs;
  const delayMs = Math.round(base / 2 + (random() * base) / 2);
  const backoffMs = Math.min(base * 2, policy.backoff.maxMs);
  return { type: 'retry', action, delayMs, next: { ...state, backoffMs } };
}

// ---- the loop ---------------------------------------------------------------------------------------

export interface Reservation {
  readonly workerAddr: string;
  readonly slotId: string;
}

export interface PlacementPorts<S> {
  /** ReserveWorkerSlot; absent in direct-to-worker mode. */
  readonly reserve?: (taskId: string) => Promise<Reservation>;
  /** SubmitTask to `workerAddr`; `slotId` is '' in direct mode. */
  readonly submit: (workerAddr: string, slotId: string) => Promise<S>;
  /** The Worker in direct mode. */
  readonly directWorker?: string;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random: () => number;
}

export interface Placement<S> {
  readonly workerAddr: string;
  readonly submitted: S;
  readonly attempts: number;
}

/** Runs reserve → submit with the retry policy. Throws the last BlockxClientError when it gives up. */
export async function placeTask<S>(
  taskId: string,
  ports: PlacementPorts<S>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<Placement<S>> {
  const direct = ports.directWorker;
  if (direct === undefined && ports.reserve === undefined) {
    throw new BlockxClientError(
      ClientErrorCode.INVALID_ARGUMENT,
      'no coordinator and no worker to submit to',
    );
  }
  let state = initialRetryState(policy);
  let held: Reservation | undefined;
  for (;;) {
    throwIfCancelled(signal, taskId);
    const phase: PlacementPhase =
      direct !== undefined ? 'direct-submit' : held === undefined ? 'reserve' : 'submit';
    state = { ...state, attempts: state.attempts + 1 };
    try {
      if (direct !== undefined) {
        return { workerAddr: direct, submitted: await ports.submit(direct, ''), attempts: state.attempts };
      }
      if (held === undefined) {
        held = await (ports.reserve as (taskId: string) => Promise<Reservation>)(taskId);
        continue;
      }
      const submitted = await ports.submit(held.workerAddr, held.slotId);
      return { workerAddr: held.workerAddr, submitted, attempts: state.attempts };
    } catch (err) {
      throwIfCancelled(signal, taskId);
      const error = toClientError(err, { taskId });
      const decision = decideRetry(phase, error.code, state, policy, ports.random);
      if (decision.type === 'fail') {
        throw error.with({ taskId, attempts: state.attempts });
      }
      if (decision.action === 'reserve') held = undefined;
      state = decision.next;
      if (decision.delayMs > 0) await ports.sleep(decision.delayMs, signal);
    }
  }
}

function throwIfCancelled(signal: AbortSignal | undefined, taskId: string): void {
  if (signal?.aborted) {
    throw new BlockxClientError(ClientErrorCode.CANCELLED, `task ${taskId}: cancelled`, {
      taskId,
      cause: signal.reason,
    });
  }
}
