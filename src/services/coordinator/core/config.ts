// Selection and protection parameters of the CoordinatorCore, with their defaults
// (docs/coordinator.md § Configuration). The app layer fills these from COORDINATOR_* variables
// (`COORDINATOR_CORE_CONFIG_ENV` says which field each variable sets) and turns the problems reported by
// `validateCoordinatorCoreConfig` into one ConfigError naming every bad variable at once.

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

export const DEFAULT_COORDINATOR_CORE_CONFIG: CoordinatorCoreConfig = Object.freeze({
  heartbeatTimeoutMs: 10_000,
  maxClockSkewMs: 5_000,
  watchGracePeriodMs: 10_000,
  slotTtlMs: 5_000,
  maxCandidates: 3,
  circuitBreakerThreshold: 3,
  circuitBreakerCooldownMs: 10_000,
  cpuRedLine: 0.9,
  memoryRedLine: 0.9,
  errorRateRedLine: 0.5,
  placement: 'capacity',
});

/** The environment variable (docs/coordinator.md § Configuration) that overrides each field. */
export const COORDINATOR_CORE_CONFIG_ENV: Readonly<Record<keyof CoordinatorCoreConfig, string>> =
  Object.freeze({
    heartbeatTimeoutMs: 'COORDINATOR_HEARTBEAT_TIMEOUT_MS',
    maxClockSkewMs: 'COORDINATOR_MAX_CLOCK_SKEW_MS',
    watchGracePeriodMs: 'COORDINATOR_WATCH_GRACE_PERIOD_MS',
    slotTtlMs: 'COORDINATOR_SLOT_TTL_MS',
    maxCandidates: 'COORDINATOR_MAX_CANDIDATES',
    circuitBreakerThreshold: 'COORDINATOR_CIRCUIT_BREAKER_THRESHOLD',
    circuitBreakerCooldownMs: 'COORDINATOR_CIRCUIT_BREAKER_COOLDOWN_MS',
    cpuRedLine: 'COORDINATOR_CPU_RED_LINE',
    memoryRedLine: 'COORDINATOR_MEMORY_RED_LINE',
    errorRateRedLine: 'COORDINATOR_ERROR_RATE_RED_LINE',
    placement: 'COORDINATOR_PLACEMENT',
  });

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
