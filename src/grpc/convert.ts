// Conversions between the gRPC wire types and the plain domain types (src/grpc/domain-types.ts).
//
// Wire → domain (`*FromWire`) takes the decoded `__Output` shapes the loader produces (PROTO_LOADER_OPTIONS:
// camelCase, enums as names, int64 as numbers, bytes as Buffers, absent messages as null) and decodes the
// JSON byte fields. Invalid JSON throws WireFormatError naming the proto field, for InvalidArgument.
// Domain → wire (`*ToWire`) builds the permissive input shapes for sending.
//
// JSON byte fields: empty bytes mean "no value" (proto3 cannot tell an unset `bytes` from an empty one).
// A plugin config that is empty decodes to `{}` (a plugin that takes no options may omit it); a plugin
// result that is empty decodes to an absent `result`.
import { WireEncodeError, WireFormatError } from './errors.js';
import type {
  ExecuteResult,
  PluginConfig,
  PluginResult,
  TaskInput,
  TaskResult,
  TaskState,
  TaskUpdate,
} from './domain-types.js';
import type {
  PluginConfigWire,
  PluginConfigWireOut,
  PluginResultWire,
  PluginResultWireOut,
  TaskInputWire,
  TaskInputWireOut,
  TaskResultWire,
  TaskResultWireOut,
  TaskStateWire,
  TaskStateWireOut,
  TaskUpdateWire,
  TaskUpdateWireOut,
} from './wire-types.js';

const WIRE_STATES = [
  'TASK_STATE_UNSPECIFIED',
  'TASK_STATE_ALLOCATED',
  'TASK_STATE_RUNNING',
  'TASK_STATE_SUCCEEDED',
  'TASK_STATE_FAILED',
] as const satisfies readonly TaskStateWireOut[];

const DOMAIN_STATES = [
  'UNSPECIFIED',
  'ALLOCATED',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
] as const satisfies readonly TaskState[];

export function taskStateToWire(state: TaskState): TaskStateWireOut {
  switch (state) {
    case 'UNSPECIFIED':
      return 'TASK_STATE_UNSPECIFIED';
    case 'ALLOCATED':
      return 'TASK_STATE_ALLOCATED';
    case 'RUNNING':
      return 'TASK_STATE_RUNNING';
    case 'SUCCEEDED':
      return 'TASK_STATE_SUCCEEDED';
    case 'FAILED':
      return 'TASK_STATE_FAILED';
    default: {
      const _exhaustive: never = state;
      throw new RangeError(`unknown task state ${String(_exhaustive)}`);
    }
  }
}

/**
 * Accepts the enum's name or number. A value this build does not know (a newer peer's state) reads as
 * 'UNSPECIFIED' rather than failing the whole message.
 */
export function taskStateFromWire(state: TaskStateWire | string | number | null | undefined): TaskState {
  if (typeof state === 'number') return DOMAIN_STATES[state] ?? 'UNSPECIFIED';
  const index = WIRE_STATES.indexOf(state as (typeof WIRE_STATES)[number]);
  return index >= 0 ? (DOMAIN_STATES[index] ?? 'UNSPECIFIED') : 'UNSPECIFIED';
}

function encodeJson(value: unknown, field: string): Buffer {
  if (value === undefined) return Buffer.alloc(0);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (cause) {
    throw new WireEncodeError(
      { field, message: `cannot encode as JSON: ${(cause as Error).message}` },
      { cause },
    );
  }
  // JSON.stringify returns undefined for functions and symbols.
  if (text === undefined)
    throw new WireEncodeError({ field, message: `cannot encode a ${typeof value} as JSON` });
  return Buffer.from(text, 'utf8');
}

// `fatal`: malformed UTF-8 is an error, not silently replaced with U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes UTF-8 JSON bytes; returns `empty()` for zero bytes. */
function decodeJson(bytes: Uint8Array | null | undefined, field: string, empty: () => unknown): unknown {
  if (!bytes || bytes.length === 0) return empty();
  try {
    return JSON.parse(utf8.decode(bytes)) as unknown;
  } catch (cause) {
    throw new WireFormatError(
      { field, reason: 'invalid_json', message: `is not valid UTF-8 JSON: ${(cause as Error).message}` },
      { cause },
    );
  }
}

export function pluginConfigToWire(config: PluginConfig, field = 'plugin_config'): PluginConfigWire {
  return { type: config.type, config: encodeJson(config.config, `${field}.config`) };
}

export function pluginConfigFromWire(wire: PluginConfigWireOut, field = 'plugin_config'): PluginConfig {
  return { type: wire.type, config: decodeJson(wire.config, `${field}.config`, () => ({})) };
}

