import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WORKER_CORE_CONFIG,
  WorkerAdmissionError,
  WorkerCore,
  WorkerCoreConfigError,
  effectiveTaskDeadlineMs,
  resolveWorkerCoreConfig,
  validateWorkerCoreConfig,
  type WorkerCoreConfig,
} from '../../../../../src/services/worker/core/index.js';
import { sectionDefaults } from '../../../../../src/kernel/config-fields/index.js';
import { sequentialIds } from './harness.js';

describe('DEFAULT_WORKER_CORE_CONFIG', () => {
  it('carries the documented defaults', () => {
    expect(DEFAULT_WORKER_CORE_CONFIG).toMatchObject({
      defaultTtlMs: 5_000,
      maxSlotTtlMs: 60_000,
      taskDeadlineMs: 300_000,
      maxTaskTimeoutMs: 8 * 3_600_000,
      resultRetentionMs: 300_000,
      watchDisconnectGraceMs: 0,
      timerScanMs: 500,
    });
    expect(DEFAULT_WORKER_CORE_CONFIG.taskSlots).toBeGreaterThan(0);
    expect(Object.isFrozen(DEFAULT_WORKER_CORE_CONFIG)).toBe(true);
    expect(validateWorkerCoreConfig(DEFAULT_WORKER_CORE_CONFIG)).toEqual([]);
  });

  it('is the core share of the kernel defaults (the core keeps no numbers of its own)', () => {
    expect(sectionDefaults('worker')).toMatchObject(DEFAULT_WORKER_CORE_CONFIG);
    expect(DEFAULT_WORKER_CORE_CONFIG.maxReservedSlotsPerClient).toBe(0);
  });
});

describe('validateWorkerCoreConfig', () => {
  const cases: [string, Partial<WorkerCoreConfig>, string[]][] = [
    ['zero slots', { taskSlots: 0 }, ['taskSlots']],
    ['fractional slots', { taskSlots: 1.5 }, ['taskSlots']],
    ['zero ttl', { defaultTtlMs: 0 }, ['defaultTtlMs']],
    ['negative deadline', { taskDeadlineMs: -1 }, ['taskDeadlineMs']],
    ['zero max timeout', { maxTaskTimeoutMs: 0 }, ['maxTaskTimeoutMs']],
    ['negative retention', { resultRetentionMs: -1 }, ['resultRetentionMs']],
    ['negative grace', { watchDisconnectGraceMs: -5 }, ['watchDisconnectGraceMs']],
    ['NaN scan', { timerScanMs: Number.NaN }, ['timerScanMs']],
    ['default above max', { taskDeadlineMs: 2_000, maxTaskTimeoutMs: 1_000 }, ['taskDeadlineMs']],
    ['zero max slot ttl', { maxSlotTtlMs: 0 }, ['maxSlotTtlMs']],
    ['default ttl above max slot ttl', { defaultTtlMs: 2_000, maxSlotTtlMs: 1_000 }, ['defaultTtlMs']],
    ['several at once', { taskSlots: -1, timerScanMs: 0 }, ['taskSlots', 'timerScanMs']],
    ['zero retention and grace are fine', { resultRetentionMs: 0, watchDisconnectGraceMs: 0 }, []],
  ];
  it.each(cases)('%s', (_name, overrides, paths) => {
    const issues = validateWorkerCoreConfig({ ...DEFAULT_WORKER_CORE_CONFIG, ...overrides });
    expect(issues.map((i) => i.path)).toEqual(paths);
  });

  it('resolveWorkerCoreConfig merges, ignores undefined overrides, freezes, and throws with all issues', () => {
    const config = resolveWorkerCoreConfig({ taskSlots: 3, resultRetentionMs: undefined });
    expect(config.taskSlots).toBe(3);
    expect(config.resultRetentionMs).toBe(300_000);
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => resolveWorkerCoreConfig({ taskSlots: 0, defaultTtlMs: -1 })).toThrow(WorkerCoreConfigError);
    try {
      resolveWorkerCoreConfig({ taskSlots: 0, defaultTtlMs: -1 });
    } catch (err) {
      expect((err as WorkerCoreConfigError).issues.map((i) => i.path)).toEqual(['taskSlots', 'defaultTtlMs']);
    }
  });

  it('the WorkerCore constructor rejects an invalid config', () => {
    expect(() => new WorkerCore({ config: { taskSlots: 0 }, newSlotId: sequentialIds() })).toThrow(
      WorkerCoreConfigError,
    );
  });
});

describe('effectiveTaskDeadlineMs', () => {
  const config = { taskDeadlineMs: 300_000, maxTaskTimeoutMs: 1_000_000 };
  it.each([
    [0, 300_000],
    [1, 1],
    [30_000, 30_000],
    [1_000_000, 1_000_000],
  ])('taskTimeoutMs %d → %d', (input, expected) => {
    expect(effectiveTaskDeadlineMs(config, input)).toBe(expected);
  });

  it.each([-1, 1_000_001, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'taskTimeoutMs %d → InvalidArgument',
    (v) => {
      let caught: unknown;
      try {
        effectiveTaskDeadlineMs(config, v, 'task-x');
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(WorkerAdmissionError);
      expect((caught as WorkerAdmissionError).code).toBe('InvalidArgument');
      expect((caught as WorkerAdmissionError).taskId).toBe('task-x');
      expect((caught as WorkerAdmissionError).detail).toMatchObject({ field: 'taskTimeoutMs' });
    },
  );

  it('is exposed on the core with its own config', () => {
    const core = new WorkerCore({ config: { taskDeadlineMs: 42 }, newSlotId: sequentialIds() });
    expect(core.effectiveTaskDeadlineMs(0)).toBe(42);
    expect(() => core.effectiveTaskDeadlineMs(8 * 3_600_000 + 1)).toThrow(WorkerAdmissionError);
  });
});
