import { describe, expect, it } from 'vitest';
import { BlockxError } from '../../../../src/kernel/errors.js';
import {
  isRetryableStorageError,
  StorageError,
  StorageErrorCode,
} from '../../../../src/services/storage/errors.js';

describe('StorageErrorCode', () => {
  it('every key equals its value', () => {
    for (const [k, v] of Object.entries(StorageErrorCode)) expect(v).toBe(k);
  });

  it('exactly the transient codes are retryable', () => {
    const retryable = Object.values(StorageErrorCode).filter((c) => new StorageError(c, 'm').retryable);
    expect(retryable.sort()).toEqual(['CLOSED', 'CONFLICT', 'CONNECTION', 'OVERLOADED']);
    expect(isRetryableStorageError(new StorageError('CONFLICT', 'm'))).toBe(true);
    expect(isRetryableStorageError(new Error('CONFLICT'))).toBe(false);
  });

  it('carries structured details and the cause', () => {
    const cause = new Error('driver');
    const e = new StorageError('BAD_VALUE', 'bad', {
      table: 't',
      column: 'c',
      backend: 'sqlite::memory:',
      cause,
    });
    expect(e).toBeInstanceOf(BlockxError);
    expect([e.code, e.name, e.details.table, e.details.column, e.cause]).toEqual([
      'BAD_VALUE',
      'StorageError',
      't',
      'c',
      cause,
    ]);
  });
});
