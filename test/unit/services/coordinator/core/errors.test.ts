import { describe, expect, it } from 'vitest';
import {
  CoordinatorError,
  CoordinatorErrorCode,
} from '../../../../../src/services/coordinator/core/errors.js';
import { validateReserveRequest } from '../../../../../src/services/coordinator/core/validate.js';
import { BlockxError } from '../../../../../src/kernel/errors.js';

describe('CoordinatorErrorCode', () => {
  it('every key equals its value', () => {
    for (const [k, v] of Object.entries(CoordinatorErrorCode)) expect(v).toBe(k);
  });

  it('includes the seeds business codes', () => {
    for (const code of ['InvalidArgument', 'Unavailable', 'NoExecutableSlot', 'SlotUncertain', 'NoSlot']) {
      expect(CoordinatorErrorCode).toHaveProperty(code, code);
    }
  });

  it('CoordinatorError is a BlockxError with a stable code', () => {
    const e = new CoordinatorError(CoordinatorErrorCode.NoSlot, 'full');
    expect(e).toBeInstanceOf(BlockxError);
    expect(e.code).toBe('NoSlot');
    expect(e.name).toBe('CoordinatorError');
    expect(e.message).toBe('full');
  });
});

describe('validateReserveRequest', () => {
  it('rejects an empty taskId with InvalidArgument', () => {
    expect(validateReserveRequest('')?.code).toBe('InvalidArgument');
  });
  it('accepts any non-empty taskId', () => {
    expect(validateReserveRequest('t')).toBeUndefined();
    expect(validateReserveRequest(' ')).toBeUndefined();
  });
});
