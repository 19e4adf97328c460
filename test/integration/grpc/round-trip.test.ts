// A real grpc-js server on 127.0.0.1 (port 0) with fake handlers, and real clients: every rpc of the
// three services, the WatchTasks server stream, and business codes in status metadata.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import {
  bundleCoordinatorServiceDefinition,
  coordinatorServiceDefinition,
  workerServiceDefinition,
} from '../../../src/grpc/proto.js';
import type {
  BundleCoordinatorServiceHandlers,
  CoordinatorServiceHandlers,
  WorkerServiceClient,
  WorkerServiceHandlers,
} from '../../../src/grpc/proto.js';
import {
  createBundleCoordinatorClient,
  createCoordinatorClient,
  createWorkerClient,
  unaryCall,
} from '../../../src/grpc/clients.js';
import {
  SERVER_OPTIONS,
  bindServer,
  businessCodeOf,
  failServerStream,
  grpcStatusError,
  shutdownServer,
  statusCodeOf,
} from '../../../src/grpc/status.js';
import { MAX_STATUS_MESSAGE_BYTES } from '../../../src/kernel/input-bounds.js';
import {
  taskInputFromWire,
  taskInputToWire,
  taskResultFromWire,
  taskResultToWire,
  taskStateFromWire,
  taskUpdateFromWire,
  taskUpdateToWire,
} from '../../../src/grpc/convert.js';
import { WireFormatError } from '../../../src/grpc/errors.js';
import type { TaskInput, TaskResult } from '../../../src/grpc/domain-types.js';
import type {
  GetTaskResultResponseWireOut,
  RequestTaskSlotRequestWireOut,
  RequestTaskSlotResponseWireOut,
  ReserveWorkerSlotResponseWireOut,
  SubmitTaskResponseWireOut,
  TaskUpdateWireOut,
} from '../../../src/grpc/wire-types.js';
import { UNIMPLEMENTED_COORDINATOR_BATCH, UNIMPLEMENTED_WORKER_BATCH } from '../../support/unimplemented.js';

const WORKER_ADDR = 'fake-worker:9090';

/** The result the fake reports for a task: its builder config echoed back as the plugin output. */
function fakeResult(task: TaskInput): TaskResult {
  return {
    success: true,
    executeResult: {
      failureCode: '',
      retryable: false,
      pluginResults: [
        {
          pluginName: 'ReturnValueResultHandler',
          success: true,
          failureCode: '',
          result: task.functionCallConfig.config,
          failureMessage: '',
        },
      ],
      failureMessage: '',
    },
  };
}

class FakeWorker {
  readonly tasks = new Map<string, TaskInput>();
  readonly slotRequests: RequestTaskSlotRequestWireOut[] = [];

