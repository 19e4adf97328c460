import { describe, expect, it } from 'vitest';
import {
  DeploymentUnknownError,
  NoStorageError,
  WorkerRuntimeErrorCode,
} from '../../../../../src/services/worker/adapters/errors.js';
import { BlockxError } from '../../../../../src/kernel/errors.js';

describe('WorkerRuntimeErrorCode', () => {
  it('maps every key to itself', () => {
    for (const [key, value] of Object.entries(WorkerRuntimeErrorCode)) expect(value).toBe(key);
  });

  it('errors carry their code and structured fields', () => {
    const io = new NoStorageError('t1', 'get');
    expect(io).toBeInstanceOf(BlockxError);
    expect(io).toMatchObject({ code: 'NO_STORAGE', taskId: 't1', operation: 'get', retryable: false });
    const dep = new DeploymentUnknownError('nope', ['block', 'bundle']);
    expect(dep).toMatchObject({ code: 'DEPLOYMENT_UNKNOWN', deployment: 'nope' });
    expect(dep.message).toContain('block, bundle');
  });
});
