// Test harness for the Worker core: a ready core with deterministic slot ids, task inputs, and helpers
// that drive a task through its phases on virtual time. Not a test file itself.

import { expect } from 'vitest';
import {
  TaskState,
  WorkerAdmissionError,
  WorkerCore,
  type ConvergeTask,
  type FailureCode,
  type PhaseFailure,
  type Step,
  type TaskInput,
  type WorkerCommand,
  type WorkerCommandType,
  type WorkerCoreConfig,
  type WorkerErrorCode,
} from '../../../../../src/services/worker/core/index.js';

export function sequentialIds(prefix = 'slot-'): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}

/** A core with small, readable timings; ready (executor up) unless `ready: false`. */
export function makeCore(
  config: Partial<WorkerCoreConfig> = {},
  options: { ready?: boolean } = {},
): WorkerCore {
  const core = new WorkerCore({
    config: {
      taskSlots: 2,
      defaultTtlMs: 1_000,
      taskDeadlineMs: 10_000,
      resultRetentionMs: 5_000,
      ...config,
    },
    newSlotId: sequentialIds(),
  });
  if (options.ready ?? true) core.handleExecutorReady(0);
  return core;
}

export function taskInput(taskId: string, overrides: Partial<TaskInput> = {}): TaskInput {
  return {
    taskId,
    functionCallConfig: {
      type: 'CallListCallConfig',
      config: { function: 'hello_world', callList: [['a'], ['b']] },
    },
    resultHandler: { type: 'ReturnValueResultHandler', config: {} },
    taskTimeoutMs: 0,
    ...overrides,
  };
}

export function typesOf(step: { readonly commands: readonly WorkerCommand[] }): WorkerCommandType[] {
  return step.commands.map((c) => c.type);
}

export function commandOf<T extends WorkerCommandType>(
  step: { readonly commands: readonly WorkerCommand[] },
  type: T,
): Extract<WorkerCommand, { type: T }> {
  const found = step.commands.find((c) => c.type === type);
  if (found === undefined) throw new Error(`no ${type} among ${typesOf(step).join(', ') || '(none)'}`);
  return found as Extract<WorkerCommand, { type: T }>;
}

/** Asserts `fn` throws a WorkerAdmissionError with `code`, and returns it. */
export function admissionError(fn: () => unknown, code: WorkerErrorCode): WorkerAdmissionError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(WorkerAdmissionError);
  const err = caught as WorkerAdmissionError;
  expect(err.code).toBe(code);
  expect(err.detail.code).toBe(code);
  return err;
}

/** Asserts the step converged the task as FAILED with `code` / `retryable`, and returns the command. */
export function expectFailed(step: Step<unknown>, code: FailureCode, retryable: boolean): ConvergeTask {
  const converge = commandOf(step, 'ConvergeTask');
  expect(converge.state).toBe(TaskState.FAILED);
  expect(converge.slotReleased).toBe(true);
  expect(converge.result.success).toBe(false);
  expect(converge.result.executeResult.failureCode).toBe(code);
  expect(converge.result.executeResult.retryable).toBe(retryable);
  const notify = commandOf(step, 'NotifyTerminal');
  expect(notify).toMatchObject({ taskId: converge.taskId, state: TaskState.FAILED, result: converge.result });
  expect(typesOf(step).indexOf('NotifyTerminal')).toBe(typesOf(step).indexOf('ConvergeTask') + 1);
  return converge;
}

/** Submits `taskId` (inline slot) and feeds activation prepared: the task is in its Builder phase. */
export function toBuilder(core: WorkerCore, taskId: string, now: number, input?: Partial<TaskInput>): string {
  const submit = core.handleSubmitTask(taskInput(taskId, input), undefined, now);
  const prepare = commandOf(submit, 'PrepareTaskActivation');
  core.handleTaskActivationPrepared(taskId, 7, now);
  return prepare.slotId;
}

export function toCalls(core: WorkerCore, taskId: string, now: number, input?: Partial<TaskInput>): string {
  const slotId = toBuilder(core, taskId, now, input);
  core.handleTaskPhaseFinished(taskId, 'Builder', { ok: true, calls: [['a'], ['b']] }, now);
  return slotId;
}

export function toPlugin(core: WorkerCore, taskId: string, now: number, input?: Partial<TaskInput>): string {
  const slotId = toCalls(core, taskId, now, input);
  core.handleTaskPhaseFinished(taskId, 'Calls', { ok: true, outputs: ['A', 'B'] }, now);
  return slotId;
}

/** Brings a task into some phase. */
export type Reach = (core: WorkerCore, taskId: string, now: number) => unknown;

/** Submits the task: it is Preparing. */
export const preparing: Reach = (core, id, now) => core.handleSubmitTask(taskInput(id), undefined, now);

/** A phase failure with message `boom: CODE`, reporting `retryable` only when given. */
export function phaseFailure(failureCode: FailureCode, retryable?: boolean): PhaseFailure {
  return {
    ok: false,
    failureCode,
    message: `boom: ${failureCode}`,
    ...(retryable === undefined ? {} : { retryable }),
  };
}
