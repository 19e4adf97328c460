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

  it('includes the documented business codes', () => {
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
  // docs/security.md § Input bounds: at most MAX_ID_BYTES (256) of UTF-8.
  it.each([
    ['256 ASCII bytes', 'x'.repeat(256), undefined],
    ['256 bytes of 2-byte characters', 'é'.repeat(128), undefined],
    ['257 ASCII bytes', 'x'.repeat(257), 'taskId must be at most 256 bytes (UTF-8)'],
    ['129 two-byte characters (258 bytes)', 'é'.repeat(129), 'taskId must be at most 256 bytes (UTF-8)'],
    ['1 MiB', 'x'.repeat(1024 * 1024), 'taskId must be at most 256 bytes (UTF-8)'],
  ])('bounds the id length: %s', (_name, taskId, message) => {
    const err = validateReserveRequest(taskId);
    if (message === undefined) {
      expect(err).toBeUndefined();
      return;
    }
    expect(err?.code).toBe('InvalidArgument');
    expect(err?.message).toBe(message);
  });
});
