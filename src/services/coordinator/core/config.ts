// Selection and protection parameters of the CoordinatorCore (docs/coordinator.md § Configuration). Their
// defaults and COORDINATOR_* variables are rows of the kernel's config field table (docs/configuration.md);
// the app passes the resolved `deployments.<name>.coordinator` section and turns the problems reported by
// `validateCoordinatorCoreConfig` into one ConfigError naming every bad value at once.

import { sectionDefaults } from '../../../kernel/config-fields/index.js';
import type { CoordinatorConfigProblem } from './errors.js';

/**
 * How selection ranks the Workers that pass every hard filter (docs/placement.md):
 *   - `capacity` (default): the original ranking — most free capacity, newest heartbeat, smallest penalty,
 *     smallest address — by free capacity net of this Coordinator's own recent reservations;
 *   - `affinity`: rendezvous hashing of (task id, Worker address), so the same task id goes to the same
 *     Worker while the routable set is stable.
 */
export type PlacementPolicy = 'capacity' | 'affinity';
export const PLACEMENT_POLICIES: readonly PlacementPolicy[] = Object.freeze(['capacity', 'affinity']);

export interface CoordinatorCoreConfig {
  /** A Worker whose heartbeat is older than this (by the Coordinator's clock) is hard-filtered. */
  readonly heartbeatTimeoutMs: number;
  /**
   * A heartbeat whose lastHeartbeatMs is more than this AHEAD of the Coordinator's clock is not fresh
   * either (freshness.ts): without it a value from the far future would never age out of the view.
   */
  readonly maxClockSkewMs: number;
  /** How long a watch outage is tolerated before the core reports Unavailable. <= heartbeatTimeoutMs. */
  readonly watchGracePeriodMs: number;
  /** The reservation window passed to the Worker as `ttl_ms`; the core does not interpret it. */
  readonly slotTtlMs: number;
  /** Maximum number of candidates the handler tries per request. */
  readonly maxCandidates: number;
  /** Consecutive rejections/timeouts that open a Worker's circuit breaker. */
  readonly circuitBreakerThreshold: number;
  /** How long an open breaker hard-filters the Worker. */
  readonly circuitBreakerCooldownMs: number;
  /** Fractions in (0, 1]; a Worker strictly above any of them is hard-filtered. */
  readonly cpuRedLine: number;
  readonly memoryRedLine: number;
  readonly errorRateRedLine: number;
  /** How the survivors of the hard filters are ranked (COORDINATOR_PLACEMENT). */
  readonly placement: PlacementPolicy;
}

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
] as const satisfies readonly (keyof CoordinatorCoreConfig)[];

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
const RED_LINES = ['cpuRedLine', 'memoryRedLine', 'errorRateRedLine'] as const;

/**
 * Every problem of a config, in field order; empty when valid.
 * - heartbeatTimeoutMs, slotTtlMs, maxCandidates, circuitBreakerThreshold, circuitBreakerCooldownMs:
 *   positive safe integers.
 * - maxClockSkewMs: a non-negative safe integer (0 = no heartbeat may be ahead of the Coordinator's clock).
 * - watchGracePeriodMs: a non-negative safe integer (0 = no grace: Unavailable from the first
 *   millisecond after a disconnect) and <= heartbeatTimeoutMs, so that by the time the grace runs out a
 *   Worker that died during the outage has also aged out of the view's trust.
 * - red lines: finite numbers in (0, 1].
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
  const grace = config.watchGracePeriodMs;
  if (!Number.isSafeInteger(grace) || grace < 0) {
    problems.push({ field: 'watchGracePeriodMs', message: `must be a non-negative integer, got ${grace}` });
  } else if (Number.isSafeInteger(config.heartbeatTimeoutMs) && grace > config.heartbeatTimeoutMs) {
    problems.push({
      field: 'watchGracePeriodMs',
      message: `must be <= heartbeatTimeoutMs (${config.heartbeatTimeoutMs}), got ${grace}`,
    });
  }
  for (const field of RED_LINES) {
    const v = config[field];
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > 1) {
      problems.push({ field, message: `must be a fraction in (0, 1], got ${v}` });
    }
  }
  if (!PLACEMENT_POLICIES.includes(config.placement)) {
    problems.push({
      field: 'placement',
      message: `must be one of ${PLACEMENT_POLICIES.join(', ')}, got ${JSON.stringify(config.placement)}`,
    });
  }
  return problems;
}
