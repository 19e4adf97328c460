// Stable error codes of the shared gRPC plumbing (wire conversion, health registry).
// Each key equals its code; test/unit/grpc/errors.test.ts pins that, so a code never drifts.

import { BlockxError } from '../kernel/errors.js';

export const GrpcErrorCode = {
  /** A wire message could not be converted (bad JSON bytes, a required message missing). */
  WIRE_FORMAT_INVALID: 'WIRE_FORMAT_INVALID',
  /** A value could not be encoded for the wire (not JSON-serialisable). */
  WIRE_ENCODE_FAILED: 'WIRE_ENCODE_FAILED',
  /** setServing() named a service that createHealth() was not told about. */
  HEALTH_SERVICE_UNKNOWN: 'HEALTH_SERVICE_UNKNOWN',
} as const;
export type GrpcErrorCode = (typeof GrpcErrorCode)[keyof typeof GrpcErrorCode];

/**
 * A field of an incoming wire message is unusable. Servers map it to gRPC InvalidArgument
 * (docs/task-lifecycle.md: "`config` is not valid JSON" is InvalidArgument); `field` is the proto path, e.g.
 * `task.function_call_config.config`.
 */
export class WireFormatError extends BlockxError {
  declare readonly code: 'WIRE_FORMAT_INVALID';
  readonly field: string;
  readonly reason: 'invalid_json' | 'required';
  constructor(
    fields: { field: string; reason: 'invalid_json' | 'required'; message: string },
    options?: { cause?: unknown },
  ) {
    super(GrpcErrorCode.WIRE_FORMAT_INVALID, `${fields.field}: ${fields.message}`, options);
    this.field = fields.field;
    this.reason = fields.reason;
  }
}

/** A domain value could not be encoded for the wire, e.g. a config holding a BigInt or a cycle. */
export class WireEncodeError extends BlockxError {
  declare readonly code: 'WIRE_ENCODE_FAILED';
  readonly field: string;
  constructor(fields: { field: string; message: string }, options?: { cause?: unknown }) {
    super(GrpcErrorCode.WIRE_ENCODE_FAILED, `${fields.field}: ${fields.message}`, options);
    this.field = fields.field;
  }
}

export class HealthServiceUnknownError extends BlockxError {
  declare readonly code: 'HEALTH_SERVICE_UNKNOWN';
  readonly service: string;
  readonly known: readonly string[];
  constructor(service: string, known: readonly string[]) {
    super(
      GrpcErrorCode.HEALTH_SERVICE_UNKNOWN,
      `health: unknown service ${JSON.stringify(service)} (known: ${known.map((s) => JSON.stringify(s)).join(', ')})`,
    );
    this.service = service;
    this.known = known;
  }
}
