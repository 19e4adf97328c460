// WorkerService over gRPC (docs/task-lifecycle.md § The unary RPCs): RequestTaskSlot, SubmitTask,
// GetTaskResult, WatchTasks, and the batched RequestTaskSlots and RunTasks (docs/batched-protocol.md
// § Worker).
//
// Handlers are thin: decode (wire.ts), synchronous calls into the orchestrator, encode. Every error
// leaves through `workerErrorStatus` (error-status.ts), the single mapping of domain errors to status
// codes (the table of docs/task-lifecycle.md § Admission errors and terminal states): as a status
// (`workerCodeToGRPC`, the business code in the trailing metadata key `blockx-error-code`) or, for one id of
// a batch, as a TaskError with the same status and code.

import * as grpc from '@grpc/grpc-js';
import type { WorkerServiceHandlers } from '../../../../grpc/proto.js';
import { callerIdentity } from '../../../../grpc/peer-identity.js';
import { failServerStream } from '../../../../grpc/status.js';
import type { SlotGrantWire, WorkerCapacityWire } from '../../../../grpc/wire-types.js';
import { acceptWatchTaskIds, requireBatchSize } from '../../core/index.js';
import { taskErrorToWire, workerCodeToGRPC, workerErrorStatus } from './error-status.js';
import type { Orchestrator } from '../orchestration/orchestrator.js';
import type { ServiceLogger } from '../../../../kernel/observability/service-logger.js';
import { describeError } from '../../../../kernel/errors.js';
import type { RunTasksStreams } from './run-tasks-stream.js';
import type { SubscriptionManager } from './subscription-manager.js';
import {
  refusedSlotGrant,
  requestTaskSlotToWire,
  slotGrantToWire,
  submitTaskFromWire,
  submitTaskToWire,
  taskStatusToWire,
  watchUpdateToWire,
  type TaskConfigValidator,
} from './wire.js';

export { workerCodeToGRPC, workerErrorStatus } from './error-status.js';

export interface WorkerServiceDeps {
  readonly orchestrator: Pick<
    Orchestrator,
    'requestTaskSlot' | 'submitTask' | 'getTaskResult' | 'checkSlotTtl'
  >;
  readonly subscriptions: Pick<SubscriptionManager, 'watch'>;
  readonly plugins: TaskConfigValidator;
  readonly logger: ServiceLogger;
  /** The open RunTasks streams (run-tasks-stream.ts), built with the same orchestrator. */
  readonly runTasks: Pick<RunTasksStreams, 'serve'>;
  /**
   * The slot counts now, sent with every RequestTaskSlot(s) answer so the Coordinator learns released and
   * submitted slots without a heartbeat (docs/placement.md § Capacity from the Workers' answers).
   * Omitted: answers carry none.
   */
  readonly capacity?: () => WorkerCapacityWire;
}

export function workerServiceHandlers(deps: WorkerServiceDeps): WorkerServiceHandlers {
  const { orchestrator, subscriptions, plugins, logger, runTasks } = deps;
  // Read after the call's grants, so the counts include them.
  const capacityNow = (): { capacity?: WorkerCapacityWire } =>
    deps.capacity === undefined ? {} : { capacity: deps.capacity() };
  const fail = (rpc: string, taskId: string, err: unknown): grpc.ServiceError => {
    const status = workerCodeToGRPC(err);
    if (status.code === grpc.status.INTERNAL) {
      logger.error({ task_id: taskId, rpc, err: describeError(err) }, `${rpc} failed`);
    } else {
      logger.debug({ task_id: taskId, rpc, code: grpc.status[status.code] }, status.details);
    }
    return status;
  };

  /** One id's grant; an admission error becomes its TaskError, anything else (a bug) is thrown. */
  const slotGrant = (
    taskId: string,
    ttlMs: number,
    client: string,
    refused: Map<string, number>,
  ): SlotGrantWire => {
    try {
      return slotGrantToWire(orchestrator.requestTaskSlot(taskId, ttlMs, client));
    } catch (err) {
      const status = workerErrorStatus(err);
      if (status.code === undefined) throw err;
      refused.set(status.code, (refused.get(status.code) ?? 0) + 1);
      return refusedSlotGrant(taskId, taskErrorToWire(status));
    }
  };

  return {
    RequestTaskSlot(call, callback) {
      const { taskId, ttlMs } = call.request;
      let response;
      try {
        response = requestTaskSlotToWire(orchestrator.requestTaskSlot(taskId, ttlMs, callerIdentity(call)));
      } catch (err) {
        callback(fail('RequestTaskSlot', taskId, err));
        return;
      }
      callback(null, { ...response, ...capacityNow() });
    },

    RequestTaskSlots(call, callback) {
      const { taskIds, ttlMs } = call.request;
      let grants: SlotGrantWire[];
      try {
        // Call-level arguments fail the whole call; everything about one id stays in its grant.
        requireBatchSize('taskIds', taskIds.length);
        orchestrator.checkSlotTtl(ttlMs);
        const client = callerIdentity(call);
        const answers = new Map<string, SlotGrantWire>();
        const refused = new Map<string, number>();
        grants = taskIds.map((taskId) => {
          // A repeated id gets the same answer (RequestTaskSlot is idempotent per id anyway).
          let grant = answers.get(taskId);
          if (grant === undefined) {
            grant = slotGrant(taskId, ttlMs, client, refused);
            answers.set(taskId, grant);
          }
          return grant;
        });
        if (refused.size > 0) {
          logger.debug(
            { rpc: 'RequestTaskSlots', ids: taskIds.length, refused: Object.fromEntries(refused) },
            'RequestTaskSlots refused some ids',
          );
        }
      } catch (err) {
        callback(fail('RequestTaskSlots', '', err));
        return;
      }
      callback(null, { grants, ...capacityNow() });
    },

    RunTasks(call) {
      runTasks.serve(call);
    },

    SubmitTask(call, callback) {
      const taskId = call.request.task?.taskId ?? '';
      let response;
      try {
        const { input, slotId } = submitTaskFromWire(call.request, plugins);
        response = submitTaskToWire(orchestrator.submitTask(input, slotId, callerIdentity(call)));
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
        // Only the caller's own task is found (docs/security.md § Roles).
        response = taskStatusToWire(orchestrator.getTaskResult(taskId, callerIdentity(call)));
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
      const handle = subscriptions.watch(
        taskIds,
        {
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
        },
        // Another client's ids read as not found (docs/security.md § Roles).
        callerIdentity(call),
      );
      // The client cancelled or the connection died (keepalive included): detach what is still pending.
      if (handle.pending.size > 0) call.once('cancelled', () => handle.close());
    },
  };
}
