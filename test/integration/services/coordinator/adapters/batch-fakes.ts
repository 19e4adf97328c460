// Fake Workers for the batched-protocol adapter tests: real grpc-js WorkerServices on loopback, each
// answering RequestTaskSlots (and RequestTaskSlot, for the fallback) in one of a few modes, and recording
// every call so a test can check what each Worker was asked.
import * as grpc from '@grpc/grpc-js';
import { workerServiceDefinition } from '../../../../../src/grpc/proto.js';
import type { WorkerServiceHandlers } from '../../../../../src/grpc/proto.js';
import { bindServer, grpcStatusError } from '../../../../../src/grpc/status.js';
import type { SlotGrantWire } from '../../../../../src/grpc/wire-types.js';

export type WorkerMode =
  /** Grants every id (slot id `<name>-<taskId>`). */
  | 'grant'
  /** Refuses every id inside the answer: TaskError NoSlot, status 8. */
  | 'noSlot'
  /** Refuses the whole call: RESOURCE_EXHAUSTED NoSlot. */
  | 'wholeNoSlot'
  /** Never answers RequestTaskSlots (nor RequestTaskSlot). */
  | 'hang'
  /** Predates the batched RPC: UNIMPLEMENTED for RequestTaskSlots, grants RequestTaskSlot. */
  | 'legacy';

const notUsed = (_call: unknown, cb?: unknown): void => {
  if (typeof cb === 'function')
    (cb as grpc.sendUnaryData<never>)(grpcStatusError(grpc.status.UNIMPLEMENTED, 'n/a'));
};

export class BatchFakeWorker {
  readonly server = new grpc.Server();
  addr = '';
  /** Every RequestTaskSlots, in arrival order. */
  readonly batchCalls: { taskIds: string[]; ttlMs: number }[] = [];
  /** Every RequestTaskSlot task id, in arrival order. */
  readonly unaryCalls: string[] = [];

  constructor(
    readonly name: string,
    public mode: WorkerMode,
  ) {}

  async start(): Promise<this> {
    const handlers: WorkerServiceHandlers = {
      RequestTaskSlots: (call, cb) => {
        const { taskIds, ttlMs } = call.request;
        this.batchCalls.push({ taskIds: [...taskIds], ttlMs });
        switch (this.mode) {
          case 'hang':
            return;
          case 'legacy':
            return cb(grpcStatusError(grpc.status.UNIMPLEMENTED, 'unknown method RequestTaskSlots'));
          case 'wholeNoSlot':
            return cb(grpcStatusError(grpc.status.RESOURCE_EXHAUSTED, 'no free slot', 'NoSlot'));
          case 'noSlot':
            return cb(null, {
              grants: taskIds.map((taskId): SlotGrantWire => ({
                taskId,
                error: { code: 'NoSlot', status: grpc.status.RESOURCE_EXHAUSTED, message: 'no free slot' },
              })),
            });
          case 'grant':
            return cb(null, {
              grants: taskIds.map((taskId): SlotGrantWire => ({
                taskId,
                slotId: `${this.name}-${taskId}`,
                state: 'TASK_STATE_ALLOCATED',
              })),
            });
        }
      },
      RequestTaskSlot: (call, cb) => {
        const { taskId } = call.request;
        this.unaryCalls.push(taskId);
        if (this.mode === 'hang') return;
        cb(null, { taskId, slotId: `${this.name}-${taskId}`, state: 'TASK_STATE_ALLOCATED' });
      },
      SubmitTask: notUsed,
      GetTaskResult: notUsed,
      WatchTasks: (call) => call.end(),
      RunTasks: (call) => call.end(),
    };
    this.server.addService(workerServiceDefinition, handlers);
    this.addr = `127.0.0.1:${await bindServer(this.server, '127.0.0.1:0')}`;
    return this;
  }

  /** Task ids this Worker was asked for by RequestTaskSlots, in order. */
  get batchedIds(): string[] {
    return this.batchCalls.flatMap((c) => c.taskIds);
  }

  stop(): void {
    this.server.forceShutdown();
  }
}
