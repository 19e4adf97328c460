import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { isTerminalState, TaskState } from '../../../src/contracts/task.js';
import {
  pluginConfigFromWire,
  taskInputFromWire,
  taskInputToWire,
  taskResultFromWire,
  taskResultToWire,
  taskStateFromWire,
  taskStateToWire,
  taskUpdateFromWire,
  taskUpdateToWire,
} from '../../../src/grpc/convert.js';
import { WireEncodeError, WireFormatError } from '../../../src/grpc/errors.js';
import { workerServiceDefinition } from '../../../src/grpc/proto.js';
import type { TaskInput, TaskResult, TaskUpdate } from '../../../src/grpc/domain-types.js';
import type { TaskInputWireOut } from '../../../src/grpc/wire-types.js';

// Through real protobuf bytes, with the runtime loader options.
const submit = workerServiceDefinition.SubmitTask;
const getResult = workerServiceDefinition.GetTaskResult;
const watch = workerServiceDefinition.WatchTasks;

function inputOverWire(task: TaskInput): TaskInput {
  const out = submit.requestDeserialize(
    submit.requestSerialize({ task: taskInputToWire(task), slotId: 's' }),
  );
  if (!out.task) throw new Error('task lost on the wire');
  return taskInputFromWire(out.task);
}

function resultOverWire(result: TaskResult): TaskResult | undefined {
  const res = getResult.responseDeserialize(
    getResult.responseSerialize({
      taskId: 't',
      state: 'TASK_STATE_SUCCEEDED',
      result: taskResultToWire(result),
    }),
  );
  return taskResultFromWire(res.result);
}

function wireTask(fields: Partial<TaskInputWireOut>): TaskInputWireOut {
  return {
    taskId: 't1',
    functionCallConfig: { type: 'CallListCallConfig', config: Buffer.from('{"function":"f"}') },
    resultHandler: null,
    taskTimeoutMs: 0,
    ...fields,
  };
}

const STATES: TaskState[] = ['UNSPECIFIED', 'ALLOCATED', 'RUNNING', 'SUCCEEDED', 'FAILED'];

describe('TaskState', () => {
  it.each(STATES.map((s, i) => [s, i] as const))('%s <-> TASK_STATE_%s (number %i)', (state, num) => {
    const wire = taskStateToWire(state);
    expect(wire).toBe(`TASK_STATE_${state}`);
    expect(taskStateFromWire(wire)).toBe(state);
    expect(taskStateFromWire(num)).toBe(state);
  });

  it('the one vocabulary (src/contracts/task.ts) names the proto enum in its order', () => {
    expect(Object.values(TaskState)).toEqual(STATES);
    expect(Object.entries(TaskState).every(([key, value]) => key === value)).toBe(true);
  });

  it('rejects a name outside the vocabulary when encoding', () => {
    expect(() => taskStateToWire('PAUSED' as TaskState)).toThrow(RangeError);
  });

  it('reads values this build does not know as UNSPECIFIED', () => {
    expect(taskStateFromWire(99)).toBe('UNSPECIFIED');
    expect(taskStateFromWire('TASK_STATE_PAUSED')).toBe('UNSPECIFIED');
    expect(taskStateFromWire(null)).toBe('UNSPECIFIED');
  });

  it('only SUCCEEDED and FAILED are terminal', () => {
    expect(STATES.filter(isTerminalState)).toEqual(['SUCCEEDED', 'FAILED']);
  });
});

