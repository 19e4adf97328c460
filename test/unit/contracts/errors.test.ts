import { describe, expect, it } from 'vitest';
import { BlockxError } from '../../../src/kernel/errors.js';
import {
  HeartbeatParseError,
  RegistryErrorCode,
  RegistryPrefixError,
} from '../../../src/contracts/errors.js';

describe('RegistryErrorCode', () => {
  it('every key equals its value', () => {
    for (const [k, v] of Object.entries(RegistryErrorCode)) expect(v).toBe(k);
  });

  it('errors carry a stable code and structured fields', () => {
    const p = new RegistryPrefixError('REGISTRY_PREFIX_INVALID', { prefix: 'x', index: 2, message: 'bad' });
    expect(p).toBeInstanceOf(BlockxError);
    expect([p.code, p.prefix, p.index, p.name]).toEqual([
      'REGISTRY_PREFIX_INVALID',
      'x',
      2,
      'RegistryPrefixError',
    ]);
    const h = new HeartbeatParseError({ field: 'taskSlots', message: 'must be an integer' });
    expect([h.code, h.field, h.message]).toEqual([
      'HEARTBEAT_INVALID',
      'taskSlots',
      'invalid heartbeat: taskSlots: must be an integer',
    ]);
  });
});