  handlers(): WorkerServiceHandlers {
    return {
      ...UNIMPLEMENTED_WORKER_BATCH,
      RequestTaskSlot: (call, callback) => {
        const req = call.request;
        this.slotRequests.push(req);
        if (req.ttlMs <= 0)
          return callback(
            grpcStatusError(grpc.status.INVALID_ARGUMENT, 'ttl_ms must be positive', 'InvalidArgument'),
          );
        if (req.taskId === 'full')
          return callback(grpcStatusError(grpc.status.RESOURCE_EXHAUSTED, 'no free slot', 'NoSlot'));
        callback(null, { taskId: req.taskId, slotId: `slot-${req.taskId}`, state: 'TASK_STATE_ALLOCATED' });
      },
      SubmitTask: (call, callback) => {
        try {
          if (!call.request.task)
            throw new WireFormatError({ field: 'task', reason: 'required', message: 'is required' });
          const task = taskInputFromWire(call.request.task);
          if (call.request.slotId !== `slot-${task.taskId}`) {
            return callback(grpcStatusError(grpc.status.FAILED_PRECONDITION, 'unknown slot', 'InvalidSlot'));
          }
          this.tasks.set(task.taskId, task);
          callback(null, { taskId: task.taskId, state: 'TASK_STATE_RUNNING' });
        } catch (err) {
          if (err instanceof WireFormatError) {
            return callback(grpcStatusError(grpc.status.INVALID_ARGUMENT, err.message, 'InvalidArgument'));
          }
          throw err;
        }
      },
      GetTaskResult: (call, callback) => {
        const task = this.tasks.get(call.request.taskId);
        // Echoes the id, as a careless server would: grpcStatusError must keep the status sendable.
        if (!task) {
          const message = `no such task ${call.request.taskId}`;
          return callback(grpcStatusError(grpc.status.NOT_FOUND, message, 'NotFound'));
        }
        callback(null, {
          taskId: task.taskId,
          state: 'TASK_STATE_SUCCEEDED',
          result: taskResultToWire(fakeResult(task)),
        });
      },
      WatchTasks: (call) => {
        const ids = call.request.taskIds;
        if (ids.includes('draining')) {
          failServerStream(
            call,
            grpcStatusError(grpc.status.UNAVAILABLE, 'worker is draining', 'Unavailable'),
          );
          return;
        }
        let ts = 1_700_000_000_000;
        const base = { workerAddr: WORKER_ADDR, error: '' };
        // Snapshot for each id, then one terminal update per running task, then close.
        for (const id of ids) {
          const known = this.tasks.get(id);
          call.write(
            taskUpdateToWire(
              known
                ? { ...base, taskId: id, state: 'RUNNING', isTerminal: false, timestampMs: ts++ }
                : {
                    ...base,
                    taskId: id,
                    state: 'UNSPECIFIED',
                    isTerminal: true,
                    timestampMs: ts++,
                    error: 'not_found',
                  },
            ),
          );
        }
        for (const id of ids) {
          const known = this.tasks.get(id);
          if (known) {
            call.write(
              taskUpdateToWire({
                ...base,
                taskId: id,
                state: 'SUCCEEDED',
                isTerminal: true,
                timestampMs: ts++,
                result: fakeResult(known),
              }),
            );
          }
        }
        call.end();
      },
    };
  }
}

let server: grpc.Server;
let addr: string;
let worker: WorkerServiceClient;
const fake = new FakeWorker();

beforeAll(async () => {
  server = new grpc.Server(SERVER_OPTIONS);
  server.addService(workerServiceDefinition, fake.handlers());
  const reserve = (prefix: string) =>
    ((call, callback) => {
      if (call.request.taskId === '') {
        return callback(grpcStatusError(grpc.status.INVALID_ARGUMENT, 'task_id is empty', 'InvalidArgument'));
      }
      callback(null, {
        taskId: call.request.taskId,
        workerAddr: WORKER_ADDR,
        slotId: `${prefix}-${call.request.taskId}`,
      });
    }) satisfies CoordinatorServiceHandlers['ReserveWorkerSlot'] &
      BundleCoordinatorServiceHandlers['ReserveWorkerSlot'];
  server.addService(coordinatorServiceDefinition, {
    ...UNIMPLEMENTED_COORDINATOR_BATCH,
    ReserveWorkerSlot: reserve('block'),
  } satisfies CoordinatorServiceHandlers);
  server.addService(bundleCoordinatorServiceDefinition, {
    ...UNIMPLEMENTED_COORDINATOR_BATCH,
    ReserveWorkerSlot: reserve('bundle'),
  } satisfies BundleCoordinatorServiceHandlers);
  const port = await bindServer(server, '127.0.0.1:0');
  addr = `127.0.0.1:${port}`;
  worker = createWorkerClient(addr);
});

afterAll(async () => {
  worker?.close();
  if (server) await shutdownServer(server, 1000);
});

function collect(
  stream: grpc.ClientReadableStream<TaskUpdateWireOut>,
): Promise<{ updates: TaskUpdateWireOut[]; error?: unknown }> {
  return new Promise((resolve) => {
    const updates: TaskUpdateWireOut[] = [];
    stream.on('data', (u: TaskUpdateWireOut) => updates.push(u));
    stream.on('error', (error) => resolve({ updates, error }));
    stream.on('end', () => resolve({ updates }));
  });
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to fail');
}

const task: TaskInput = {
  taskId: 'task-1',
  functionCallConfig: {
    type: 'CallListCallConfig',
    config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
  },
  resultHandler: { type: 'ReturnValueResultHandler', config: {} },
  taskTimeoutMs: 30_000,
};

