import { describe, expect, it } from 'vitest';
import { isRetryableWriterFailure } from '../../../src/kernel/plugin-types.js';

describe('isRetryableWriterFailure', () => {
  it.each([
    ['retryable: false', Object.assign(new Error('constraint'), { retryable: false }), false],
    ['retryable: true', Object.assign(new Error('deadlock'), { retryable: true }), true],
    ['an unclassified Error', new Error('unknown'), true],
    ['a non-boolean retryable', Object.assign(new Error('x'), { retryable: 'no' }), true],
    ['a thrown string', 'oops', true],
    ['undefined', undefined, true],
  ])('%s → %s', (_name, err, expected) => {
    expect(isRetryableWriterFailure(err)).toBe(expected);
  });
});
