// WorkerService messages ↔ the core's values (docs/task-lifecycle.md § The unary RPCs).
//
// Incoming SubmitTask is checked here before the core sees it, all as InvalidArgument:
//   - `task` present, `config` bytes valid UTF-8 JSON (WireFormatError from src/grpc/convert.ts),
//     nested at most MAX_JSON_DEPTH deep (checked on the bytes, before parsing);
//   - `task_timeout_ms >= 0` (the core also rejects values above maxTaskTimeoutMs);
//   - the builder's and the writer's `config` against the schema of the plugin their `type` names
//     (docs/task-lifecycle.md § SubmitTask: a task's config is validated against the plugin's schema
//     before the task is admitted). An unknown `type` is NOT an admission error but a task failure
//     (BUILDER_NOT_FOUND / PLUGIN_NOT_FOUND), so the task is admitted and fails in its phase;
//   - with `tables` given, the tables the writer's config names (`table`, `tables`) are declared and
//     `writable: true` (docs/storage.md, "Which tables tasks may write"; the IO scope enforces it again).

import {
  taskInputFromWire,
  taskResultToWire,
  taskStateToWire,
  taskUpdateToWire,
} from '../../../../grpc/convert.js';
import type {
  GetTaskResultResponseWire,
  RequestTaskSlotResponseWire,
  SlotGrantWire,
  SubmitTaskRequestWireOut,
  SubmitTaskResponseWire,
  TaskAdmissionWire,
  TaskErrorWire,
  TaskUpdateWire,
} from '../../../../grpc/wire-types.js';
import { MAX_ID_BYTES, MAX_JSON_DEPTH, cutText } from '../../../../kernel/input-bounds.js';
import { jsonDepthProblem } from '../../../../kernel/json-depth.js';
import type { TableConfig } from '../../../../kernel/config-types.js';
import type { SchemaIssue } from '../../../../kernel/errors.js';
import type { PluginKind, PluginRegistry } from '../../../../kernel/plugin-registry.js';
import { writerTableIssues } from '../../../storage/table-write-rule.js';
import {
  TaskState,
  WorkerAdmissionError,
  type RequestTaskSlotResult,
  type SubmitTaskResult,
  type TaskInput,
  type TaskStatus,
} from '../../core/index.js';
import type { WatchUpdate } from './subscription-manager.js';

export type TaskConfigValidator = Pick<PluginRegistry, 'builders' | 'writers' | 'validateTaskConfig'> & {
  /** The declared tables: a writer config naming one that tasks may not write is refused. */
  readonly tables?: Readonly<Record<string, TableConfig>>;
};

export interface SubmitTaskRequest {
  readonly input: TaskInput;
  /** Undefined when the request has none: the worker requests a slot inline. */
  readonly slotId: string | undefined;
}

/** Checks a plugin config against its plugin's schema when the plugin is known. */
function checkPluginConfig(
  plugins: TaskConfigValidator,
  kind: PluginKind,
  taskId: string,
  field: string,
  plugin: { readonly type: string; readonly config: unknown },
): void {
  const table = kind === 'builder' ? plugins.builders : plugins.writers;
  if (!table.has(plugin.type)) return;
  const issues = plugins.validateTaskConfig(kind, plugin.type, plugin.config);
  const detail = (list: readonly SchemaIssue[]): string =>
    list.map((i) => `${i.path || '/'} ${i.message} (rule: ${i.rule})`).join('; ');
  if (issues.length > 0)
    throw WorkerAdmissionError.invalidArgument(
      taskId,
      field,
      plugin.type,
      `does not match the ${plugin.type} schema: ${detail(issues)}`,
    );
  if (kind !== 'writer' || plugins.tables === undefined) return;
  const tableIssues = writerTableIssues(plugin.config, plugins.tables);
  if (tableIssues.length > 0)
    throw WorkerAdmissionError.invalidArgument(
      taskId,
      field,
      plugin.type,
      `names a table tasks may not write: ${detail(tableIssues)}`,
    );
}

/**
 * Refuses a config nested deeper than MAX_JSON_DEPTH before it is parsed (docs/security.md § Input
 * bounds): the schema check and everything after it recurse, and a 100k-deep config overflowed the
 * stack (INTERNAL) instead of being refused.
 */
function checkJsonDepth(taskId: string, field: string, bytes: Uint8Array | null | undefined): void {
  if (!bytes || bytes.length <= MAX_JSON_DEPTH) return;
  const problem = jsonDepthProblem(bytes, MAX_JSON_DEPTH);
  if (problem !== undefined) throw WorkerAdmissionError.invalidArgument(taskId, field, null, problem);
}

