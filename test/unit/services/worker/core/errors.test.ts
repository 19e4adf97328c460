import { describe, expect, it } from 'vitest';
import { BlockxError } from '../../../../../src/kernel/errors.js';
import {
  FAILURE_RETRYABLE_RULES,
  FailureCode,
  WorkerAdmissionError,
  WorkerCoreConfigError,
  WorkerErrorCode,
  isFailureCode,
  resolveRetryable,
} from '../../../../../src/services/worker/core/index.js';

describe('WorkerErrorCode', () => {
  it('has exactly the documented admission codes, each key equal to its value', () => {
    expect(Object.keys(WorkerErrorCode).sort()).toEqual(
      ['InvalidArgument', 'InvalidSlot', 'NoSlot', 'NotFound', 'TaskIdTaken', 'Unavailable'].sort(),
    );
    for (const [key, value] of Object.entries(WorkerErrorCode)) expect(value).toBe(key);
  });
});

describe('FailureCode', () => {
  it('has exactly the documented failure codes, CALL_BUDGET_EXCEEDED included, each key equal to its value', () => {
    expect(Object.keys(FailureCode).sort()).toEqual(
      [
        'ACTIVATION_FAILED',
        'IO_SCOPE_FAILED',
        'SLOT_LOST',
        'BUILDER_NOT_FOUND',
        'BUILDER_FAILED',
        'CALL_FAILED',
        'OUTPUT_BYTES_EXCEEDED',
        'CALL_BUDGET_EXCEEDED',
        'PLUGIN_NOT_FOUND',
        'PLUGIN_FAILED',
        'CANCELLED',
        'TIMED_OUT',
        'WATCH_DISCONNECTED',
      ].sort(),
    );
    for (const [key, value] of Object.entries(FailureCode)) expect(value).toBe(key);
  });

  it('has a retryable rule for every code and none for anything else', () => {
    expect(Object.keys(FAILURE_RETRYABLE_RULES).sort()).toEqual(Object.keys(FailureCode).sort());
  });

  it('recognises failure codes', () => {
    expect(isFailureCode('TIMED_OUT')).toBe(true);
    expect(isFailureCode('NoSlot')).toBe(false);
    expect(isFailureCode('toString')).toBe(false);
    expect(isFailureCode(undefined)).toBe(false);
  });

  // [code, reported flag, expected retryable]
  const cases: [FailureCode, boolean | undefined, boolean][] = [
    ['TIMED_OUT', undefined, true],
    ['TIMED_OUT', false, true],
    ['CALL_FAILED', undefined, false],
    ['CALL_FAILED', true, false],
    ['WATCH_DISCONNECTED', true, false],
    ['PLUGIN_FAILED', undefined, true],
    ['PLUGIN_FAILED', false, false],
    ['PLUGIN_FAILED', true, true],
    ['BUILDER_FAILED', false, false],
    ['BUILDER_FAILED', true, true],
    ['BUILDER_FAILED', undefined, true],
    ['ACTIVATION_FAILED', false, true],
    ['IO_SCOPE_FAILED', undefined, true],
    ['SLOT_LOST', false, true],
    ['BUILDER_NOT_FOUND', true, false],
    ['PLUGIN_NOT_FOUND', true, false],
    ['CANCELLED', false, true],
    ['OUTPUT_BYTES_EXCEEDED', true, false],
    ['CALL_BUDGET_EXCEEDED', true, false],
  ];
  it.each(cases)('%s reported %s → retryable %s', (code, reported, expected) => {
    expect(resolveRetryable(code, reported)).toBe(expected);
  });
});

describe('resolveRetryable with an unknown code (untyped caller)', () => {
  it('does not throw and follows the reported flag, defaulting to false', () => {
    expect(resolveRetryable('NOT_A_CODE' as FailureCode)).toBe(false);
    expect(resolveRetryable('NOT_A_CODE' as FailureCode, true)).toBe(true);
  });
});

describe('WorkerAdmissionError', () => {
  it('is a BlockxError with its code and structured detail', () => {
    const err = WorkerAdmissionError.invalidSlot('t1', 's9', 'SlotBoundToOtherTask');
    expect(err).toBeInstanceOf(BlockxError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('WorkerAdmissionError');
    expect(err.code).toBe(WorkerErrorCode.InvalidSlot);
    expect(err.taskId).toBe('t1');
    expect(err.detail).toEqual({ code: 'InvalidSlot', slotId: 's9', reason: 'SlotBoundToOtherTask' });
    expect(err.message).toMatch(/^InvalidSlot: slot s9 /);
  });

  it.each([
    [WorkerAdmissionError.invalidArgument('t', 'ttlMs', 0, 'must be positive'), { field: 'ttlMs', value: 0 }],
    [WorkerAdmissionError.noSlot('t', 4, 4), { taskSlots: 4, slotsInUse: 4 }],
    [WorkerAdmissionError.unavailable('t', 'Draining'), { reason: 'Draining' }],
    [WorkerAdmissionError.notFound('t'), {}],
  ])('%s carries its fields', (err, fields) => {
    expect(err.detail).toMatchObject({ code: err.code, ...fields });
  });
});

describe('WorkerCoreConfigError', () => {
  it('lists every issue', () => {
    const err = new WorkerCoreConfigError([
      { path: 'taskSlots', message: 'must be > 0' },
      { path: 'timerScanMs', message: 'must be > 0' },
    ]);
    expect(err).toBeInstanceOf(BlockxError);
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.issues).toHaveLength(2);
    expect(err.message).toContain('taskSlots');
    expect(err.message).toContain('timerScanMs');
  });
});
