// Configuration of the Worker core and the one place task timeouts are resolved
// (`effectiveTaskDeadlineMs`, docs/task-lifecycle.md § Deadlines). Defaults and env variables are rows
// of the kernel's config field table (docs/configuration.md); the core derives its type and its defaults
// from it.

import type { WorkerConfig } from '../../../kernel/config-fields/generated/deployment-sections.js';
import { sectionDefaults } from '../../../kernel/config-fields/index.js';
import { WorkerAdmissionError, WorkerCoreConfigError, type WorkerConfigIssue } from './errors.js';

/** The fields the core reads, in the order of the config table. */
const CORE_FIELDS = [
  'taskSlots',
  'defaultTtlMs',
  'maxSlotTtlMs',
  'maxReservedSlotsPerClient',
  'taskDeadlineMs',
  'maxTaskTimeoutMs',
  'resultRetentionMs',
  'watchDisconnectGraceMs',
  'timerScanMs',
] as const satisfies readonly (keyof WorkerConfig)[];

/**
 * The worker settings the core reads. What each means, its default and its env variable are written
 * once, on the generated `WorkerConfig` (from the config field table, docs/configuration.md); the core
 * adds only its own checks (validateWorkerCoreConfig). `timerScanMs` is how often the app calls
 * `tickTimers` when it does not arm a timer on `nextDeadline()`.
 */
export type WorkerCoreConfig = Pick<WorkerConfig, (typeof CORE_FIELDS)[number]>;

/**
 * The core's share of the kernel's worker defaults (kernel/config-fields/, docs/configuration.md): the
 * core keeps no numbers of its own. `resolveWorkerCoreConfig` fills what a caller leaves out from it.
 */
export const DEFAULT_WORKER_CORE_CONFIG: WorkerCoreConfig = Object.freeze(
  Object.fromEntries(
    CORE_FIELDS.map((k) => [k, (sectionDefaults('worker') as Record<string, unknown>)[k]]),
  ) as unknown as WorkerCoreConfig,
);

type Bound = 'positive' | 'nonNegative';

function checkInteger(
  issues: WorkerConfigIssue[],
  path: keyof WorkerCoreConfig,
  value: unknown,
  bound: Bound,
): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    issues.push({ path, message: `must be an integer, got ${String(value)}` });
  } else if (bound === 'positive' && value <= 0) {
    issues.push({ path, message: `must be > 0, got ${value}` });
  } else if (bound === 'nonNegative' && value < 0) {
    issues.push({ path, message: `must be >= 0, got ${value}` });
  }
}

/** Every problem of a config (empty when valid). Pure; the app reports them with their source. */
export function validateWorkerCoreConfig(config: WorkerCoreConfig): WorkerConfigIssue[] {
  const issues: WorkerConfigIssue[] = [];
  checkInteger(issues, 'taskSlots', config.taskSlots, 'positive');
  checkInteger(issues, 'defaultTtlMs', config.defaultTtlMs, 'positive');
  checkInteger(issues, 'maxSlotTtlMs', config.maxSlotTtlMs, 'positive');
  checkInteger(issues, 'maxReservedSlotsPerClient', config.maxReservedSlotsPerClient, 'nonNegative');
  checkInteger(issues, 'taskDeadlineMs', config.taskDeadlineMs, 'positive');
  checkInteger(issues, 'maxTaskTimeoutMs', config.maxTaskTimeoutMs, 'positive');
  checkInteger(issues, 'resultRetentionMs', config.resultRetentionMs, 'nonNegative');
  checkInteger(issues, 'watchDisconnectGraceMs', config.watchDisconnectGraceMs, 'nonNegative');
  checkInteger(issues, 'timerScanMs', config.timerScanMs, 'positive');
  if (issues.length === 0 && config.taskDeadlineMs > config.maxTaskTimeoutMs) {
    issues.push({
      path: 'taskDeadlineMs',
      message: `must be <= maxTaskTimeoutMs (${config.maxTaskTimeoutMs}), got ${config.taskDeadlineMs}`,
    });
  }
  if (issues.length === 0 && config.defaultTtlMs > config.maxSlotTtlMs) {
    issues.push({
      path: 'defaultTtlMs',
      message: `must be <= maxSlotTtlMs (${config.maxSlotTtlMs}), got ${config.defaultTtlMs}`,
    });
  }
  return issues;
}

/** Defaults + overrides, validated and frozen. Throws `WorkerCoreConfigError` with every issue. */
export function resolveWorkerCoreConfig(overrides: Partial<WorkerCoreConfig> = {}): WorkerCoreConfig {
  const config = { ...DEFAULT_WORKER_CORE_CONFIG } as { -readonly [K in keyof WorkerCoreConfig]: number };
  // Only known keys, and only defined values: a caller may pass a wider object (e.g. the app config).
  for (const key of CORE_FIELDS) {
    const value = overrides[key];
    if (value !== undefined) config[key] = value;
  }
  const issues = validateWorkerCoreConfig(config);
  if (issues.length > 0) throw new WorkerCoreConfigError(issues);
  return Object.freeze(config);
}

/**
 * The effective timeout (a duration in ms) of a task submitted with `taskTimeoutMs`: 0 takes
 * `taskDeadlineMs`; negative, non-integer or above `maxTaskTimeoutMs` throws InvalidArgument. The
 * absolute deadline is the acceptance time plus this value.
 */
export function effectiveTaskDeadlineMs(
  config: Pick<WorkerCoreConfig, 'taskDeadlineMs' | 'maxTaskTimeoutMs'>,
  taskTimeoutMs: number,
  taskId = '',
): number {
  if (typeof taskTimeoutMs !== 'number' || !Number.isSafeInteger(taskTimeoutMs)) {
    throw WorkerAdmissionError.invalidArgument(taskId, 'taskTimeoutMs', taskTimeoutMs, 'must be an integer');
  }
  if (taskTimeoutMs < 0) {
    throw WorkerAdmissionError.invalidArgument(
      taskId,
      'taskTimeoutMs',
      taskTimeoutMs,
      'must not be negative',
    );
  }
  if (taskTimeoutMs > config.maxTaskTimeoutMs) {
    throw WorkerAdmissionError.invalidArgument(
      taskId,
      'taskTimeoutMs',
      taskTimeoutMs,
      `must be <= maxTaskTimeoutMs (${config.maxTaskTimeoutMs})`,
    );
  }
  return taskTimeoutMs === 0 ? config.taskDeadlineMs : taskTimeoutMs;
}
