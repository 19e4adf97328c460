// Configuration of the dispatcher core. Names follow the Worker section of blockx.config.yaml
// (`taskMaxInflightCalls`, `callDeadlineMs`, `maxCollectedOutputBytes`, `callRetry`); the window and
// depth settings are the dispatcher's own (see README.md, "Windows").

import { DispatcherConfigError, type DispatcherConfigIssue } from './errors.js';

/** Bounded per-call attempt retries (docs/task-lifecycle.md § Retry scopes). */
export interface CallRetryPolicy {
  /** Attempts per call including the first; 1 = never retry. */
  readonly maxAttempts: number;
  /** Backoff before the 2nd attempt; doubles per attempt. */
  readonly initialBackoffMs: number;
  /** Ceiling of the backoff. */
  readonly maxBackoffMs: number;
}

export interface DispatcherConfig {
  /** Hard cap on a task's executing calls (docs/task-lifecycle.md § The three phases). */
  readonly taskMaxInflightCalls: number;
  /**
   * Execution budget of one attempt: CPU + IO time from `callStarted`, not queueing
   * (docs/task-lifecycle.md § Retry scopes).
   */
  readonly callDeadlineMs: number;
  /** Summed output bytes of a task's root calls above this → OUTPUT_BYTES_EXCEEDED. */
  readonly maxCollectedOutputBytes: number;
  readonly callRetry: CallRetryPolicy;
  /** Window a task starts with (clamped to the cap). */
  readonly initialWindow: number;
  /** The window never shrinks below this. */
  readonly minWindow: number;
  /** Deepest allowed subcall (a root is depth 0); deeper requests are answered with an error. */
  readonly maxSubcallDepth: number;
  /**
   * The call budget of one task (README.md, "Call budget"): attempts dispatched over the whole phase
   * (roots, subcalls and retries) and subcalls not yet ended. Past either → CALL_BUDGET_EXCEEDED.
   */
  readonly taskMaxCallAttempts: number;
  readonly taskMaxPendingSubcalls: number;
}

export const DEFAULT_CALL_RETRY_POLICY: CallRetryPolicy = Object.freeze({
  maxAttempts: 3,
  initialBackoffMs: 50,
  maxBackoffMs: 1_000,
});

export const DEFAULT_DISPATCHER_CONFIG: DispatcherConfig = Object.freeze({
  taskMaxInflightCalls: 1_024,
  callDeadlineMs: 5_000,
  maxCollectedOutputBytes: 64 * 1024 * 1024,
  callRetry: DEFAULT_CALL_RETRY_POLICY,
  initialWindow: 16,
  minWindow: 1,
  maxSubcallDepth: 32,
  taskMaxCallAttempts: 1_000_000,
  taskMaxPendingSubcalls: 10_000,
});

function check(issues: DispatcherConfigIssue[], path: string, value: unknown, min: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    issues.push({ path, message: `must be an integer, got ${String(value)}` });
  } else if (value < min) {
    issues.push({ path, message: `must be >= ${min}, got ${value}` });
  }
}

/** Every problem of a config (empty when valid). */
export function validateDispatcherConfig(config: DispatcherConfig): DispatcherConfigIssue[] {
  const issues: DispatcherConfigIssue[] = [];
  check(issues, 'taskMaxInflightCalls', config.taskMaxInflightCalls, 1);
  check(issues, 'callDeadlineMs', config.callDeadlineMs, 1);
  check(issues, 'maxCollectedOutputBytes', config.maxCollectedOutputBytes, 0);
  check(issues, 'callRetry.maxAttempts', config.callRetry?.maxAttempts, 1);
  check(issues, 'callRetry.initialBackoffMs', config.callRetry?.initialBackoffMs, 0);
  check(issues, 'callRetry.maxBackoffMs', config.callRetry?.maxBackoffMs, 0);
  check(issues, 'initialWindow', config.initialWindow, 1);
  check(issues, 'minWindow', config.minWindow, 1);
  check(issues, 'maxSubcallDepth', config.maxSubcallDepth, 0);
  check(issues, 'taskMaxCallAttempts', config.taskMaxCallAttempts, 1);
  check(issues, 'taskMaxPendingSubcalls', config.taskMaxPendingSubcalls, 1);
  if (issues.length === 0) {
    if (config.callRetry.maxBackoffMs < config.callRetry.initialBackoffMs) {
      issues.push({ path: 'callRetry.maxBackoffMs', message: 'must be >= callRetry.initialBackoffMs' });
    }
    if (config.minWindow > config.initialWindow) {
      issues.push({ path: 'minWindow', message: `must be <= initialWindow (${config.initialWindow})` });
    }
  }
  return issues;
}

/** Defaults + overrides (`callRetry` merged field by field), validated and frozen. */
export function resolveDispatcherConfig(
  overrides: Partial<Omit<DispatcherConfig, 'callRetry'>> & { callRetry?: Partial<CallRetryPolicy> } = {},
): DispatcherConfig {
  const defined = <T extends object>(o: T): Partial<T> =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
  const { callRetry, ...rest } = overrides;
  const config: DispatcherConfig = {
    ...DEFAULT_DISPATCHER_CONFIG,
    ...defined(rest),
    callRetry: Object.freeze({ ...DEFAULT_CALL_RETRY_POLICY, ...defined(callRetry ?? {}) }),
  };
  const issues = validateDispatcherConfig(config);
  if (issues.length > 0) throw new DispatcherConfigError(issues);
  return Object.freeze(config);
}
