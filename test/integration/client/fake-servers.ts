// Real grpc-js servers on 127.0.0.1:0 playing scripted Coordinator and Worker parts, for the client tests.
import * as grpc from '@grpc/grpc-js';
import { taskResultToWire, taskUpdateToWire } from '../../../src/grpc/convert.js';
import type { TaskResult, TaskState } from '../../../src/grpc/domain-types.js';
import {
  coordinatorServiceDefinition,
  workerServiceDefinition,
  type CoordinatorServiceHandlers,
  type WorkerServiceHandlers,
} from '../../../src/grpc/proto.js';
import { bindServer, grpcStatusError } from '../../../src/grpc/status.js';
import type { TaskInputWireOut } from '../../../src/grpc/wire-types.js';
import { UNIMPLEMENTED_COORDINATOR_BATCH, UNIMPLEMENTED_WORKER_BATCH } from '../../support/unimplemented.js';

/** A scripted failure: gRPC status plus the business code in `blockx-error-code`. */
export interface Fault {
  readonly status: grpc.status;
  readonly business?: string;
  readonly message?: string;
}

export const UNAVAILABLE: Fault = { status: grpc.status.UNAVAILABLE, business: 'Unavailable' };
export const ABORTED: Fault = { status: grpc.status.ABORTED, business: 'SlotUncertain' };
export const NO_CAPACITY: Fault = { status: grpc.status.RESOURCE_EXHAUSTED, business: 'NoExecutableSlot' };
export const NO_SLOT: Fault = { status: grpc.status.RESOURCE_EXHAUSTED, business: 'NoSlot' };
export const INVALID_SLOT: Fault = { status: grpc.status.FAILED_PRECONDITION, business: 'InvalidSlot' };

function faultError(f: Fault): grpc.ServiceError {
  return grpcStatusError(f.status, f.message ?? `scripted ${grpc.status[f.status]}`, f.business);
}

export async function serve(
  add: (server: grpc.Server) => void,
): Promise<{ address: string; stop(): Promise<void> }> {
  const server = new grpc.Server();
  add(server);
  const port = await bindServer(server, '127.0.0.1:0');
  return {
    address: `127.0.0.1:${port}`,
    stop: async () => server.forceShutdown(),
  };
}

/** A Coordinator answering ReserveWorkerSlot from a script; after it runs out, always `workerAddr`. */
export class FakeCoordinator {
  readonly reserveCalls: string[] = [];
  script: Fault[] = [];
  workerAddr = '';
  slotCounter = 0;

  handlers(): CoordinatorServiceHandlers {
    return {
      ...UNIMPLEMENTED_COORDINATOR_BATCH,
      ReserveWorkerSlot: (call, callback) => {
        const { taskId } = call.request;
        this.reserveCalls.push(taskId);
        const fault = this.script.shift();
        if (fault) return callback(faultError(fault));
        callback(null, { taskId, workerAddr: this.workerAddr, slotId: `slot-${++this.slotCounter}` });
      },
    };
  }
}

export interface SubmitCall {
  readonly task: TaskInputWireOut;
  readonly slotId: string;
}

/** How a submitted task ends (per task id prefix `fail-` → FAILED, else SUCCEEDED), unless overridden. */
export type Ending = { state: Extract<TaskState, 'SUCCEEDED' | 'FAILED'>; result: TaskResult };

export function succeeded(outputs: unknown): Ending {
  return {
    state: 'SUCCEEDED',
    result: {
      success: true,
      executeResult: {
        failureCode: '',
        retryable: false,
        failureMessage: '',
        pluginResults: [
          {
            pluginName: 'ReturnValueResultHandler',
            success: true,
            failureCode: '',
            failureMessage: '',
            result: outputs,
          },
        ],
      },
    },
  };
}

export function failed(failureCode: string, failureMessage: string, retryable = false): Ending {
  return {
    state: 'FAILED',
    result: { success: false, executeResult: { failureCode, retryable, failureMessage, pluginResults: [] } },
  };
}

/**
 * A Worker: SubmitTask answers RUNNING (after the scripted faults); WatchTasks sends a RUNNING snapshot
 * for each known id, then the terminal update `terminalAfterMs` later, then ends the stream. Unknown ids
 * get the `not_found` terminal snapshot, as the real Worker sends.
 */
