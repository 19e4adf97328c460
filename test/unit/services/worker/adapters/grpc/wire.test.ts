import { describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { WireFormatError } from '../../../../../../src/grpc/errors.js';
import { BLOCKX_ERROR_CODE_KEY } from '../../../../../../src/grpc/status.js';
import { MAX_STATUS_MESSAGE_BYTES } from '../../../../../../src/kernel/input-bounds.js';
import type { SubmitTaskRequestWireOut } from '../../../../../../src/grpc/wire-types.js';
import { workerCodeToGRPC } from '../../../../../../src/services/worker/adapters/grpc/grpc-server.js';
import {
  requestTaskSlotToWire,
  submitTaskFromWire,
  submitTaskToWire,
  taskStatusToWire,
} from '../../../../../../src/services/worker/adapters/grpc/wire.js';
import { TaskState, WorkerAdmissionError } from '../../../../../../src/services/worker/core/index.js';
import { builderDef, callListBuilder, returnValueWriter, writerDef } from '../orchestration/harness.js';
import { createPluginRegistry } from '../../../../../../src/kernel/plugin-registry.js';
import type { BuilderPlugin } from '../../../../../../src/kernel/plugin-types.js';

const plugins = createPluginRegistry({
  builders: [
    {
      ...builderDef('CallListCallConfig', callListBuilder as BuilderPlugin),
      schema: {
        type: 'object',
        required: ['function', 'callList'],
        properties: { function: { type: 'string' }, callList: { type: 'array' } },
      },
    },
  ],
  writers: [
    {
      ...writerDef('ReturnValueResultHandler', returnValueWriter),
      schema: { type: 'object', additionalProperties: false },
    },
  ],
});

function request(
  task: Partial<NonNullable<SubmitTaskRequestWireOut['task']>> | null,
  slotId = '',
): SubmitTaskRequestWireOut {
  if (task === null) return { task: null, slotId };
  return {
    slotId,
    task: {
      taskId: 't1',
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: Buffer.from(JSON.stringify({ function: 'hello_world', callList: [['a']] })),
      },
      resultHandler: { type: 'ReturnValueResultHandler', config: Buffer.from('{}') },
      taskTimeoutMs: 0,
      ...task,
    },
  };
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

describe('submitTaskFromWire', () => {
  it('decodes a valid request; an empty slot id means "request one inline"', () => {
    const { input, slotId } = submitTaskFromWire(request({}), plugins);
    expect(slotId).toBeUndefined();
    expect(input).toEqual({
      taskId: 't1',
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'hello_world', callList: [['a']] },
      },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      taskTimeoutMs: 0,
    });
    expect(submitTaskFromWire(request({}, 'slot-9'), plugins).slotId).toBe('slot-9');
  });

  it('an empty result handler type means no handler', () => {
    const { input } = submitTaskFromWire(
      request({ resultHandler: { type: '', config: Buffer.alloc(0) } }),
      plugins,
    );
    expect(input.resultHandler).toBeUndefined();
  });

  it('a missing task is InvalidArgument', () => {
    const err = thrown(() => submitTaskFromWire(request(null), plugins));
    expect(err).toBeInstanceOf(WorkerAdmissionError);
    expect((err as WorkerAdmissionError).code).toBe('InvalidArgument');
  });

  it('config bytes that are not JSON are a WireFormatError naming the field', () => {
    const err = thrown(() =>
      submitTaskFromWire(
        request({ functionCallConfig: { type: 'CallListCallConfig', config: Buffer.from('{nope') } }),
        plugins,
      ),
    );
    expect(err).toBeInstanceOf(WireFormatError);
    expect((err as WireFormatError).field).toBe('task.function_call_config.config');
  });

  it('a negative task_timeout_ms is InvalidArgument', () => {
    const err = thrown(() =>
      submitTaskFromWire(request({ taskTimeoutMs: -1 }), plugins),
    ) as WorkerAdmissionError;
    expect(err.code).toBe('InvalidArgument');
    expect(err.detail).toMatchObject({ field: 'task.task_timeout_ms', value: -1 });
  });

  it('a builder config that breaks its plugin schema is InvalidArgument naming the path and rule', () => {
    const err = thrown(() =>
      submitTaskFromWire(
        request({
          functionCallConfig: { type: 'CallListCallConfig', config: Buffer.from('{"function":"f"}') },
        }),
        plugins,
      ),
    ) as WorkerAdmissionError;
    expect(err.code).toBe('InvalidArgument');
    expect(err.message).toContain('task.function_call_config.config');
    expect(err.message).toContain('(rule: required)');
    expect(err.message).toContain('callList');
  });

  it('a writer config that breaks its plugin schema is InvalidArgument', () => {
    const err = thrown(() =>
      submitTaskFromWire(
        request({ resultHandler: { type: 'ReturnValueResultHandler', config: Buffer.from('{"x":1}') } }),
        plugins,
      ),
    ) as WorkerAdmissionError;
    expect(err.message).toContain('task.result_handler.config');
    expect(err.message).toContain('(rule: additionalProperties)');
  });

  it('an unknown builder or writer type is admitted (it fails later as BUILDER_NOT_FOUND / PLUGIN_NOT_FOUND)', () => {
    const { input } = submitTaskFromWire(
      request({
        functionCallConfig: { type: 'NoSuchCallConfig', config: Buffer.from('{"anything":true}') },
        resultHandler: { type: 'NoSuchHandler', config: Buffer.from('{}') },
      }),
      plugins,
    );
    expect(input.functionCallConfig.type).toBe('NoSuchCallConfig');
    expect(input.resultHandler?.type).toBe('NoSuchHandler');
  });
});

