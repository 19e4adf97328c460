// Errors of the TypeScript client. One class, BlockxClientError, with a stable `code`, the gRPC status it
// came from (if any) and the business code the server put in the `blockx-error-code` trailer (NoSlot,
// SlotUncertain, NoExecutableSlot, ...). Each key of ClientErrorCode equals its value; a test pins that.
//
// A task that ran and ended FAILED is NOT an error: run() resolves with success=false and the failure
// code. These errors mean the client could not place, submit or follow the task.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { BlockxError, SharedErrorCode } from '../kernel/errors.js';
import { businessCodeOf, isServiceError } from '../grpc/status.js';

export const ClientErrorCode = {
  /** The server is not ready or unreachable; retrying is safe. gRPC UNAVAILABLE. */
  UNAVAILABLE: 'UNAVAILABLE',
  /** A slot may be held for the task until its TTL; retry with the same task id. gRPC ABORTED. */
  SLOT_UNCERTAIN: 'SLOT_UNCERTAIN',
  /** No Worker had a free slot. gRPC RESOURCE_EXHAUSTED. */
  NO_CAPACITY: 'NO_CAPACITY',
  /** The request or task was rejected as invalid (also: bad client options). gRPC INVALID_ARGUMENT. */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  /** The slot id was refused (expired or bound to another task). gRPC FAILED_PRECONDITION. */
  INVALID_SLOT: 'INVALID_SLOT',
  /** The Worker does not know the task (never submitted there, or its result expired). gRPC NOT_FOUND. */
  NOT_FOUND: 'NOT_FOUND',
  /** Cancelled by the caller (signal, close()). gRPC CANCELLED. */
  CANCELLED: SharedErrorCode.CANCELLED,
  /** An RPC deadline passed. gRPC DEADLINE_EXCEEDED. */
  DEADLINE: 'DEADLINE',
  /** Anything else: a server bug, an unexpected status, a malformed reply. */
  INTERNAL: 'INTERNAL',
} as const;
export type ClientErrorCode = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

export interface ClientErrorFields {
  /** The gRPC status code of the failed call, when the error came from one. */
  readonly grpcStatus?: GrpcStatus;
  /** The server's business code from the `blockx-error-code` metadata key. */
  readonly businessCode?: string;
  readonly taskId?: string;
  /** The address the failed call went to. */
  readonly address?: string;
  /** The RPC that failed, e.g. 'ReserveWorkerSlot'. */
  readonly rpc?: string;
  /** Placement attempts made before giving up. */
  readonly attempts?: number;
  readonly cause?: unknown;
}

export class BlockxClientError extends BlockxError {
  declare readonly code: ClientErrorCode;
  readonly grpcStatus: GrpcStatus | undefined;
  readonly businessCode: string | undefined;
  readonly taskId: string | undefined;
  readonly address: string | undefined;
  readonly rpc: string | undefined;
  readonly attempts: number | undefined;

  constructor(code: ClientErrorCode, message: string, fields: ClientErrorFields = {}) {
    super(code, message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.grpcStatus = fields.grpcStatus;
    this.businessCode = fields.businessCode;
    this.taskId = fields.taskId;
    this.address = fields.address;
    this.rpc = fields.rpc;
    this.attempts = fields.attempts;
  }

  /**
   * The same error with more context (e.g. the attempt count once retries are exhausted). The message is
   * kept as it is: for NO_CAPACITY it is the Coordinator's, which names every filter reason with its
   * numbers (`no executable slot: 2 workers — error rate 0.62 > 0.50 on 2 workers`); the attempt count
   * travels in `attempts`.
   */
  with(fields: Omit<ClientErrorFields, 'cause'>): BlockxClientError {
    return new BlockxClientError(this.code, this.message, {
      grpcStatus: this.grpcStatus,
      businessCode: this.businessCode,
      taskId: this.taskId,
      address: this.address,
      rpc: this.rpc,
      attempts: this.attempts,
      cause: this.cause,
      ...fields,
    });
  }
}

/**
 * Whether trying the same task again later may succeed: the cluster was busy, unreachable or unsure, or
 * the call was cancelled. Invalid input, an unknown task and internal errors will not change by waiting.
 */
export function isRetryableClientCode(code: ClientErrorCode): boolean {
  switch (code) {
    case ClientErrorCode.UNAVAILABLE:
    case ClientErrorCode.SLOT_UNCERTAIN:
    case ClientErrorCode.NO_CAPACITY:
    case ClientErrorCode.INVALID_SLOT:
    case ClientErrorCode.CANCELLED:
    case ClientErrorCode.DEADLINE:
      return true;
    case ClientErrorCode.INVALID_ARGUMENT:
    case ClientErrorCode.NOT_FOUND:
    case ClientErrorCode.INTERNAL:
      return false;
    default: {
      const _exhaustive: never = code;
      return _exhaustive;
    }
  }
}

/** The one mapping of gRPC status codes to client codes. */
export function clientCodeOfStatus(code: GrpcStatus): ClientErrorCode {
  switch (code) {
    case GrpcStatus.UNAVAILABLE:
      return ClientErrorCode.UNAVAILABLE;
    case GrpcStatus.ABORTED:
      return ClientErrorCode.SLOT_UNCERTAIN;
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return ClientErrorCode.NO_CAPACITY;
    case GrpcStatus.INVALID_ARGUMENT:
      return ClientErrorCode.INVALID_ARGUMENT;
    case GrpcStatus.FAILED_PRECONDITION:
      return ClientErrorCode.INVALID_SLOT;
    case GrpcStatus.NOT_FOUND:
      return ClientErrorCode.NOT_FOUND;
    case GrpcStatus.CANCELLED:
      return ClientErrorCode.CANCELLED;
    case GrpcStatus.DEADLINE_EXCEEDED:
      return ClientErrorCode.DEADLINE;
    default:
      return ClientErrorCode.INTERNAL;
  }
}

/** Any failure of a call as a BlockxClientError (already-typed errors pass through, with `context` added). */
export function toClientError(
  err: unknown,
  context: { readonly rpc?: string; readonly address?: string; readonly taskId?: string } = {},
): BlockxClientError {
  if (err instanceof BlockxClientError) return err;
  if (isServiceError(err)) {
    const business = businessCodeOf(err);
    // grpc-js ends a connection failure with "Resolution note: " and, when name resolution had nothing to
    // say, nothing after it: drop the dangling label.
    const details = (err.details || err.message).replace(/[.;,]?\s*Resolution note:\s*$/, '');
    const where = context.rpc ? `${context.rpc}${context.address ? ` to ${context.address}` : ''}: ` : '';
    return new BlockxClientError(clientCodeOfStatus(err.code), `${where}${details}`, {
      grpcStatus: err.code,
      ...(business !== undefined ? { businessCode: business } : {}),
      ...context,
      cause: err,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new BlockxClientError(ClientErrorCode.INTERNAL, message, { ...context, cause: err });
}
