// The one error mapping (adapters/error-status.ts) in its two shapes: the ServiceError of a unary RPC
// and the TaskError of one id in a batched RPC carry the same status, business code and message.
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { WireFormatError } from '../../../../../../src/grpc/errors.js';
import { BLOCKX_ERROR_CODE_KEY } from '../../../../../../src/grpc/status.js';
import { MAX_STATUS_MESSAGE_BYTES } from '../../../../../../src/kernel/input-bounds.js';
import {
  taskErrorToWire,
  workerCodeToGRPC,
  workerErrorStatus,
} from '../../../../../../src/services/worker/adapters/grpc/error-status.js';
import { WorkerAdmissionError } from '../../../../../../src/services/worker/core/index.js';

describe('workerErrorStatus', () => {
  it.each<[string, unknown, grpc.status, string]>([
    [
      'InvalidArgument',
      WorkerAdmissionError.invalidArgument('t', 'ttlMs', 0, 'bad'),
      grpc.status.INVALID_ARGUMENT,
      'InvalidArgument',
    ],
    ['NoSlot', WorkerAdmissionError.noSlot('t', 3, 3), grpc.status.RESOURCE_EXHAUSTED, 'NoSlot'],
    [
      'NoSlot (credit window)',
      WorkerAdmissionError.noCredit('t', 8),
      grpc.status.RESOURCE_EXHAUSTED,
      'NoSlot',
    ],
    [
      'InvalidSlot',
      WorkerAdmissionError.invalidSlot('t', 's', 'SlotUnknown'),
      grpc.status.FAILED_PRECONDITION,
      'InvalidSlot',
    ],
    [
      'Unavailable',
      WorkerAdmissionError.unavailable('t', 'Draining'),
      grpc.status.UNAVAILABLE,
      'Unavailable',
    ],
    ['NotFound', WorkerAdmissionError.notFound('t'), grpc.status.NOT_FOUND, 'NotFound'],
    [
      'WireFormatError',
      new WireFormatError({ field: 'task.config', reason: 'invalid_json', message: 'is not JSON' }),
      grpc.status.INVALID_ARGUMENT,
      'InvalidArgument',
    ],
    ['a bug', new TypeError('oops'), grpc.status.INTERNAL, ''],
  ])('%s: the TaskError and the ServiceError agree', (_name, err, status, code) => {
    const mapped = workerErrorStatus(err);
    const wire = taskErrorToWire(mapped);
    expect(wire).toEqual({ code, status, message: mapped.message });
    const service = workerCodeToGRPC(err);
    expect(service.code).toBe(status);
    expect(service.details).toBe(mapped.message);
    expect(service.metadata.get(BLOCKX_ERROR_CODE_KEY)).toEqual(code === '' ? [] : [code]);
  });

  it('names the credit window in a NoSlot refusal of RunTasks', () => {
    expect(workerErrorStatus(WorkerAdmissionError.noCredit('t', 8)).message).toContain('credit window 8');
  });

  it('cuts the message to MAX_STATUS_MESSAGE_BYTES', () => {
    const err = WorkerAdmissionError.invalidArgument('t', 'field', 'v', 'x'.repeat(100_000));
    const { message } = workerErrorStatus(err);
    expect(Buffer.byteLength(message)).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES + 3);
    expect(message.endsWith('…')).toBe(true);
  });
});
