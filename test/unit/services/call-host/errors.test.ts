// The call host's error codes: each key equals its code, and an error carries its code, its fields and
// the message the Worker's clients have always seen (a task's failure message quotes it).
import { describe, expect, it } from 'vitest';
import { BlockxError } from '../../../../src/kernel/errors.js';
import { CallHostErrorCode, NoStorageError } from '../../../../src/services/call-host/index.js';

describe('CallHostErrorCode', () => {
  it('maps every key to itself', () => {
    for (const [key, value] of Object.entries(CallHostErrorCode)) expect(value).toBe(key);
  });

  it('NoStorageError carries its code, fields and message, and is not retryable', () => {
    const io = new NoStorageError('t1', 'get');
    expect(io).toBeInstanceOf(BlockxError);
    expect(io).toMatchObject({ code: 'NO_STORAGE', taskId: 't1', operation: 'get', retryable: false });
    expect(io.message).toBe('task t1: io.get needs storage, but this worker runs without the IO subsystem');
  });
});
