// The client's error codes and the one gRPC status → client code mapping.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  BlockxClientError,
  ClientErrorCode,
  clientCodeOfStatus,
  isRetryableClientCode,
  toClientError,
} from '../../../src/client/errors.js';
import { BlockxError } from '../../../src/kernel/errors.js';
import { grpcStatusError } from '../../../src/grpc/status.js';

describe('ClientErrorCode', () => {
  it('each key equals its value', () => {
    for (const [key, value] of Object.entries(ClientErrorCode)) expect(value).toBe(key);
  });
});

describe('isRetryableClientCode', () => {
  it('busy, unreachable, unsure or cancelled may succeed later; invalid, unknown or internal will not', () => {
    const retryable = Object.values(ClientErrorCode).filter(isRetryableClientCode);
    expect(retryable.sort()).toEqual([
      'CANCELLED',
      'DEADLINE',
      'INVALID_SLOT',
      'NO_CAPACITY',
      'SLOT_UNCERTAIN',
      'UNAVAILABLE',
    ]);
  });
});

describe('clientCodeOfStatus', () => {
  const table: [grpc.status, ClientErrorCode][] = [
    [grpc.status.UNAVAILABLE, 'UNAVAILABLE'],
    [grpc.status.ABORTED, 'SLOT_UNCERTAIN'],
    [grpc.status.RESOURCE_EXHAUSTED, 'NO_CAPACITY'],
    [grpc.status.INVALID_ARGUMENT, 'INVALID_ARGUMENT'],
    [grpc.status.FAILED_PRECONDITION, 'INVALID_SLOT'],
    [grpc.status.NOT_FOUND, 'NOT_FOUND'],
    [grpc.status.CANCELLED, 'CANCELLED'],
    [grpc.status.DEADLINE_EXCEEDED, 'DEADLINE'],
    [grpc.status.INTERNAL, 'INTERNAL'],
    [grpc.status.UNIMPLEMENTED, 'INTERNAL'],
    [grpc.status.PERMISSION_DENIED, 'INTERNAL'],
  ];
  it.each(table)('status %i → %s', (status, code) => expect(clientCodeOfStatus(status)).toBe(code));
});

describe('toClientError', () => {
  it('keeps the status, the blockx-error-code business code and the call context', () => {
    const e = toClientError(
      grpcStatusError(grpc.status.ABORTED, 'unable to confirm slot reservation', 'SlotUncertain'),
      {
        rpc: 'ReserveWorkerSlot',
        address: '127.0.0.1:8080',
        taskId: 't1',
      },
    );
    expect(e).toBeInstanceOf(BlockxClientError);
    expect(e).toBeInstanceOf(BlockxError);
    expect(e).toMatchObject({
      code: 'SLOT_UNCERTAIN',
      grpcStatus: grpc.status.ABORTED,
      businessCode: 'SlotUncertain',
      rpc: 'ReserveWorkerSlot',
      address: '127.0.0.1:8080',
      taskId: 't1',
    });
    expect(e.message).toBe('ReserveWorkerSlot to 127.0.0.1:8080: unable to confirm slot reservation');
  });

  it('passes a BlockxClientError through and wraps anything else as INTERNAL', () => {
    const typed = new BlockxClientError('NOT_FOUND', 'gone');
    expect(toClientError(typed)).toBe(typed);
    const e = toClientError(new Error('boom'), { taskId: 't' });
    expect(e).toMatchObject({ code: 'INTERNAL', message: 'boom', taskId: 't', grpcStatus: undefined });
  });

  it('with() adds context and keeps the rest', () => {
    const e = new BlockxClientError('NO_CAPACITY', 'full', { businessCode: 'NoSlot' }).with({ attempts: 3 });
    expect(e).toMatchObject({ code: 'NO_CAPACITY', message: 'full', businessCode: 'NoSlot', attempts: 3 });
  });
});