/**
 * `field` prefixes error paths; the Worker passes 'task' for SubmitTaskRequest.task.
 * A missing function_call_config is a WireFormatError; a result_handler with an empty type means none.
 */
export function taskInputFromWire(wire: TaskInputWireOut, field = 'task'): TaskInput {
  if (!wire.functionCallConfig) {
    throw new WireFormatError({
      field: `${field}.function_call_config`,
      reason: 'required',
      message: 'is required',
    });
  }
  const functionCallConfig = pluginConfigFromWire(wire.functionCallConfig, `${field}.function_call_config`);
  const base = { taskId: wire.taskId, functionCallConfig, taskTimeoutMs: wire.taskTimeoutMs };
  return wire.resultHandler && wire.resultHandler.type !== ''
    ? { ...base, resultHandler: pluginConfigFromWire(wire.resultHandler, `${field}.result_handler`) }
    : base;
}

export function taskInputToWire(task: TaskInput, field = 'task'): TaskInputWire {
  const wire: TaskInputWire = {
    taskId: task.taskId,
    functionCallConfig: pluginConfigToWire(task.functionCallConfig, `${field}.function_call_config`),
    taskTimeoutMs: task.taskTimeoutMs,
  };
  if (task.resultHandler) {
    wire.resultHandler = pluginConfigToWire(task.resultHandler, `${field}.result_handler`);
  }
  return wire;
}

function pluginResultToWire(result: PluginResult, field: string): PluginResultWire {
  return {
    pluginName: result.pluginName,
    success: result.success,
    failureCode: result.failureCode,
    result: encodeJson(result.result, `${field}.result`),
    failureMessage: result.failureMessage,
  };
}

function pluginResultFromWire(wire: PluginResultWireOut, field: string): PluginResult {
  const base = {
    pluginName: wire.pluginName,
    success: wire.success,
    failureCode: wire.failureCode,
    failureMessage: wire.failureMessage,
  };
  const value = decodeJson(wire.result, `${field}.result`, () => undefined);
  return value === undefined ? base : { ...base, result: value };
}

export function taskResultToWire(result: TaskResult, field = 'result'): TaskResultWire {
  const ex = result.executeResult;
  return {
    success: result.success,
    executeResult: {
      failureCode: ex.failureCode,
      retryable: ex.retryable,
      pluginResults: ex.pluginResults.map((p, i) =>
        pluginResultToWire(p, `${field}.execute_result.plugin_results[${i}]`),
      ),
      failureMessage: ex.failureMessage,
    },
    codeVersion: result.codeVersion ?? '',
  };
}

/** Returns undefined when the message is absent (null), e.g. for a task that is not terminal yet. */
export function taskResultFromWire(
  // code_version is a newer field: a decoded message always has it, hand-built ones may not.
  wire: (Omit<TaskResultWireOut, 'codeVersion'> & { readonly codeVersion?: string }) | null | undefined,
  field = 'result',
): TaskResult | undefined {
  if (!wire) return undefined;
  const ex = wire.executeResult;
  const executeResult: ExecuteResult = ex
    ? {
        failureCode: ex.failureCode,
        retryable: ex.retryable,
        pluginResults: ex.pluginResults.map((p, i) =>
          pluginResultFromWire(p, `${field}.execute_result.plugin_results[${i}]`),
        ),
        failureMessage: ex.failureMessage,
      }
    : { failureCode: '', retryable: false, pluginResults: [], failureMessage: '' };
  return wire.codeVersion
    ? { success: wire.success, executeResult, codeVersion: wire.codeVersion }
    : { success: wire.success, executeResult };
}

export function taskUpdateToWire(update: TaskUpdate): TaskUpdateWire {
  const wire: TaskUpdateWire = {
    taskId: update.taskId,
    state: taskStateToWire(update.state),
    isTerminal: update.isTerminal,
    workerAddr: update.workerAddr,
    timestampMs: update.timestampMs,
    error: update.error,
  };
  if (update.result) wire.result = taskResultToWire(update.result);
  return wire;
}

export function taskUpdateFromWire(wire: TaskUpdateWireOut): TaskUpdate {
  const base = {
    taskId: wire.taskId,
    state: taskStateFromWire(wire.state),
    isTerminal: wire.isTerminal,
    workerAddr: wire.workerAddr,
    timestampMs: wire.timestampMs,
    error: wire.error,
  };
  const result = taskResultFromWire(wire.result, 'update.result');
  return result ? { ...base, result } : base;
}
