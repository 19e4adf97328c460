// Selection and protection parameters of the CoordinatorCore (docs/coordinator.md § Configuration). Their
// defaults and COORDINATOR_* variables are rows of the kernel's config field table (docs/configuration.md);
// the app passes the resolved `deployments.<name>.coordinator` section and turns the problems reported by
// `validateCoordinatorCoreConfig` into one ConfigError naming every bad value at once.

import type { CoordinatorConfig } from '../../../kernel/config-fields/generated/deployment-sections.js';
import { sectionDefaults } from '../../../kernel/config-fields/index.js';
import { coordinatorLimitProblems } from '../../../kernel/config-rules.js';
import type { CoordinatorConfigProblem } from './errors.js';

/**
 * How selection ranks the Workers that pass every hard filter (docs/placement.md):
 *   - `capacity` (default): the original ranking — most free capacity, newest heartbeat, smallest penalty,
 *     smallest address — by free capacity net of this Coordinator's own recent reservations;
 *   - `affinity`: rendezvous hashing of (task id, Worker address), so the same task id goes to the same
 *     Worker while the routable set is stable.
 */
export type PlacementPolicy = CoordinatorConfig['placement'];
export const PLACEMENT_POLICIES: readonly PlacementPolicy[] = Object.freeze(['capacity', 'affinity']);

/** The fields the core reads, in the order of the config table. */
const CORE_FIELDS = [
  'heartbeatTimeoutMs',
  'maxClockSkewMs',
  'watchGracePeriodMs',
  'slotTtlMs',
  'maxCandidates',
  'circuitBreakerThreshold',
  'circuitBreakerCooldownMs',
  'cpuRedLine',
  'memoryRedLine',
  'errorRateRedLine',
  'placement',
  'placementMemoryMs',
  'placementMemoryMaxEntries',
] as const satisfies readonly (keyof CoordinatorConfig)[];

/**
 * The coordinator settings the core reads. What each means, its default and its env variable are written
 * once, on the generated `CoordinatorConfig` (from the config field table, docs/configuration.md); the
 * core adds only its own checks (validateCoordinatorCoreConfig).
 */
export type CoordinatorCoreConfig = Pick<CoordinatorConfig, (typeof CORE_FIELDS)[number]>;

/**
 * The core's share of the kernel's coordinator defaults (kernel/config-fields/, docs/configuration.md):
 * the core keeps no numbers of its own. Tests and benches start from it; the app passes the resolved config.
 */
export const DEFAULT_COORDINATOR_CORE_CONFIG: CoordinatorCoreConfig = Object.freeze(
  coordinatorCoreConfigFrom(sectionDefaults('coordinator') as unknown as CoordinatorCoreConfig),
);

/** Picks the core's fields out of a wider object (e.g. the resolved `deployments.<name>.coordinator`). */
export function coordinatorCoreConfigFrom(section: CoordinatorCoreConfig): CoordinatorCoreConfig {
  return Object.fromEntries(CORE_FIELDS.map((k) => [k, section[k]])) as unknown as CoordinatorCoreConfig;
}

const POSITIVE_INTEGERS = [
  'heartbeatTimeoutMs',
  'slotTtlMs',
  'maxCandidates',
  'circuitBreakerThreshold',
  'circuitBreakerCooldownMs',
] as const;

/**
 * Every problem of a config, in field order; empty when valid.
 * - heartbeatTimeoutMs, slotTtlMs, maxCandidates, circuitBreakerThreshold, circuitBreakerCooldownMs:
 *   positive safe integers.
 * - maxClockSkewMs: a non-negative safe integer (0 = no heartbeat may be ahead of the Coordinator's clock).
 * - watchGracePeriodMs: a non-negative safe integer (0 = no grace: Unavailable from the first
 *   millisecond after a disconnect).
 * - placementMemoryMs, placementMemoryMaxEntries: non-negative safe integers (0 = no placement memory).
 * - the kernel's `coordinatorLimitProblems`: watchGracePeriodMs <= heartbeatTimeoutMs, red lines in (0, 1].
 * - placement: 'capacity' or 'affinity'.
 */
export function validateCoordinatorCoreConfig(config: CoordinatorCoreConfig): CoordinatorConfigProblem[] {
  const problems: CoordinatorConfigProblem[] = [];
  for (const field of POSITIVE_INTEGERS) {
    const v = config[field];
    if (!Number.isSafeInteger(v) || v <= 0)
      problems.push({ field, message: `must be a positive integer, got ${v}` });
  }
  const skew = config.maxClockSkewMs;
  if (!Number.isSafeInteger(skew) || skew < 0) {
    problems.push({ field: 'maxClockSkewMs', message: `must be a non-negative integer, got ${skew}` });
  }
  for (const field of ['placementMemoryMs', 'placementMemoryMaxEntries'] as const) {
    const v = config[field];
    if (!Number.isSafeInteger(v) || v < 0)
      problems.push({ field, message: `must be a non-negative integer, got ${v}` });
  }
  const grace = config.watchGracePeriodMs;
  if (!Number.isSafeInteger(grace) || grace < 0) {
    problems.push({ field: 'watchGracePeriodMs', message: `must be a non-negative integer, got ${grace}` });
  }
  // The rules across fields are the kernel's, checked once for the config file and for this core.
  problems.push(...coordinatorLimitProblems(config));
  if (!PLACEMENT_POLICIES.includes(config.placement)) {
    problems.push({
      field: 'placement',
      message: `must be one of ${PLACEMENT_POLICIES.join(', ')}, got ${JSON.stringify(config.placement)}`,
    });
  }
  return problems;
}
