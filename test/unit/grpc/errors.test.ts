import { describe, it, expect } from 'vitest';
import { BlockxError } from '../../../src/kernel/errors.js';
import {
  GrpcErrorCode,
  HealthServiceUnknownError,
  WireEncodeError,
  WireFormatError,
} from '../../../src/grpc/errors.js';

describe('GrpcErrorCode', () => {
  it('maps every key to itself, so codes never drift', () => {
    for (const [key, value] of Object.entries(GrpcErrorCode)) expect(value).toBe(key);
  });

  it('errors carry their code and structured fields', () => {
    const wire = new WireFormatError({ field: 'task.x', reason: 'invalid_json', message: 'bad' });
    expect(wire).toBeInstanceOf(BlockxError);
    expect([wire.code, wire.field, wire.reason, wire.message]).toEqual([
      'WIRE_FORMAT_INVALID',
      'task.x',
      'invalid_json',
      'task.x: bad',
    ]);
    const enc = new WireEncodeError({ field: 'result', message: 'no' });
    expect([enc.code, enc.field]).toEqual(['WIRE_ENCODE_FAILED', 'result']);
    const health = new HealthServiceUnknownError('nope', ['', 'a']);
    expect([health.code, health.service, health.known]).toEqual([
      'HEALTH_SERVICE_UNKNOWN',
      'nope',
      ['', 'a'],
    ]);
  });
});
