// Configuration of the dispatcher core. The settings it shares with the Worker section of
// blockx.config.yaml (`taskMaxInflightCalls`, `callDeadlineMs`, `maxCollectedOutputBytes`, `callRetry`, `callPageRows`,
// the call budget) are rows of the kernel's config field table (docs/configuration.md): their type, what
// each means and its default are written there once, and the core derives both from it. The window and
// depth settings are the dispatcher's own (README.md, "Slots, windows and the cap"), not configuration.

import type {
  CallRetryConfig,
  FunctionRetryConfig,
  WorkerConfig,
} from '../../../../kernel/config-fields/generated/deployment-sections.js';
import { CALL_FAILURE_KINDS } from '../../../../kernel/config-fields/function-retry-fields.js';
import { sectionDefaults } from '../../../../kernel/config-fields/index.js';
import { DispatcherConfigError, type DispatcherConfigIssue } from './errors.js';

/** The worker settings the dispatcher reads, in the order of the config table. */
const WORKER_FIELDS = [
  'taskMaxInflightCalls',
  'taskMaxCallAttempts',
  'taskMaxPendingSubcalls',
  'callDeadlineMs',
  'maxCollectedOutputBytes',
  'callRetry',
  'callPageRows',
] as const satisfies readonly (keyof WorkerConfig)[];

/** Bounded per-call attempt retries (docs/task-lifecycle.md § Retry scopes): the `callRetry` section. */
export type CallRetryPolicy = CallRetryConfig;

/**
 * What the dispatcher is configured with. The worker settings mean what the generated `WorkerConfig`
 * says (the call budget: README.md, "Call budget"; `callDeadlineMs` counts CPU + IO time from
 * `callStarted`, never queueing); the rest are the dispatcher's own.
 */
export interface DispatcherConfig extends Pick<WorkerConfig, (typeof WORKER_FIELDS)[number]> {
  /** Window a task starts with (clamped to the cap). */
  readonly initialWindow: number;
  /** The window never shrinks below this. */
  readonly minWindow: number;
  /** Deepest allowed subcall (a root is depth 0); deeper requests are answered with an error. */
  readonly maxSubcallDepth: number;
  /**
   * `functions.retry` of the config: per function name, the `callRetry` fields that differ for its calls
   * (retry-policy.ts callRetryRule). Default: none.
   */
  readonly functionRetry: Readonly<Record<string, FunctionRetryConfig>>;
}

/** The dispatcher's own settings (README.md, "Slots, windows and the cap"); not configuration. */
const OWN_DEFAULTS = { initialWindow: 16, minWindow: 1, maxSubcallDepth: 32 } as const;

const workerDefaults = sectionDefaults('worker') as Record<string, unknown>;

/** The `callRetry` defaults of the config field table. */
export const DEFAULT_CALL_RETRY_POLICY: CallRetryPolicy = Object.freeze({
  ...(workerDefaults['callRetry'] as CallRetryPolicy),
});

/**
 * The worker settings' defaults from the config field table (kernel/config-fields/, docs/configuration.md),
 * the dispatcher's own beside them: the core keeps no copy of a configurable number.
 */
export const DEFAULT_DISPATCHER_CONFIG: DispatcherConfig = Object.freeze({
  ...(Object.fromEntries(WORKER_FIELDS.map((k) => [k, workerDefaults[k]])) as Pick<
    WorkerConfig,
    (typeof WORKER_FIELDS)[number]
  >),
  callRetry: DEFAULT_CALL_RETRY_POLICY,
  functionRetry: Object.freeze({}),
  ...OWN_DEFAULTS,
});

function check(issues: DispatcherConfigIssue[], path: string, value: unknown, min: number): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    issues.push({ path, message: `must be an integer, got ${String(value)}` });
  } else if (value < min) {
    issues.push({ path, message: `must be >= ${min}, got ${value}` });
  }
}

function checkRetryOn(issues: DispatcherConfigIssue[], path: string, kinds: unknown): void {
  const known: readonly unknown[] = CALL_FAILURE_KINDS;
  if (!Array.isArray(kinds) || !kinds.every((k) => known.includes(k))) {
    issues.push({
      path,
      message: `must be a list of ${CALL_FAILURE_KINDS.join(', ')}, got ${JSON.stringify(kinds)}`,
    });
  }
}

/** Every problem of a config (empty when valid). */
export function validateDispatcherConfig(config: DispatcherConfig): DispatcherConfigIssue[] {
  const issues: DispatcherConfigIssue[] = [];
  check(issues, 'taskMaxInflightCalls', config.taskMaxInflightCalls, 1);
  check(issues, 'callPageRows', config.callPageRows, 1);
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
  checkRetryOn(issues, 'callRetry.retryOn', config.callRetry?.retryOn);
  for (const [fn, rule] of Object.entries(config.functionRetry ?? {})) {
    if (rule.maxAttempts !== undefined) check(issues, `functionRetry.${fn}.maxAttempts`, rule.maxAttempts, 1);
    if (rule.retryOn !== undefined) checkRetryOn(issues, `functionRetry.${fn}.retryOn`, rule.retryOn);
  }
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
    functionRetry: Object.freeze({ ...(rest.functionRetry ?? {}) }),
  };
  const issues = validateDispatcherConfig(config);
  if (issues.length > 0) throw new DispatcherConfigError(issues);
  return Object.freeze(config);
}