describe('responses', () => {
  it('encode states as the proto enum names and omit absent results', () => {
    expect(
      requestTaskSlotToWire({
        taskId: 't',
        slotId: undefined,
        state: TaskState.SUCCEEDED,
        leaseDeadlineMs: undefined,
      }),
    ).toEqual({ taskId: 't', slotId: '', state: 'TASK_STATE_SUCCEEDED' });
    expect(
      submitTaskToWire({ taskId: 't', state: TaskState.RUNNING, result: undefined, accepted: true }),
    ).toEqual({
      taskId: 't',
      state: 'TASK_STATE_RUNNING',
    });
    const wire = taskStatusToWire({
      taskId: 't',
      state: TaskState.FAILED,
      result: {
        success: false,
        executeResult: {
          failureCode: 'TIMED_OUT',
          retryable: true,
          pluginResults: [],
          failureMessage: 'late',
        },
      },
    });
    expect(wire.state).toBe('TASK_STATE_FAILED');
    expect(wire.result?.executeResult).toMatchObject({ failureCode: 'TIMED_OUT', retryable: true });
  });
});

describe('workerCodeToGRPC (the documented table)', () => {
  it.each([
    [
      WorkerAdmissionError.invalidArgument('t', 'ttlMs', 0, 'must be positive'),
      grpc.status.INVALID_ARGUMENT,
      'InvalidArgument',
    ],
    [WorkerAdmissionError.noSlot('t', 4, 4), grpc.status.RESOURCE_EXHAUSTED, 'NoSlot'],
    [
      WorkerAdmissionError.invalidSlot('t', 's', 'SlotUnknown'),
      grpc.status.FAILED_PRECONDITION,
      'InvalidSlot',
    ],
    [WorkerAdmissionError.unavailable('t', 'Draining'), grpc.status.UNAVAILABLE, 'Unavailable'],
    [WorkerAdmissionError.notFound('t'), grpc.status.NOT_FOUND, 'NotFound'],
    [
      new WireFormatError({ field: 'task.x', reason: 'invalid_json', message: 'bad' }),
      grpc.status.INVALID_ARGUMENT,
      'InvalidArgument',
    ],
  ])('%s → status %s, business code %s', (err, status, business) => {
    const mapped = workerCodeToGRPC(err);
    expect(mapped.code).toBe(status);
    expect(mapped.metadata.get(BLOCKX_ERROR_CODE_KEY)).toEqual([business]);
    expect(mapped.details).toBe(err.message);
  });

  it('anything else is INTERNAL without a business code', () => {
    const mapped = workerCodeToGRPC(new TypeError('bug'));
    expect(mapped.code).toBe(grpc.status.INTERNAL);
    expect(mapped.metadata.get(BLOCKX_ERROR_CODE_KEY)).toEqual([]);
  });

  // docs/security.md § Input bounds: whatever a message echoes, the status stays sendable.
  it.each([
    ['NotFound echoing a 1 MiB id', WorkerAdmissionError.notFound('x'.repeat(1024 * 1024))],
    [
      'InvalidSlot echoing a 1 MiB slot id',
      WorkerAdmissionError.invalidSlot('t', 's'.repeat(1024 * 1024), 'SlotUnknown'),
    ],
    ['an INTERNAL error with a huge message', new Error('e'.repeat(1024 * 1024))],
  ])('caps the status message: %s', (_name, err) => {
    const mapped = workerCodeToGRPC(err);
    expect(Buffer.byteLength(mapped.details)).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES + 3);
    expect(mapped.details.endsWith('…')).toBe(true);
  });
});
