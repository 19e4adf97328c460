import { describe, expect, it } from 'vitest';
import { AppErrorCode, TeardownError } from '../../../src/app/errors.js';
import { BlockxError } from '../../../src/kernel/errors.js';

describe('app error codes', () => {
  it('each key equals its code', () => {
    for (const [key, code] of Object.entries(AppErrorCode)) expect(code).toBe(key);
  });

  it('TeardownError is a BlockxError; one failure becomes its cause', () => {
    const cause = new Error('x');
    const err = new TeardownError([{ step: 'storage', error: cause }]);
    expect(err).toBeInstanceOf(BlockxError);
    expect(err.cause).toBe(cause);
    expect(err.name).toBe('TeardownError');
  });
});
