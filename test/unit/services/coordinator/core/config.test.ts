import { describe, expect, it } from 'vitest';
import {
  DEFAULT_COORDINATOR_CORE_CONFIG,
  coordinatorCoreConfigFrom,
  validateCoordinatorCoreConfig,
} from '../../../../../src/services/coordinator/core/config.js';
import { configField, sectionDefaults } from '../../../../../src/kernel/config-fields/index.js';
import type { CoordinatorCoreConfig } from '../../../../../src/services/coordinator/core/config.js';

describe('CoordinatorCoreConfig', () => {
  it('has the documented defaults, and they are valid', () => {
    expect(DEFAULT_COORDINATOR_CORE_CONFIG).toEqual({
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
      placementMemoryMs: 300_000,
      placementMemoryMaxEntries: 200_000,
    });
    expect(Object.isFrozen(DEFAULT_COORDINATOR_CORE_CONFIG)).toBe(true);
    expect(validateCoordinatorCoreConfig(DEFAULT_COORDINATOR_CORE_CONFIG)).toEqual([]);
  });

  const cases: Array<{ name: string; over: Partial<CoordinatorCoreConfig>; fields: string[] }> = [
    { name: 'grace equal to the heartbeat timeout', over: { watchGracePeriodMs: 10_000 }, fields: [] },
    { name: 'zero grace', over: { watchGracePeriodMs: 0 }, fields: [] },
    { name: 'zero clock skew', over: { maxClockSkewMs: 0 }, fields: [] },
    {
      name: 'placement memory off',
      over: { placementMemoryMs: 0, placementMemoryMaxEntries: 0 },
      fields: [],
    },
    {
      name: 'negative placement memory',
      over: { placementMemoryMs: -1, placementMemoryMaxEntries: 1.5 },
      fields: ['placementMemoryMs', 'placementMemoryMaxEntries'],
    },
    { name: 'negative clock skew', over: { maxClockSkewMs: -1 }, fields: ['maxClockSkewMs'] },
    { name: 'fractional clock skew', over: { maxClockSkewMs: 1.5 }, fields: ['maxClockSkewMs'] },
    {
      name: 'red lines at exactly 1',
      over: { cpuRedLine: 1, memoryRedLine: 1, errorRateRedLine: 1 },
      fields: [],
    },
    {
      name: 'grace above the heartbeat timeout',
      over: { watchGracePeriodMs: 10_001 },
      fields: ['watchGracePeriodMs'],
    },
    { name: 'negative grace', over: { watchGracePeriodMs: -1 }, fields: ['watchGracePeriodMs'] },
    {
      name: 'zero heartbeat timeout',
      over: { heartbeatTimeoutMs: 0, watchGracePeriodMs: 0 },
      fields: ['heartbeatTimeoutMs'],
    },
    { name: 'fractional slot ttl', over: { slotTtlMs: 1.5 }, fields: ['slotTtlMs'] },
    { name: 'zero max candidates', over: { maxCandidates: 0 }, fields: ['maxCandidates'] },
    {
      name: 'negative breaker threshold',
      over: { circuitBreakerThreshold: -3 },
      fields: ['circuitBreakerThreshold'],
    },
    {
      name: 'NaN cooldown',
      over: { circuitBreakerCooldownMs: Number.NaN },
      fields: ['circuitBreakerCooldownMs'],
    },
    { name: 'zero cpu red line', over: { cpuRedLine: 0 }, fields: ['cpuRedLine'] },
    { name: 'memory red line above 1', over: { memoryRedLine: 1.01 }, fields: ['memoryRedLine'] },
    {
      name: 'infinite error-rate red line',
      over: { errorRateRedLine: Infinity },
      fields: ['errorRateRedLine'],
    },
    {
      name: 'several problems at once',
      over: { maxCandidates: 0, slotTtlMs: -1, watchGracePeriodMs: 20_000, errorRateRedLine: 0 },
      fields: ['slotTtlMs', 'maxCandidates', 'watchGracePeriodMs', 'errorRateRedLine'],
    },
  ];
  it.each(cases)('$name → problems in $fields', ({ over, fields }) => {
    const problems = validateCoordinatorCoreConfig({ ...DEFAULT_COORDINATOR_CORE_CONFIG, ...over });
    expect(problems.map((p) => p.field)).toEqual(fields);
    for (const p of problems) expect(p.message).toMatch(/must/);
  });

  it('takes its defaults from the kernel table, and every field has its documented variable there', () => {
    const kernel = sectionDefaults('coordinator') as Record<string, unknown>;
    for (const [key, value] of Object.entries(DEFAULT_COORDINATOR_CORE_CONFIG)) {
      expect(kernel[key], key).toEqual(value);
      expect(configField('coordinator', key).env, key).toMatch(/^COORDINATOR_[A-Z_]+$/);
    }
    expect(configField('coordinator', 'watchGracePeriodMs').env).toBe('COORDINATOR_WATCH_GRACE_PERIOD_MS');
    expect(configField('coordinator', 'cpuRedLine').env).toBe('COORDINATOR_CPU_RED_LINE');
  });

  it('coordinatorCoreConfigFrom picks the core fields out of the whole coordinator section', () => {
    const section = { ...sectionDefaults('coordinator'), maxCandidates: 9 } as never;
    expect(coordinatorCoreConfigFrom(section)).toEqual({
      ...DEFAULT_COORDINATOR_CORE_CONFIG,
      maxCandidates: 9,
    });
  });
});
