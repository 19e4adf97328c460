// The proto contract (docs/architecture.md § Protos) and the loader options the rest of the code relies on.
import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadSync } from '@grpc/proto-loader';
import {
  PROTO_DIR,
  PROTO_FILES,
  PROTO_LOADER_OPTIONS,
  SERVICE_NAMES,
  bundleCoordinatorServiceDefinition,
  coordinatorServiceDefinition,
  workerServiceDefinition,
} from '../../../src/grpc/proto.js';

interface FieldDescriptor {
  name: string;
  number: number;
  label: string;
  type: string;
  typeName: string;
}

// Load with snake_case names to compare against the contract as written.
const contractView = loadSync([...PROTO_FILES], { keepCase: true, includeDirs: [PROTO_DIR] });

/** Renders a message's fields in proto notation: `string task_id = 1; int64 ttl_ms = 2`. */
function render(fullName: string): string {
  const def = contractView[fullName] as { type: { field: FieldDescriptor[] } } | undefined;
  if (!def) throw new Error(`no message ${fullName}`);
  return def.type.field
    .map((f) => {
      const type =
        f.type === 'TYPE_MESSAGE' || f.type === 'TYPE_ENUM'
          ? f.typeName.split('.').pop()
          : f.type.replace('TYPE_', '').toLowerCase();
      return `${f.label === 'LABEL_REPEATED' ? 'repeated ' : ''}${type} ${f.name} = ${f.number}`;
    })
    .join('; ');
}

const W = 'blockx.worker.v1.';
const contract: [string, string][] = [
  [`${W}RequestTaskSlotRequest`, 'string task_id = 1; int64 ttl_ms = 2'],
  [`${W}RequestTaskSlotResponse`, 'string task_id = 1; string slot_id = 2; TaskState state = 3'],
  [`${W}SubmitTaskRequest`, 'TaskInput task = 1; string slot_id = 2'],
  [`${W}SubmitTaskResponse`, 'string task_id = 1; TaskState state = 2; TaskResult result = 3'],
  [`${W}GetTaskResultRequest`, 'string task_id = 1'],
  [`${W}GetTaskResultResponse`, 'string task_id = 1; TaskState state = 2; TaskResult result = 3'],
  [`${W}WatchTasksRequest`, 'repeated string task_ids = 1'],
  [
    `${W}TaskInput`,
    'string task_id = 1; PluginConfig function_call_config = 2; PluginConfig result_handler = 3; int64 task_timeout_ms = 4',
  ],
  [`${W}PluginConfig`, 'string type = 1; bytes config = 2'],
  [`${W}TaskResult`, 'bool success = 1; ExecuteResult execute_result = 2; string code_version = 3'],
  [
    `${W}ExecuteResult`,
    'string failure_code = 1; bool retryable = 2; repeated PluginResult plugin_results = 3; string failure_message = 4',
  ],
  [
    `${W}PluginResult`,
    'string plugin_name = 1; bool success = 2; string failure_code = 3; bytes result = 4; string failure_message = 5',
  ],
  [
    `${W}TaskUpdate`,
    'string task_id = 1; TaskState state = 2; bool is_terminal = 3; string worker_addr = 4; int64 timestamp_ms = 5; TaskResult result = 6; string error = 7',
  ],
  ['blockx.coordinator.v1.ReserveWorkerSlotRequest', 'string task_id = 1'],
  [
    'blockx.coordinator.v1.ReserveWorkerSlotResponse',
    'string task_id = 1; string worker_addr = 2; string slot_id = 3',
  ],
];

/**
 * Fields added to a contract message after it was fixed (extended compatibly: new numbers after the
 * contract's, nothing renamed or renumbered). A message renders as its contract fields, then these.
 */
const EXTENSIONS: Readonly<Record<string, string>> = {
  // docs/placement.md § Capacity from the Workers' answers.
  [`${W}RequestTaskSlotResponse`]: 'WorkerCapacity capacity = 4',
};

