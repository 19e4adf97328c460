// The Executor liveness decision of the Worker's heartbeat watchdog (executor-supervisor.ts).
//
// Theory of operation. The watchdog runs every `checkIntervalMs` and asks: has the Executor been
// silent for longer than its limit (`heartbeatTimeoutMs` once ready, `startTimeoutMs` before its first
// heartbeat)? Silence is measured from the Executor's last heartbeat as the Worker READ it, so two
// things can make a healthy Executor look silent, and neither is its fault:
//
//  1. The Worker itself did not run (SIGSTOP, a long GC pause, a blocked event loop, a suspended VM).
//     Its heartbeats sat unread on the socket. We know because the watchdog's own tick came far later
//     than scheduled: a gap since the previous check above `stallGapMs` means "the Worker was stalled",
//     and the silence clock restarts at `now` (verdict `worker-stalled`) instead of killing anything.
//  2. The heartbeats did arrive but are still queued: after a stall Node runs due timers BEFORE it
//     polls sockets, so the first check after resuming always sees stale data. A check that finds the
//     Executor silent therefore only says `suspect`; the adapter re-checks one event-loop turn later
//     (setImmediate, after the poll phase has read the socket) with `confirm`, and only a `confirm`
//     can say `lost`.
//
// What remains — the Worker ran on schedule, read everything queued, and the Executor still sent
// nothing for longer than its limit — is the Executor's fault.
//
// Between an Executor's loss and the start of the next one (the restart backoff, up to
// `restartBackoffMaxMs`) there is nothing to judge, but the watchdog still ticks: `recordIdleCheck`
// keeps the tick history, so the first check of the new Executor does not mistake the backoff for a
// Worker stall (issue 31: a Worker logged "event loop did not run for 1507/2012/3507 ms", the backoff's
// values, while it never paused).
//
// No IO, no clock: `now` is an argument; the state is a plain value returned anew by each step.

export interface LivenessConfig {
  readonly heartbeatTimeoutMs: number;
  readonly startTimeoutMs: number;
  /** How often the watchdog checks. */
  readonly checkIntervalMs: number;
  /** A gap between two checks above this means the Worker was stalled (default: see `stallGapFor`). */
  readonly stallGapMs: number;
}

/**
 * The stall threshold for a check interval and heartbeat timeout: half the timeout, but at least three
 * check intervals (so ordinary timer jitter on a busy 2-core box never counts as a stall).
 */
export function stallGapFor(checkIntervalMs: number, heartbeatTimeoutMs: number): number {
  return Math.max(3 * checkIntervalMs, heartbeatTimeoutMs / 2);
}

export interface LivenessState {
  /** When the previous `check` ran (undefined before the first). */
  readonly lastCheckAtMs: number | undefined;
  /** The silence clock does not start before this (the end of the last Worker stall). */
  readonly resumedAtMs: number;
}

export const INITIAL_LIVENESS: LivenessState = Object.freeze({
  lastCheckAtMs: undefined,
  resumedAtMs: Number.NEGATIVE_INFINITY,
});

/** What the watchdog knows about the current Executor when it checks. */
export interface LivenessObservation {
  readonly now: number;
  /** `check`: the periodic tick; `confirm`: the re-check one event-loop turn after a `suspect`. */
  readonly phase: 'check' | 'confirm';
  /** True after the Executor's first heartbeat. */
  readonly ready: boolean;
  /** When the Worker last read a heartbeat of this Executor (undefined: none yet). */
  readonly lastHeartbeatAtMs: number | undefined;
  /** When this Executor was spawned. */
  readonly spawnedAtMs: number;
}

export type LivenessVerdict =
  | { readonly kind: 'alive' }
  | { readonly kind: 'worker-stalled'; readonly stalledMs: number }
  | { readonly kind: 'suspect'; readonly silentMs: number }
  | { readonly kind: 'lost'; readonly silentMs: number; readonly cause: 'heartbeat' | 'start' };

export interface LivenessStep {
  readonly state: LivenessState;
  readonly verdict: LivenessVerdict;
}

const ALIVE: LivenessVerdict = Object.freeze({ kind: 'alive' });

/** One watchdog decision. Pure: same state and observation, same result. */
export function judgeLiveness(
  state: LivenessState,
  obs: LivenessObservation,
  config: LivenessConfig,
): LivenessStep {
  const { now } = obs;
  if (obs.phase === 'check') {
    const gap = state.lastCheckAtMs === undefined ? 0 : now - state.lastCheckAtMs;
    if (gap > config.stallGapMs) {
      return {
        state: { lastCheckAtMs: now, resumedAtMs: now },
        verdict: { kind: 'worker-stalled', stalledMs: gap },
      };
    }
  }
  const next: LivenessState = obs.phase === 'check' ? { ...state, lastCheckAtMs: now } : state;
  const since = obs.ready ? (obs.lastHeartbeatAtMs ?? obs.spawnedAtMs) : obs.spawnedAtMs;
  const limit = obs.ready ? config.heartbeatTimeoutMs : config.startTimeoutMs;
  const silentMs = now - Math.max(since, state.resumedAtMs);
  if (silentMs <= limit) return { state: next, verdict: ALIVE };
  if (obs.phase === 'check') return { state: next, verdict: { kind: 'suspect', silentMs } };
  return { state: next, verdict: { kind: 'lost', silentMs, cause: obs.ready ? 'heartbeat' : 'start' } };
}

/** A watchdog tick while no Executor runs (restart backoff): nothing to judge; the tick is recorded. */
export function recordIdleCheck(state: LivenessState, now: number): LivenessState {
  return { ...state, lastCheckAtMs: now };
}
