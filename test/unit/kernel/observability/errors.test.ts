import { describe, expect, it } from 'vitest';
import { MetricsServerError, ObservabilityErrorCode } from '../../../../src/kernel/observability/errors.js';

describe('observability error codes', () => {
  it('each key equals its code, so codes never drift', () => {
    for (const [key, code] of Object.entries(ObservabilityErrorCode)) expect(code).toBe(key);
  });

  it('MetricsServerError carries the listen address as a field', () => {
    const err = new MetricsServerError('METRICS_LISTEN_FAILED', ':9464', 'in use');
    expect(err).toMatchObject({
      code: 'METRICS_LISTEN_FAILED',
      listenAddr: ':9464',
      name: 'MetricsServerError',
    });
  });
});
