// Stable error codes of the observability kit (metrics HTTP server). Each key equals its code;
// test/unit/kernel/observability/errors.test.ts pins that, so a code never drifts.

import { BlockxError } from '../errors.js';

export const ObservabilityErrorCode = {
  /** `observability.prometheus.listenAddr` is not `host:port`, `:port` or `port`. */
  METRICS_ADDRESS_INVALID: 'METRICS_ADDRESS_INVALID',
  /** The metrics HTTP server could not listen (port in use, no such interface, ...). */
  METRICS_LISTEN_FAILED: 'METRICS_LISTEN_FAILED',
} as const;
export type ObservabilityErrorCode = (typeof ObservabilityErrorCode)[keyof typeof ObservabilityErrorCode];

export class MetricsServerError extends BlockxError {
  declare readonly code: ObservabilityErrorCode;
  /** The listen address as configured. */
  readonly listenAddr: string;
  constructor(
    code: ObservabilityErrorCode,
    listenAddr: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.listenAddr = listenAddr;
  }
}
