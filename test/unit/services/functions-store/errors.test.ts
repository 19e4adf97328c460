import { describe, expect, it } from 'vitest';
import { FunctionsStoreErrorCode } from '../../../../src/services/functions-store/errors.js';

describe('FunctionsStoreErrorCode', () => {
  it('each key equals its code (codes never drift)', () => {
    for (const [key, code] of Object.entries(FunctionsStoreErrorCode)) expect(code).toBe(key);
  });
});
