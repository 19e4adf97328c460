// WorkerService over gRPC (DESIGN §4.1): RequestTaskSlot, SubmitTask, GetTaskResult, WatchTasks.
//
// Handlers are thin: decode (wire.ts), one synchronous call into the orchestrator, encode. Every error
// leaves through `workerCodeToGRPC`, the single mapping of domain errors to status codes (the seeds'
// table); the business code travels in the trailing metadata key `blockx-error-code`.

import * as grpc from '@grpc/grpc-js';
import { WireFormatError } from '../../../grpc/errors.js';
import type { WorkerServiceHandlers } from '../../../grpc/proto.js';
import { failServerStream, grpcStatusError } from '../../../grpc/status.js';
import { WorkerAdmissionError, WorkerErrorCode, acceptWatchTaskIds } from '../core/index.js';
import type { Orchestrator } from './orchestrator.js';
import type { WorkerLogger } from './worker-logger.js';
import { describeError } from './phase-results.js';
import type { SubscriptionManager } from './subscription-manager.js';
import {
  requestTaskSlotToWire,
  submitTaskFromWire,
  submitTaskToWire,
  taskStatusToWire,
  watchUpdateToWire,
  type TaskConfigValidator,
} from './wire.js';

/**
 * The one mapping of Worker errors to gRPC status (seeds: "Slots and admission"):
 *   InvalidArgument → INVALID_ARGUMENT (also a WireFormatError: bad JSON, missing message)
 *   NoSlot → RESOURCE_EXHAUSTED · InvalidSlot → FAILED_PRECONDITION · Unavailable → UNAVAILABLE
 *   NotFound → NOT_FOUND · anything else → INTERNAL (a bug, never a business outcome).
 * Every status is built by `grpcStatusError`, which caps its message (docs/security.md § Input bounds).
 */
export function workerCodeToGRPC(err: unknown): grpc.ServiceError {
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
      default: {
        const unreachable: never = code;
        return grpcStatusError(grpc.status.INTERNAL, `unknown worker error code ${String(unreachable)}`);
      }
    }
    return grpcStatusError(status, err.message, code);
  }
  if (err instanceof WireFormatError) {
    return grpcStatusError(grpc.status.INVALID_ARGUMENT, err.message, WorkerErrorCode.InvalidArgument);
  }
  return grpcStatusError(grpc.status.INTERNAL, `internal error: ${describeError(err)}`);
}

export interface WorkerServiceDeps {
  readonly orchestrator: Pick<Orchestrator, 'requestTaskSlot' | 'submitTask' | 'getTaskResult'>;
  readonly subscriptions: Pick<SubscriptionManager, 'watch'>;
  readonly plugins: TaskConfigValidator;
  readonly logger: WorkerLogger;
}

export function workerServiceHandlers(deps: WorkerServiceDeps): WorkerServiceHandlers {
  const { orchestrator, subscriptions, plugins, logger } = deps;
  const fail = (rpc: string, taskId: string, err: unknown): grpc.ServiceError => {
    const status = workerCodeToGRPC(err);
    if (status.code === grpc.status.INTERNAL) {
      logger.error({ task_id: taskId, rpc, err: describeError(err) }, `${rpc} failed`);
    } else {
      logger.debug({ task_id: taskId, rpc, code: grpc.status[status.code] }, status.details);
    }
    return status;
  };

  return {
    RequestTaskSlot(call, callback) {
      const { taskId, ttlMs } = call.request;
      let response;
      try {
        response = requestTaskSlotToWire(orchestrator.requestTaskSlot(taskId, ttlMs));
      } catch (err) {
        callback(fail('RequestTaskSlot', taskId, err));
        return;
      }
      callback(null, response);
    },

    SubmitTask(call, callback) {
      const taskId = call.request.task?.taskId ?? '';
      let response;
      try {
        const { input, slotId } = submitTaskFromWire(call.request, plugins);
        response = submitTaskToWire(orchestrator.submitTask(input, slotId));
      } catch (err) {
        callback(fail('SubmitTask', taskId, err));
        return;
      }
      callback(null, response);
    },

    GetTaskResult(call, callback) {
      const { taskId } = call.request;
      let response;
      try {
        response = taskStatusToWire(orchestrator.getTaskResult(taskId));
      } catch (err) {
        callback(fail('GetTaskResult', taskId, err));
        return;
      }
      callback(null, response);
    },

    WatchTasks(call) {
      let taskIds;
      try {
        taskIds = acceptWatchTaskIds(call.request.taskIds);
      } catch (err) {
        failServerStream(call, fail('WatchTasks', '', err));
        return;
      }
      const handle = subscriptions.watch(taskIds, {
        send: (update) => {
          let wire;
          try {
            wire = watchUpdateToWire(update);
          } catch (err) {
            failServerStream(call, fail('WatchTasks', update.taskId, err));
            throw err;
          }
          call.write(wire);
        },
        end: () => call.end(),
      });
      // The client cancelled or the connection died (keepalive included): detach what is still pending.
      if (handle.pending.size > 0) call.once('cancelled', () => handle.close());
    },
  };
}