describe('WorkerService over a real connection', () => {
  it('RequestTaskSlot: int64 ttl_ms arrives as a number; the response decodes', async () => {
    const res = await unaryCall<RequestTaskSlotResponseWireOut>(
      (md, o, cb) => worker.requestTaskSlot({ taskId: 'task-1', ttlMs: 5000 }, md, o, cb),
      { timeoutMs: 5000 },
    );
    // capacity (docs/placement.md § Capacity from the Workers' answers): this fake Worker sends none.
    expect(res).toEqual({
      taskId: 'task-1',
      slotId: 'slot-task-1',
      state: 'TASK_STATE_ALLOCATED',
      capacity: null,
    });
    expect(taskStateFromWire(res.state)).toBe('ALLOCATED');
    expect(fake.slotRequests.at(-1)).toEqual({ taskId: 'task-1', ttlMs: 5000 });
  });

  it.each([
    ['full', 5000, grpc.status.RESOURCE_EXHAUSTED, 'NoSlot'],
    ['t', 0, grpc.status.INVALID_ARGUMENT, 'InvalidArgument'],
  ] as const)(
    'RequestTaskSlot(%s, ttl %i) fails with status %i and business code %s',
    async (taskId, ttlMs, code, business) => {
      const err = await rejection(
        unaryCall<RequestTaskSlotResponseWireOut>((md, o, cb) =>
          worker.requestTaskSlot({ taskId, ttlMs }, md, o, cb),
        ),
      );
      expect(statusCodeOf(err)).toBe(code);
      expect(businessCodeOf(err)).toBe(business);
    },
  );

  it('SubmitTask: the task arrives intact, JSON configs included', async () => {
    const res = await unaryCall<SubmitTaskResponseWireOut>((md, o, cb) =>
      worker.submitTask({ task: taskInputToWire(task), slotId: 'slot-task-1' }, md, o, cb),
    );
    expect(res).toEqual({ taskId: 'task-1', state: 'TASK_STATE_RUNNING', result: null });
    expect(fake.tasks.get('task-1')).toEqual(task);
  });

  it('SubmitTask: invalid config JSON is InvalidArgument naming the field', async () => {
    const bad = {
      ...taskInputToWire({ ...task, taskId: 'bad' }),
      functionCallConfig: { type: 'X', config: Buffer.from('{') },
    };
    const err = await rejection(
      unaryCall<SubmitTaskResponseWireOut>((md, o, cb) =>
        worker.submitTask({ task: bad, slotId: 'slot-bad' }, md, o, cb),
      ),
    );
    expect(statusCodeOf(err)).toBe(grpc.status.INVALID_ARGUMENT);
    expect(businessCodeOf(err)).toBe('InvalidArgument');
    expect((err as grpc.ServiceError).details).toContain('task.function_call_config.config');
  });

  it('SubmitTask: a wrong slot is FailedPrecondition / InvalidSlot', async () => {
    const err = await rejection(
      unaryCall<SubmitTaskResponseWireOut>((md, o, cb) =>
        worker.submitTask({ task: taskInputToWire(task), slotId: 'nope' }, md, o, cb),
      ),
    );
    expect(statusCodeOf(err)).toBe(grpc.status.FAILED_PRECONDITION);
    expect(businessCodeOf(err)).toBe('InvalidSlot');
  });

  it('GetTaskResult: the result and its JSON plugin output come back', async () => {
    const res = await unaryCall<GetTaskResultResponseWireOut>((md, o, cb) =>
      worker.getTaskResult({ taskId: 'task-1' }, md, o, cb),
    );
    expect(res.state).toBe('TASK_STATE_SUCCEEDED');
    expect(taskResultFromWire(res.result)).toEqual(fakeResult(task));
  });

  it('GetTaskResult: an unknown task is NotFound', async () => {
    const err = await rejection(
      unaryCall<GetTaskResultResponseWireOut>((md, o, cb) =>
        worker.getTaskResult({ taskId: 'ghost' }, md, o, cb),
      ),
    );
    expect(statusCodeOf(err)).toBe(grpc.status.NOT_FOUND);
    expect(businessCodeOf(err)).toBe('NotFound');
  });

  it('a status echoing a 1 MiB id arrives promptly, cut to MAX_STATUS_MESSAGE_BYTES; the connection still works', async () => {
    // docs/security.md § Input bounds: above the HTTP/2 header-block limit (~64 KiB) grpc-js sends no
    // trailers, so without the cap this call and every later one on the connection hang.
    const huge = 'x'.repeat(1024 * 1024);
    const err = await rejection(
      unaryCall<GetTaskResultResponseWireOut>(
        (md, o, cb) => worker.getTaskResult({ taskId: huge }, md, o, cb),
        {
          timeoutMs: 5000,
        },
      ),
    );
    expect(statusCodeOf(err)).toBe(grpc.status.NOT_FOUND);
    const details = (err as grpc.ServiceError).details;
    expect(details.startsWith('no such task xxx')).toBe(true);
    expect(details.endsWith('…')).toBe(true);
    expect(Buffer.byteLength(details)).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES + 3);
    const res = await unaryCall<GetTaskResultResponseWireOut>(
      (md, o, cb) => worker.getTaskResult({ taskId: 'task-1' }, md, o, cb),
      { timeoutMs: 5000 },
    );
    expect(res.state).toBe('TASK_STATE_SUCCEEDED');
  });

  it('WatchTasks: snapshots, then terminal updates, then the stream ends', async () => {
    const { updates, error } = await collect(worker.watchTasks({ taskIds: ['task-1', 'ghost'] }));
    expect(error).toBeUndefined();
    const domain = updates.map(taskUpdateFromWire);
    expect(domain.map((u) => [u.taskId, u.state, u.isTerminal, u.error])).toEqual([
      ['task-1', 'RUNNING', false, ''],
      ['ghost', 'UNSPECIFIED', true, 'not_found'],
      ['task-1', 'SUCCEEDED', true, ''],
    ]);
    expect(domain.map((u) => u.timestampMs)).toEqual([
      1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_002,
    ]);
    expect(domain[2]?.result).toEqual(fakeResult(task));
    expect(domain[0]?.result).toBeUndefined();
    expect(domain.every((u) => u.workerAddr === WORKER_ADDR)).toBe(true);
  });

  it('WatchTasks: a stream error carries the business code too', async () => {
    const { updates, error } = await collect(worker.watchTasks({ taskIds: ['draining'] }));
    expect(updates).toEqual([]);
    expect(statusCodeOf(error)).toBe(grpc.status.UNAVAILABLE);
    expect(businessCodeOf(error)).toBe('Unavailable');
  });

  it('unaryCall: an aborted signal cancels the call', async () => {
    const ac = new AbortController();
    ac.abort();
    const err = await rejection(
      unaryCall<GetTaskResultResponseWireOut>(
        (md, o, cb) => worker.getTaskResult({ taskId: 'task-1' }, md, o, cb),
        {
          signal: ac.signal,
        },
      ),
    );
    expect(statusCodeOf(err)).toBe(grpc.status.CANCELLED);
  });
});

describe('Coordinator services over a real connection', () => {
  it.each([
    ['CoordinatorService', createCoordinatorClient, 'block'],
    ['BundleCoordinatorService', createBundleCoordinatorClient, 'bundle'],
  ] as const)(
    '%s.ReserveWorkerSlot round-trips, and rejects an empty task id',
    async (_name, create, prefix) => {
      const client = create(addr);
      try {
        const res = await unaryCall<ReserveWorkerSlotResponseWireOut>((md, o, cb) =>
          client.reserveWorkerSlot({ taskId: 'task-9' }, md, o, cb),
        );
        expect(res).toEqual({ taskId: 'task-9', workerAddr: WORKER_ADDR, slotId: `${prefix}-task-9` });
        const err = await rejection(
          unaryCall<ReserveWorkerSlotResponseWireOut>((md, o, cb) =>
            client.reserveWorkerSlot({ taskId: '' }, md, o, cb),
          ),
        );
        expect(statusCodeOf(err)).toBe(grpc.status.INVALID_ARGUMENT);
        expect(businessCodeOf(err)).toBe('InvalidArgument');
      } finally {
        client.close();
      }
    },
  );
});
