// Handlers answering UNIMPLEMENTED for the batched RPCs (docs/batched-protocol.md), for fakes that serve
// only the unary RPCs (docs/task-lifecycle.md): a client talking to them sees what an older server would
// answer.
import * as grpc from '@grpc/grpc-js';
import type {
  BundleCoordinatorServiceHandlers,
  CoordinatorServiceHandlers,
  WorkerServiceHandlers,
} from '../../src/grpc/proto.js';

const unimplemented = (what: string): grpc.ServiceError =>
  Object.assign(new Error(`${what} is not implemented by this fake`), {
    code: grpc.status.UNIMPLEMENTED,
    details: `${what} is not implemented by this fake`,
    metadata: new grpc.Metadata(),
  });

export const UNIMPLEMENTED_WORKER_BATCH: Pick<WorkerServiceHandlers, 'RequestTaskSlots' | 'RunTasks'> = {
  RequestTaskSlots: (_call, callback) => callback(unimplemented('RequestTaskSlots')),
  RunTasks: (call) => call.emit('error', unimplemented('RunTasks')),
};

export const UNIMPLEMENTED_COORDINATOR_BATCH: Pick<
  CoordinatorServiceHandlers & BundleCoordinatorServiceHandlers,
  'ReserveWorkerSlots'
> = {
  ReserveWorkerSlots: (_call, callback) => callback(unimplemented('ReserveWorkerSlots')),
};
