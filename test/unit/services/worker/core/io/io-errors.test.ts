import { describe, expect, it } from 'vitest';
import { StorageError } from '../../../../../../src/services/storage/errors.js';
import {
  TaskIoError,
  TaskIoErrorCode,
  classifyIoError,
} from '../../../../../../src/services/worker/core/io/index.js';

describe('TaskIoErrorCode', () => {
  it('pins every code, each key equal to its value', () => {
    expect(Object.keys(TaskIoErrorCode).sort()).toEqual(
      ['BAD_REQUEST', 'CANCELLED', 'IO_FAILED', 'IO_SCOPE_CLOSED', 'SCAN_TOO_LARGE', 'UNKNOWN_OPTION'].sort(),
    );
    for (const [key, value] of Object.entries(TaskIoErrorCode)) expect(value).toBe(key);
  });
});

describe('classifyIoError', () => {
  const cases: { name: string; err: unknown; code: string; retryable: boolean; classified: boolean }[] = [
    {
      name: 'a retryable StorageError keeps its code',
      err: new StorageError('OVERLOADED', 'busy'),
      code: 'OVERLOADED',
      retryable: true,
      classified: true,
    },
    {
      name: 'a non-retryable StorageError',
      err: new StorageError('BAD_VALUE', 'bad key'),
      code: 'BAD_VALUE',
      retryable: false,
      classified: true,
    },
    {
      name: 'a TaskIoError',
      err: new TaskIoError('CANCELLED', 'closed', { retryable: false }),
      code: 'CANCELLED',
      retryable: false,
      classified: true,
    },
    {
      name: 'a plain Error is unknown: not retryable, IO_FAILED',
      err: new Error('boom'),
      code: 'IO_FAILED',
      retryable: false,
      classified: false,
    },
    {
      name: 'an error with a code but no retryable flag keeps the code, not retryable',
      err: Object.assign(new Error('reset'), { code: 'ECONNRESET' }),
      code: 'ECONNRESET',
      retryable: false,
      classified: false,
    },
    {
      name: 'a duck-typed retryable error without code',
      err: Object.assign(new Error('try again'), { retryable: true }),
      code: 'IO_FAILED',
      retryable: true,
      classified: false,
    },
    { name: 'a thrown string', err: 'oops', code: 'IO_FAILED', retryable: false, classified: false },
  ];
  it.each(cases)('$name', ({ err, code, retryable, classified }) => {
    const c = classifyIoError(err);
    expect(c).toMatchObject({ code, retryable, classified });
    expect(c.message).toBe(err instanceof Error ? err.message : String(err));
  });
});
