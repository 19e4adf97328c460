// Driver errors → storage codes: the table the backends' retry behaviour rests on.
import { describe, expect, it } from 'vitest';
import {
  classifyPostgresError,
  classifySqliteError,
  storageErrorFrom,
} from '../../../../src/services/storage/error-classify.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('classifyPostgresError', () => {
  it.each([
    [withCode('40001'), 'CONFLICT'],
    [withCode('40P01'), 'CONFLICT'],
    [withCode('55P03'), 'CONFLICT'],
    [withCode('40000'), 'CONFLICT'],
    [withCode('40003'), 'QUERY_FAILED'],
    [withCode('08006'), 'CONNECTION'],
    [withCode('08001'), 'CONNECTION'],
    [withCode('57P01'), 'CONNECTION'],
    [withCode('57P02'), 'CONNECTION'],
    [withCode('57P03'), 'CONNECTION'],
    [withCode('ECONNREFUSED'), 'CONNECTION'],
    [withCode('ECONNRESET'), 'CONNECTION'],
    [withCode('EPIPE'), 'CONNECTION'],
    [withCode('ETIMEDOUT'), 'CONNECTION'],
    [new Error('Connection terminated unexpectedly'), 'CONNECTION'],
    [new Error('Connection terminated'), 'CONNECTION'],
    [new Error('timeout exceeded when trying to connect'), 'CONNECTION'],
    [new Error('Client has encountered a connection error and is not queryable'), 'CONNECTION'],
    [withCode('22003', 'integer out of range'), 'BAD_VALUE'],
    [withCode('22P02'), 'BAD_VALUE'],
    [withCode('42P01', 'relation "x" does not exist'), 'QUERY_FAILED'],
    [withCode('23505'), 'QUERY_FAILED'],
    [new Error('something else'), 'QUERY_FAILED'],
    ['not even an error', 'QUERY_FAILED'],
  ])('%s → %s', (err, code) => {
    expect(classifyPostgresError(err)).toBe(code);
  });
});

describe('classifySqliteError', () => {
  it.each([
    ['SQLITE_BUSY', 'CONFLICT'],
    ['SQLITE_BUSY_SNAPSHOT', 'CONFLICT'],
    ['SQLITE_LOCKED', 'CONFLICT'],
    ['SQLITE_LOCKED_SHAREDCACHE', 'CONFLICT'],
    ['SQLITE_TOOBIG', 'BAD_VALUE'],
    ['SQLITE_CONSTRAINT_PRIMARYKEY', 'QUERY_FAILED'],
    ['SQLITE_ERROR', 'QUERY_FAILED'],
  ])('%s → %s', (code, expected) => {
    expect(classifySqliteError(withCode(code))).toBe(expected);
  });
});

describe('storageErrorFrom', () => {
  it('names backend, table and driver code, and keeps the driver error as cause', () => {
    const cause = withCode('40001', 'could not serialize access');
    const e = storageErrorFrom('CONFLICT', cause, 'postgres://u:***@h/db', 'items');
    expect(e.message).toBe('postgres://u:***@h/db (table "items"): could not serialize access [40001]');
    expect(e.details).toMatchObject({ table: 'items', backend: 'postgres://u:***@h/db' });
    expect([e.cause, e.retryable]).toEqual([cause, true]);
  });
});
