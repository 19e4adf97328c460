// A per-task refusal inside a batched answer (a ReservationError or a TaskError; docs/batched-protocol.md),
// kept as plain data until the task gives up. A batch of 1,000 ids that all come back "no capacity" is
// normal under load and is retried: building 1,000 BlockxClientErrors (each captures a stack trace) only to
// drop them cost a tenth of the client's CPU in bench/bullmq.
import { status as GrpcStatus } from '@grpc/grpc-js';
import { BlockxClientError, clientCodeOfStatus, type ClientErrorCode } from '../errors.js';

export interface Refusal {
  readonly code: ClientErrorCode;
  readonly grpcStatus: GrpcStatus;
  /** The business code of the answer, '' when none. */
  readonly businessCode: string;
  readonly message: string;
  readonly rpc: string;
  readonly address: string;
}

/** What a batched step can fail with: a refusal of that one task, or an error of the whole call. */
export type Failure = Refusal | BlockxClientError;

export function refusal(
  status: number,
  businessCode: string,
  message: string,
  rpc: string,
  address: string,
): Refusal {
  return {
    code: clientCodeOfStatus(status as GrpcStatus),
    grpcStatus: status as GrpcStatus,
    businessCode,
    message: `${rpc} to ${address}: ${message}`,
    rpc,
    address,
  };
}

/** The failure as the error a caller sees, with the task's id and attempt count. */
export function failureError(f: Failure, taskId: string, attempts: number): BlockxClientError {
  if (f instanceof BlockxClientError) return f.with({ taskId, attempts });
  return new BlockxClientError(f.code, f.message, {
    grpcStatus: f.grpcStatus,
    ...(f.businessCode !== '' ? { businessCode: f.businessCode } : {}),
    taskId,
    address: f.address,
    rpc: f.rpc,
    attempts,
  });
}

export const isUnimplemented = (f: Failure): boolean => f.grpcStatus === GrpcStatus.UNIMPLEMENTED;