/** SubmitTaskRequest → the core's input. Throws WorkerAdmissionError / WireFormatError (InvalidArgument). */
export function submitTaskFromWire(
  req: SubmitTaskRequestWireOut,
  plugins: TaskConfigValidator,
): SubmitTaskRequest {
  if (req.task === null || req.task === undefined) {
    throw WorkerAdmissionError.invalidArgument('', 'task', null, 'is required');
  }
  checkJsonDepth(req.task.taskId, 'task.function_call_config.config', req.task.functionCallConfig?.config);
  checkJsonDepth(req.task.taskId, 'task.result_handler.config', req.task.resultHandler?.config);
  const input = taskInputFromWire(req.task, 'task');
  if (input.taskTimeoutMs < 0) {
    throw WorkerAdmissionError.invalidArgument(
      input.taskId,
      'task.task_timeout_ms',
      input.taskTimeoutMs,
      'must not be negative',
    );
  }
  checkPluginConfig(
    plugins,
    'builder',
    input.taskId,
    'task.function_call_config.config',
    input.functionCallConfig,
  );
  if (input.resultHandler) {
    checkPluginConfig(plugins, 'writer', input.taskId, 'task.result_handler.config', input.resultHandler);
  }
  return { input, slotId: req.slotId === '' ? undefined : req.slotId };
}

export function requestTaskSlotToWire(result: RequestTaskSlotResult): RequestTaskSlotResponseWire {
  return { taskId: result.taskId, slotId: result.slotId ?? '', state: taskStateToWire(result.state) };
}

export function submitTaskToWire(result: SubmitTaskResult): SubmitTaskResponseWire {
  const wire: SubmitTaskResponseWire = { taskId: result.taskId, state: taskStateToWire(result.state) };
  if (result.result !== undefined) wire.result = taskResultToWire(result.result);
  return wire;
}

export function taskStatusToWire(status: TaskStatus): GetTaskResultResponseWire {
  const wire: GetTaskResultResponseWire = { taskId: status.taskId, state: taskStateToWire(status.state) };
  if (status.result !== undefined) wire.result = taskResultToWire(status.result);
  return wire;
}

export function watchUpdateToWire(update: WatchUpdate): TaskUpdateWire {
  return taskUpdateToWire(update);
}

// ---- Batched RPCs (docs/batched-protocol.md) ------------------------------------------------------

/**
 * A client's task id as a batched answer echoes it: as sent, or cut to MAX_ID_BYTES plus "…" when it
 * is longer (as the Coordinator's ReserveWorkerSlots does), so a hostile id is not sent back at full
 * size. Answers are in request order, so a client can match them by position as well.
 */
export function echoTaskId(taskId: unknown): string {
  if (typeof taskId !== 'string') return '';
  return cutText(taskId, MAX_ID_BYTES);
}

export function slotGrantToWire(result: RequestTaskSlotResult): SlotGrantWire {
  return { ...requestTaskSlotToWire(result), error: null };
}

export function refusedSlotGrant(taskId: string, error: TaskErrorWire): SlotGrantWire {
  return { taskId: echoTaskId(taskId), slotId: '', state: taskStateToWire(TaskState.UNSPECIFIED), error };
}

/** What SubmitTask answered, as a RunTasks admission. */
export function admissionToWire(result: SubmitTaskResult): TaskAdmissionWire {
  const wire: TaskAdmissionWire = { taskId: result.taskId, state: taskStateToWire(result.state) };
  if (result.result !== undefined) wire.result = taskResultToWire(result.result);
  return wire;
}

export function refusedAdmission(taskId: string, error: TaskErrorWire): TaskAdmissionWire {
  return { taskId: echoTaskId(taskId), state: taskStateToWire(TaskState.UNSPECIFIED), error };
}

/**
 * Approximate encoded size of an update, for splitting flushes into messages: its strings plus the
 * plugin result bytes (which dominate). Over-counting a little is harmless; it only caps batches.
 */
export function approxUpdateBytes(update: TaskUpdateWire): number {
  let bytes =
    32 + (update.taskId?.length ?? 0) + (update.workerAddr?.length ?? 0) + (update.error?.length ?? 0);
  const ex = update.result?.executeResult;
  if (ex) {
    bytes += (ex.failureCode?.length ?? 0) + (ex.failureMessage?.length ?? 0);
    for (const p of ex.pluginResults ?? []) {
      bytes += 16 + (p.pluginName?.length ?? 0) + (p.failureCode?.length ?? 0);
      bytes += (p.failureMessage?.length ?? 0) + (p.result?.length ?? 0);
    }
  }
  return bytes;
}
