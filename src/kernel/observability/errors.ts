// Stable error codes of the observability kit (metrics HTTP server, profiling). Each key equals its code;
// test/unit/kernel/observability/errors.test.ts pins that, so a code never drifts.

import { BlockxError } from '../errors.js';

export const ObservabilityErrorCode = {
  /** `observability.prometheus.listenAddr` is not `host:port`, `:port` or `port`. */
  METRICS_ADDRESS_INVALID: 'METRICS_ADDRESS_INVALID',
  /** The metrics HTTP server could not listen (port in use, no such interface, ...). */
  METRICS_LISTEN_FAILED: 'METRICS_LISTEN_FAILED',
  /** A profiling variable (COORDINATOR_CPU_PROFILE, ...) names a file that cannot be written. */
  PROFILE_FILE_UNWRITABLE: 'PROFILE_FILE_UNWRITABLE',
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

/** A profiling variable names a file the process cannot write (profiling.ts). */
export class ProfilingError extends BlockxError {
  declare readonly code: ObservabilityErrorCode;
  /** The variable, e.g. `WORKER_TRACE`. */
  readonly variable: string;
  /** The file it names (with `%p` and the Executor's pid filled in). */
  readonly file: string;
  constructor(
    code: ObservabilityErrorCode,
    variable: string,
    file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.variable = variable;
    this.file = file;
  }
}