describe('TaskInput', () => {
  it('round-trips through protobuf bytes with configs as JSON', () => {
    const task: TaskInput = {
      taskId: '3f2b1c9e',
      functionCallConfig: {
        type: 'CallListCallConfig',
        config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
      },
      resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      taskTimeoutMs: 30_000,
    };
    expect(inputOverWire(task)).toEqual(task);
    const wire = taskInputToWire(task);
    expect(Buffer.from(wire.functionCallConfig?.config as Buffer).toString('utf8')).toBe(
      '{"function":"hello_world","callList":[["ct2"],["blockx"]]}',
    );
  });

  it('a task without a writer has no result_handler on the wire and none after decoding', () => {
    const task: TaskInput = { taskId: 't', functionCallConfig: { type: 'B', config: [1] }, taskTimeoutMs: 0 };
    expect(taskInputToWire(task).resultHandler).toBeUndefined();
    const back = inputOverWire(task);
    expect(back).toEqual(task);
    expect('resultHandler' in back).toBe(false);
  });

  it('an empty result_handler type means no handler, whatever its config', () => {
    const task = taskInputFromWire(
      wireTask({ resultHandler: { type: '', config: Buffer.from('not json') } }),
    );
    expect(task.resultHandler).toBeUndefined();
  });

  it('an empty config decodes to {} (proto3 cannot tell unset from empty)', () => {
    expect(pluginConfigFromWire({ type: 'ReturnValueResultHandler', config: Buffer.alloc(0) })).toEqual({
      type: 'ReturnValueResultHandler',
      config: {},
    });
  });

  it.each([
    ['function_call_config', { functionCallConfig: { type: 'B', config: Buffer.from('{"a":') } }],
    ['result_handler', { resultHandler: { type: 'W', config: Buffer.from('{oops}') } }],
    ['result_handler', { resultHandler: { type: 'W', config: Buffer.from([0x7b, 0xff, 0x7d]) } }],
  ] as const)('invalid JSON in %s is a WireFormatError naming the field', (name, fields) => {
    let caught: unknown;
    try {
      taskInputFromWire(wireTask(fields));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(WireFormatError);
    const err = caught as WireFormatError;
    expect(err.code).toBe('WIRE_FORMAT_INVALID');
    expect(err.field).toBe(`task.${name}.config`);
    expect(err.reason).toBe('invalid_json');
    expect(err.message).toContain(`task.${name}.config`);
  });

  it('a missing function_call_config is a WireFormatError', () => {
    expect(() => taskInputFromWire(wireTask({ functionCallConfig: null }))).toThrow(
      expect.objectContaining({ field: 'task.function_call_config', reason: 'required' }),
    );
  });

  it('a config that is not JSON-serialisable is a WireEncodeError naming the field', () => {
    const task: TaskInput = {
      taskId: 't',
      functionCallConfig: { type: 'B', config: { n: 1n } },
      taskTimeoutMs: 0,
    };
    expect(() => taskInputToWire(task)).toThrow(WireEncodeError);
    expect(() => taskInputToWire(task)).toThrow(/task\.function_call_config\.config/);
    const fn: TaskInput = { ...task, functionCallConfig: { type: 'B', config: () => 1 } };
    expect(() => taskInputToWire(fn)).toThrow(WireEncodeError);
  });
});

// JSON values as they come back from JSON.parse(JSON.stringify(v)) (-0 becomes 0).
const jsonNormal = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

// Any well-formed Unicode text (lone surrogates cannot be proto strings or UTF-8 JSON at all).
const text = fc.string({ unit: 'grapheme' });

const pluginResultArb = fc.record(
  {
    pluginName: text,
    success: fc.boolean(),
    failureCode: text,
    result: fc.jsonValue({ stringUnit: 'grapheme' }).map(jsonNormal),
    failureMessage: text,
  },
  { requiredKeys: ['pluginName', 'success', 'failureCode', 'failureMessage'] },
);

const taskResultArb: fc.Arbitrary<TaskResult> = fc.record({
  success: fc.boolean(),
  executeResult: fc.record({
    failureCode: text,
    retryable: fc.boolean(),
    pluginResults: fc.array(pluginResultArb, { maxLength: 3 }),
    failureMessage: text,
  }),
});

describe('TaskResult', () => {
  it('round-trips through protobuf bytes (property)', () => {
    fc.assert(
      fc.property(taskResultArb, (result) => {
        expect(resultOverWire(result)).toEqual(result);
      }),
    );
  });

  it('carries plugin results as UTF-8 JSON bytes; an absent result is empty bytes', () => {
    const wire = taskResultToWire({
      success: false,
      executeResult: {
        failureCode: 'PLUGIN_FAILED',
        retryable: true,
        pluginResults: [
          {
            pluginName: 'ReturnValueResultHandler',
            success: true,
            failureCode: '',
            result: ['hé', 2],
            failureMessage: '',
          },
          { pluginName: 'W', success: false, failureCode: 'PLUGIN_FAILED', failureMessage: 'disk full' },
        ],
        failureMessage: 'disk full',
      },
    });
    const [first, second] = wire.executeResult?.pluginResults ?? [];
    expect(Buffer.from(first?.result as Buffer).toString('utf8')).toBe('["hé",2]');
    expect((second?.result as Buffer).length).toBe(0);
  });

  it('an absent result message decodes to undefined; an absent execute_result to empty defaults', () => {
    expect(taskResultFromWire(null)).toBeUndefined();
    expect(taskResultFromWire({ success: true, executeResult: null })).toEqual({
      success: true,
      executeResult: { failureCode: '', retryable: false, pluginResults: [], failureMessage: '' },
    });
  });

  it('invalid JSON in a plugin result names its index', () => {
    const bad = {
      success: false,
      executeResult: {
        failureCode: '',
        retryable: false,
        failureMessage: '',
        pluginResults: [
          { pluginName: 'a', success: true, failureCode: '', result: Buffer.from('1'), failureMessage: '' },
          { pluginName: 'b', success: true, failureCode: '', result: Buffer.from('[1,'), failureMessage: '' },
        ],
      },
    };
    expect(() => taskResultFromWire(bad)).toThrow(
      expect.objectContaining({ field: 'result.execute_result.plugin_results[1].result' }),
    );
  });
});

describe('TaskUpdate', () => {
  const updateArb: fc.Arbitrary<TaskUpdate> = fc.record(
    {
      taskId: text,
      state: fc.constantFrom(...STATES),
      isTerminal: fc.boolean(),
      workerAddr: text,
      timestampMs: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      result: taskResultArb,
      error: text,
    },
    { requiredKeys: ['taskId', 'state', 'isTerminal', 'workerAddr', 'timestampMs', 'error'] },
  );

  it('round-trips through protobuf bytes, timestamps as exact numbers (property)', () => {
    fc.assert(
      fc.property(updateArb, (update) => {
        const out = watch.responseDeserialize(watch.responseSerialize(taskUpdateToWire(update)));
        expect(typeof out.timestampMs).toBe('number');
        expect(taskUpdateFromWire(out)).toEqual(update);
      }),
    );
  });
});