export class FakeWorker {
  readonly submitCalls: SubmitCall[] = [];
  readonly watchCalls: string[][] = [];
  submitScript: Fault[] = [];
  endings = new Map<string, Ending>();
  defaultEnding: Ending = succeeded(['hello ct2']);
  terminalAfterMs = 5;
  /** How long after the terminal updates the stream ends (Infinity: never, as a faulty peer). */
  endDelayMs = 0;
  /** Streams the client cancelled before this fake ended them. */
  cancelledStreams = 0;
  /** Streams this fake ended before the client cancelled them. */
  endedStreams = 0;
  address = '';

  handlers(): WorkerServiceHandlers {
    return {
      ...UNIMPLEMENTED_WORKER_BATCH,
      RequestTaskSlot: (call, callback) =>
        callback(null, { taskId: call.request.taskId, slotId: 'inline', state: 'TASK_STATE_ALLOCATED' }),
      SubmitTask: (call, callback) => {
        const task = call.request.task as TaskInputWireOut;
        this.submitCalls.push({ task, slotId: call.request.slotId });
        const fault = this.submitScript.shift();
        if (fault) return callback(faultError(fault));
        callback(null, { taskId: task.taskId, state: 'TASK_STATE_RUNNING' });
      },
      GetTaskResult: (call, callback) => {
        const { taskId } = call.request;
        const ending = this.known(taskId) ? this.endingOf(taskId) : undefined;
        if (!ending) return callback(faultError({ status: grpc.status.NOT_FOUND, business: 'NotFound' }));
        callback(null, {
          taskId,
          state: `TASK_STATE_${ending.state}`,
          result: taskResultToWire(ending.result),
        });
      },
      WatchTasks: (call) => {
        const ids = [...call.request.taskIds];
        this.watchCalls.push(ids);
        let cancelled = false;
        let ended = false;
        const end = (): void => {
          if (cancelled) return;
          ended = true;
          this.endedStreams++;
          call.end();
        };
        // grpc-js also emits 'cancelled' after a stream it ended itself; only earlier ones are the client's.
        call.on('cancelled', () => {
          cancelled = true;
          if (!ended) this.cancelledStreams++;
        });
        const base = { workerAddr: this.address, timestampMs: 1 };
        const pending = ids.filter((id) => this.known(id));
        for (const id of ids) {
          if (!this.known(id)) {
            call.write(
              taskUpdateToWire({
                ...base,
                taskId: id,
                state: 'UNSPECIFIED',
                isTerminal: true,
                error: 'not_found',
              }),
            );
          } else {
            call.write(
              taskUpdateToWire({ ...base, taskId: id, state: 'RUNNING', isTerminal: false, error: '' }),
            );
          }
        }
        if (pending.length === 0) return end();
        setTimeout(() => {
          if (cancelled) return;
          for (const id of pending) {
            const ending = this.endingOf(id);
            call.write(
              taskUpdateToWire({
                ...base,
                taskId: id,
                state: ending.state,
                isTerminal: true,
                result: ending.result,
                error: '',
              }),
            );
          }
          if (this.endDelayMs === 0) end();
          else if (Number.isFinite(this.endDelayMs)) setTimeout(end, this.endDelayMs);
        }, this.terminalAfterMs);
      },
    };
  }

  private known(taskId: string): boolean {
    return this.submitCalls.some((c) => c.task.taskId === taskId) || this.endings.has(taskId);
  }

  private endingOf(taskId: string): Ending {
    return this.endings.get(taskId) ?? this.defaultEnding;
  }
}

export async function startFakeCluster(): Promise<{
  coordinator: FakeCoordinator;
  worker: FakeWorker;
  coordinatorAddr: string;
  workerAddr: string;
  stop(): Promise<void>;
}> {
  const coordinator = new FakeCoordinator();
  const worker = new FakeWorker();
  const w = await serve((s) => s.addService(workerServiceDefinition, worker.handlers()));
  const c = await serve((s) => s.addService(coordinatorServiceDefinition, coordinator.handlers()));
  worker.address = w.address;
  coordinator.workerAddr = w.address;
  return {
    coordinator,
    worker,
    coordinatorAddr: c.address,
    workerAddr: w.address,
    stop: async () => {
      await c.stop();
      await w.stop();
    },
  };
}
