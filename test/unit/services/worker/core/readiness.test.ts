// Readiness (executor heartbeat), draining, and the queries (GetTaskResult, snapshots, heartbeat).

import { describe, expect, it } from 'vitest';
import { TaskState } from '../../../../../src/services/worker/core/index.js';
import { admissionError, makeCore, taskInput, toBuilder, toPlugin, typesOf } from './harness.js';

describe('readiness', () => {
  it('is not serving until the executor is ready; ready is idempotent', () => {
    const core = makeCore({}, { ready: false });
    expect([core.ready, core.serving]).toEqual([false, false]);
    expect(
      admissionError(() => core.handleSubmitTask(taskInput('t'), undefined, 0), 'Unavailable').detail,
    ).toEqual({
      code: 'Unavailable',
      reason: 'NotReady',
    });
    expect(core.handleExecutorReady(1).commands).toEqual([
      { type: 'ServingStatusChanged', serving: true, ready: true, draining: false },
    ]);
    expect(core.handleExecutorReady(2).commands).toEqual([]);
    expect(core.serving).toBe(true);
    expect(core.handleSubmitTask(taskInput('t'), undefined, 3).result.accepted).toBe(true);
  });

  it('losing the executor closes admissions but leaves running tasks to finish', () => {
    const core = makeCore();
    toBuilder(core, 't1', 0);
    expect(core.handleExecutorLost(1).commands).toEqual([
      { type: 'ServingStatusChanged', serving: false, ready: false, draining: false },
    ]);
    admissionError(() => core.handleRequestTaskSlot('t2', 1_000, 2), 'Unavailable');
    expect(typesOf(core.handleTaskPhaseFinished('t1', 'Builder', { ok: true, calls: [] }, 3))).toEqual([
      'StartCallPhase',
    ]);
    expect(core.handleExecutorReady(4).commands).toHaveLength(1);
    expect(core.handleRequestTaskSlot('t2', 1_000, 5).result.state).toBe(TaskState.ALLOCATED);
  });
});

describe('draining', () => {
  it('with nothing in use: stops admitting and is drained at once', () => {
    const core = makeCore();
    const step = core.handleStartDraining(0);
    expect(step.commands).toEqual([
      { type: 'ServingStatusChanged', serving: false, ready: true, draining: true },
      { type: 'Drained' },
    ]);
    expect([core.draining, core.drained, core.serving]).toEqual([true, true, false]);
    expect(core.handleStartDraining(1).commands).toEqual([]);
    const err = admissionError(() => core.handleRequestTaskSlot('t', 1_000, 2), 'Unavailable');
    expect(err.detail).toEqual({ code: 'Unavailable', reason: 'Draining' });
  });

  it('lets running tasks finish, then emits Drained once, after their convergence', () => {
    const core = makeCore();
    toPlugin(core, 'a', 0);
    toBuilder(core, 'b', 0);
    expect(typesOf(core.handleStartDraining(1))).toEqual(['ServingStatusChanged']);
    admissionError(() => core.handleSubmitTask(taskInput('c'), undefined, 2), 'Unavailable');
    const first = core.handleTaskPhaseFinished('a', 'Plugin', { ok: true, pluginResults: [] }, 3);
    expect(typesOf(first)).toEqual(['ConvergeTask', 'NotifyTerminal']);
    expect(core.drained).toBe(false);
    const last = core.handleTaskActivationFailed('b', 'IO_SCOPE_FAILED', 'x', 4);
    expect(typesOf(last)).toEqual(['ConvergeTask', 'NotifyTerminal', 'Drained']);
    expect(core.drained).toBe(true);
    // Results stay queryable while draining.
    expect(core.handleGetTaskResult('a', 5).state).toBe(TaskState.SUCCEEDED);
  });

  it('an unused reservation drains when its lease expires', () => {
    const core = makeCore();
    core.handleRequestTaskSlot('r', 500, 0);
    core.handleStartDraining(1);
    expect(typesOf(core.tickTimers(500))).toEqual(['SlotReclaimed', 'Drained']);
  });
});

describe('queries', () => {
  it('GetTaskResult: ALLOCATED, RUNNING (every phase), terminal + result, NotFound, InvalidArgument', () => {
    const core = makeCore({ taskSlots: 4 }, { ready: true });
    core.handleRequestTaskSlot('reserved', 1_000, 0);
    core.handleSubmitTask(taskInput('preparing'), undefined, 0);
    toPlugin(core, 'plugin', 0);
    toBuilder(core, 'failed', 0);
    core.handleTaskPhaseFinished(
      'failed',
      'Builder',
      { ok: false, failureCode: 'BUILDER_NOT_FOUND', message: 'no' },
      1,
    );

    expect(core.handleGetTaskResult('reserved', 1)).toEqual({
      taskId: 'reserved',
      state: TaskState.ALLOCATED,
      result: undefined,
    });
    expect(core.handleGetTaskResult('preparing', 1).state).toBe(TaskState.RUNNING);
    expect(core.handleGetTaskResult('plugin', 1).state).toBe(TaskState.RUNNING);
    const failed = core.handleGetTaskResult('failed', 1);
    expect(failed.state).toBe(TaskState.FAILED);
    expect(failed.result?.executeResult).toMatchObject({
      failureCode: 'BUILDER_NOT_FOUND',
      retryable: false,
    });
    expect(admissionError(() => core.handleGetTaskResult('nope', 1), 'NotFound').taskId).toBe('nope');
    admissionError(() => core.handleGetTaskResult('', 1), 'InvalidArgument');
  });

  it('GetTaskResult works whether or not the worker is serving', () => {
    const core = makeCore();
    core.handleRequestTaskSlot('t', 1_000, 0);
    core.handleExecutorLost(0);
    core.handleStartDraining(0);
    expect(core.handleGetTaskResult('t', 1).state).toBe(TaskState.ALLOCATED);
  });

  it('taskSnapshot never throws and marks terminal states', () => {
    const core = makeCore();
    core.handleRequestTaskSlot('reserved', 1_000, 0);
    toBuilder(core, 'done', 0);
    core.handleTaskActivationFailed('done', 'ACTIVATION_FAILED', 'x', 1);
    expect(core.taskSnapshot('unknown', 1)).toEqual({ found: false, taskId: 'unknown' });
    expect(core.taskSnapshot('', 1)).toEqual({ found: false, taskId: '' });
    expect(core.taskSnapshot('reserved', 1)).toEqual({
      found: true,
      taskId: 'reserved',
      state: TaskState.ALLOCATED,
      result: undefined,
      terminal: false,
    });
    expect(core.taskSnapshot('done', 1)).toMatchObject({
      found: true,
      state: TaskState.FAILED,
      terminal: true,
    });
  });

  it('heartbeat: reserved = ALLOCATED slots (a Preparing task included), running = RUNNING slots', () => {
    const core = makeCore({ taskSlots: 5 });
    core.handleRequestTaskSlot('r', 1_000, 0);
    core.handleSubmitTask(taskInput('p'), undefined, 0);
    toBuilder(core, 'b', 0);
    toPlugin(core, 'w', 0);
    expect(core.deriveHeartbeat(0)).toEqual({ taskSlots: 5, reservedSlots: 2, runningTasks: 2 });
  });
});
