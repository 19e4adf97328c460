// The one mapping of Worker errors to gRPC status (docs/task-lifecycle.md § Admission errors and terminal
// states), in two shapes: a ServiceError for a unary call or a stream (`workerCodeToGRPC`), and the per-task
// TaskError of the batched RPCs (docs/batched-protocol.md), which carries the same status number, business
// code and message the unary RPC would have returned. Both come from `workerErrorStatus`, so they never
// drift.

import * as grpc from '@grpc/grpc-js';
import { WireFormatError } from '../../../../grpc/errors.js';
import { grpcStatusError } from '../../../../grpc/status.js';
import type { TaskErrorWire } from '../../../../grpc/wire-types.js';
import { MAX_STATUS_MESSAGE_BYTES, cutText } from '../../../../kernel/input-bounds.js';
import { WorkerAdmissionError, WorkerErrorCode } from '../../core/index.js';
import { describeError } from '../../../../kernel/errors.js';

/** A Worker error as a status: what the unary RPC returns, what a batched RPC puts in a TaskError. */
export interface WorkerErrorStatus {
  readonly status: grpc.status;
  /** The business code (`blockx-error-code`); undefined for INTERNAL. */
  readonly code: WorkerErrorCode | undefined;
  /** Human-readable detail, cut to MAX_STATUS_MESSAGE_BYTES (docs/security.md § Input bounds). */
  readonly message: string;
}

/**
 *   InvalidArgument → INVALID_ARGUMENT (also a WireFormatError: bad JSON, missing message)
 *   NoSlot → RESOURCE_EXHAUSTED · InvalidSlot → FAILED_PRECONDITION · Unavailable → UNAVAILABLE
 *   NotFound → NOT_FOUND · TaskIdTaken → ALREADY_EXISTS · anything else → INTERNAL (a bug, never a
 *   business outcome).
 */
export function workerErrorStatus(err: unknown): WorkerErrorStatus {
  if (err instanceof WorkerAdmissionError) {
    const code = err.code;
    let status: grpc.status;
    switch (code) {
      case WorkerErrorCode.InvalidArgument:
        status = grpc.status.INVALID_ARGUMENT;
        break;
      case WorkerErrorCode.NoSlot:
        status = grpc.status.RESOURCE_EXHAUSTED;
        break;
      case WorkerErrorCode.InvalidSlot:
        status = grpc.status.FAILED_PRECONDITION;
        break;
      case WorkerErrorCode.Unavailable:
        status = grpc.status.UNAVAILABLE;
        break;
      case WorkerErrorCode.NotFound:
        status = grpc.status.NOT_FOUND;
        break;
      case WorkerErrorCode.TaskIdTaken:
        status = grpc.status.ALREADY_EXISTS;
        break;
      default: {
        const unreachable: never = code;
        return internal(`unknown worker error code ${String(unreachable)}`);
      }
    }
    return { status, code, message: cut(err.message) };
  }
  if (err instanceof WireFormatError) {
    return {
      status: grpc.status.INVALID_ARGUMENT,
      code: WorkerErrorCode.InvalidArgument,
      message: cut(err.message),
    };
  }
  return internal(`internal error: ${describeError(err)}`);
}

/**
 * The ServiceError of `err`. Built by `grpcStatusError`, which caps its message too (docs/security.md
 * § Input bounds); the business code travels in the trailing metadata key `blockx-error-code`.
 */
export function workerCodeToGRPC(err: unknown): grpc.ServiceError {
  const s = workerErrorStatus(err);
  return grpcStatusError(s.status, s.message, s.code);
}

/** The TaskError of a refused id or task in a batched RPC. */
export function taskErrorToWire(s: WorkerErrorStatus): TaskErrorWire {
  return { code: s.code ?? '', status: s.status, message: s.message };
}

function internal(message: string): WorkerErrorStatus {
  return { status: grpc.status.INTERNAL, code: undefined, message: cut(message) };
}

function cut(message: string): string {
  return cutText(message, MAX_STATUS_MESSAGE_BYTES);
}