describe('proto contract (docs/architecture.md)', () => {
  it.each(contract)('%s has exactly: %s (then only its listed extensions)', (message, fields) => {
    const extension = EXTENSIONS[message];
    expect(render(message)).toBe(extension === undefined ? fields : `${fields}; ${extension}`);
  });

  it('TaskState has the fixed names and numbers', () => {
    const def = contractView[`${W}TaskState`] as { type: { value: { name: string; number: number }[] } };
    expect(def.type.value.map((v) => `${v.name} = ${v.number}`)).toEqual([
      'TASK_STATE_UNSPECIFIED = 0',
      'TASK_STATE_ALLOCATED = 1',
      'TASK_STATE_RUNNING = 2',
      'TASK_STATE_SUCCEEDED = 3',
      'TASK_STATE_FAILED = 4',
    ]);
  });

  it('services expose the fixed method paths and streaming shape', () => {
    const paths = (def: object) =>
      Object.values(def as Record<string, { path: string; requestStream: boolean; responseStream: boolean }>)
        .map((m) => `${m.path}${m.requestStream ? ' <-stream' : ''}${m.responseStream ? ' stream->' : ''}`)
        .sort();
    expect(paths(workerServiceDefinition)).toEqual([
      `/${SERVICE_NAMES.worker}/GetTaskResult`,
      `/${SERVICE_NAMES.worker}/RequestTaskSlot`,
      // Batched additions (docs/batched-protocol.md), beside the four unary RPCs.
      `/${SERVICE_NAMES.worker}/RequestTaskSlots`,
      `/${SERVICE_NAMES.worker}/RunTasks <-stream stream->`,
      `/${SERVICE_NAMES.worker}/SubmitTask`,
      `/${SERVICE_NAMES.worker}/WatchTasks stream->`,
    ]);
    expect(paths(coordinatorServiceDefinition)).toEqual([
      '/blockx.coordinator.v1.CoordinatorService/ReserveWorkerSlot',
      '/blockx.coordinator.v1.CoordinatorService/ReserveWorkerSlots',
    ]);
    expect(paths(bundleCoordinatorServiceDefinition)).toEqual([
      '/blockx.bundlecoordinator.v1.BundleCoordinatorService/ReserveWorkerSlot',
      '/blockx.bundlecoordinator.v1.BundleCoordinatorService/ReserveWorkerSlots',
    ]);
  });

  it('the bundle coordinator speaks the coordinator messages (imported): the same bytes both ways', () => {
    type Method = {
      requestSerialize: (v: unknown) => Buffer;
      responseSerialize: (v: unknown) => Buffer;
      requestType: { type: { name: string } };
      responseType: { type: { name: string } };
    };
    const methods = (def: object) => def as Record<'ReserveWorkerSlot' | 'ReserveWorkerSlots', Method>;
    const block = methods(coordinatorServiceDefinition);
    const bundle = methods(bundleCoordinatorServiceDefinition);
    const samples = {
      ReserveWorkerSlot: [{ taskId: 't-1' }, { taskId: 't-1', workerAddr: '127.0.0.1:9090', slotId: 's-1' }],
      ReserveWorkerSlots: [
        { taskIds: ['a', 'b'] },
        {
          reservations: [
            { taskId: 'a', workerAddr: 'w:1', slotId: 's' },
            { taskId: 'b', error: { code: 'SlotUncertain', status: 10, message: 'm' } },
          ],
        },
      ],
    } as const;
    for (const name of ['ReserveWorkerSlot', 'ReserveWorkerSlots'] as const) {
      const [request, response] = samples[name];
      expect(bundle[name].requestType.type.name).toBe(block[name].requestType.type.name);
      expect(bundle[name].requestSerialize(request)).toEqual(block[name].requestSerialize(request));
      expect(bundle[name].responseSerialize(response)).toEqual(block[name].responseSerialize(response));
      expect(bundle[name].responseSerialize(response).length).toBeGreaterThan(0);
    }
  });

  it('PROTO_DIR is the package proto folder', () => {
    for (const file of PROTO_FILES) expect(existsSync(join(PROTO_DIR, file))).toBe(true);
  });
});

describe('loader options', () => {
  it('match the flags scripts/gen-proto.mjs passes to the type generator', async () => {
    const scriptPath = '../../../scripts/gen-proto.mjs';
    const gen = (await import(scriptPath)) as { LOADER_FLAGS: string[] };
    const o = PROTO_LOADER_OPTIONS;
    // keepCase false is the generator's default; every other option is an explicit flag.
    const expected = [
      `--longs=${o.longs.name}`,
      `--enums=${o.enums.name}`,
      `--bytes=${o.bytes.name}`,
      ...(o.defaults ? ['--defaults'] : []),
      ...(o.oneofs ? ['--oneofs'] : []),
    ];
    expect(o.keepCase).toBe(false);
    expect(gen.LOADER_FLAGS).toEqual(expected);
  });

  it('decode int64 as numbers, enums as names, bytes as Buffers, absent messages as null', () => {
    const m = workerServiceDefinition.WatchTasks;
    const bytes = m.responseSerialize({ taskId: 't', state: 4, timestampMs: '1700000000123' });
    const out = m.responseDeserialize(bytes);
    expect(out).toEqual({
      taskId: 't',
      state: 'TASK_STATE_FAILED',
      isTerminal: false,
      workerAddr: '',
      timestampMs: 1_700_000_000_123,
      result: null,
      error: '',
    });
    const submit = workerServiceDefinition.SubmitTask;
    const req = submit.requestDeserialize(
      submit.requestSerialize({
        task: { taskId: 't', functionCallConfig: { type: 'X', config: Buffer.from('{}') } },
      }),
    );
    expect(Buffer.isBuffer(req.task?.functionCallConfig?.config)).toBe(true);
    expect(req.task?.taskTimeoutMs).toBe(0);
    expect(req.task?.resultHandler).toBeNull();
    expect(req.slotId).toBe('');
  });
});
