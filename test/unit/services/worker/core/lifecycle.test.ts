// The task state machine: activation, the three phases, and every failure code the adapter reports.

import { describe, expect, it } from 'vitest';
import {
  TaskState,
  type FailureCode,
  type Step,
  type WorkerCore,
} from '../../../../../src/services/worker/core/index.js';
import {
  commandOf,
  expectFailed,
  makeCore,
  phaseFailure as fail,
  preparing,
  taskInput,
  toBuilder,
  toCalls,
  toPlugin,
  typesOf,
  type Reach,
} from './harness.js';

describe('main path', () => {
  it('Preparing → Builder → Calls → Plugin → SUCCEEDED, slot released at convergence', () => {
    const core = makeCore({ resultRetentionMs: 5_000 });
    const submit = core.handleSubmitTask(taskInput('t1', { taskTimeoutMs: 3_000 }), undefined, 0);
    expect(typesOf(submit)).toEqual(['PrepareTaskActivation']);

    const activated = core.handleTaskActivationPrepared('t1', 'epoch-9', 10);
    expect(activated.result).toEqual({ applied: true });
    expect(activated.commands).toEqual([
      {
        type: 'StartBuilderPhase',
        taskId: 't1',
        codeEpoch: 'epoch-9',
        functionCallConfig: taskInput('t1').functionCallConfig,
        deadlineMs: 3_000,
      },
    ]);
    expect(core.deriveHeartbeat(10)).toEqual({ taskSlots: 2, reservedSlots: 0, runningTasks: 1 });

    const calls = [['ct2'], ['blockx']];
    const built = core.handleTaskPhaseFinished('t1', 'Builder', { ok: true, calls }, 20);
    expect(built.commands).toEqual([{ type: 'StartCallPhase', taskId: 't1', calls, deadlineMs: 3_000 }]);

    const called = core.handleTaskPhaseFinished(
      't1',
      'Calls',
      { ok: true, outputs: ['hello ct2', 'hello blockx'] },
      30,
    );
    expect(called.commands).toEqual([
      {
        type: 'StartWriterPhase',
        taskId: 't1',
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
        outputs: ['hello ct2', 'hello blockx'],
        deadlineMs: 3_000,
      },
    ]);
    expect(core.handleGetTaskResult('t1', 30).state).toBe(TaskState.RUNNING);

    const pluginResults = [
      {
        pluginName: 'ReturnValueResultHandler',
        success: true,
        failureCode: '',
        failureMessage: '',
        result: ['a'],
      },
    ];
    const done = core.handleTaskPhaseFinished('t1', 'Plugin', { ok: true, pluginResults }, 40);
    // The result names the code epoch pinned at activation (docs/functions-deploy.md).
    const result = {
      success: true,
      executeResult: { failureCode: '', retryable: false, pluginResults, failureMessage: '' },
      codeVersion: 'epoch-9',
    };
    expect(done.commands).toEqual([
      {
        type: 'ConvergeTask',
        taskId: 't1',
        slotId: 'slot-1',
        state: TaskState.SUCCEEDED,
        result,
        fromPhase: 'Plugin',
        slotReleased: true,
        retainedUntilMs: 5_040,
      },
      { type: 'NotifyTerminal', taskId: 't1', state: TaskState.SUCCEEDED, result },
    ]);
    expect(core.deriveHeartbeat(40)).toEqual({ taskSlots: 2, reservedSlots: 0, runningTasks: 0 });
    expect(core.handleGetTaskResult('t1', 40)).toEqual({ taskId: 't1', state: TaskState.SUCCEEDED, result });
    expect(core.checkInvariants()).toEqual([]);
  });

  it('an empty call list still goes through StartCallPhase; no result handler still goes through the writer', () => {
    const core = makeCore();
    toBuilder(core, 't1', 0, { resultHandler: null });
    const built = core.handleTaskPhaseFinished('t1', 'Builder', { ok: true, calls: [] }, 1);
    expect(commandOf(built, 'StartCallPhase').calls).toEqual([]);
    const called = core.handleTaskPhaseFinished('t1', 'Calls', { ok: true, outputs: [] }, 2);
    expect(commandOf(called, 'StartWriterPhase').resultHandler).toBeNull();
    const done = core.handleTaskPhaseFinished('t1', 'Plugin', { ok: true, pluginResults: [] }, 3);
    expect(commandOf(done, 'ConvergeTask')).toMatchObject({ state: TaskState.SUCCEEDED });
    expect(commandOf(done, 'ConvergeTask').result.executeResult.pluginResults).toEqual([]);
  });

  it('a freed slot is immediately available to the next task', () => {
    const core = makeCore({ taskSlots: 1 });
    toPlugin(core, 't1', 0);
    core.handleTaskPhaseFinished('t1', 'Plugin', { ok: true, pluginResults: [] }, 5);
    expect(core.handleRequestTaskSlot('t2', 1_000, 5).result.slotId).toBe('slot-2');
  });
});

describe('failure codes driven by the adapter', () => {
  // [name, reach the phase, feed the failure, code, retryable, phase at convergence]
  const cases: [
    string,
    Reach,
    (core: WorkerCore, now: number) => Step<unknown>,
    FailureCode,
    boolean,
    string,
  ][] = [
    [
      'activation failed',
      preparing,
      (c, n) => c.handleTaskActivationFailed('t', 'ACTIVATION_FAILED', 'boom: ACTIVATION_FAILED', n),
      'ACTIVATION_FAILED',
      true,
      'Preparing',
    ],
    [
      'IO scope failed while preparing',
      preparing,
      (c, n) => c.handleTaskActivationFailed('t', 'IO_SCOPE_FAILED', 'boom: IO_SCOPE_FAILED', n),
      'IO_SCOPE_FAILED',
      true,
      'Preparing',
    ],
    [
      'IO scope failed after the epoch was pinned',
      toBuilder,
      (c, n) => c.handleTaskActivationFailed('t', 'IO_SCOPE_FAILED', 'boom: IO_SCOPE_FAILED', n),
      'IO_SCOPE_FAILED',
      true,
      'Builder',
    ],
    [
      'builder not found',
      toBuilder,
      (c, n) => c.handleTaskPhaseFinished('t', 'Builder', fail('BUILDER_NOT_FOUND', true), n),
      'BUILDER_NOT_FOUND',
      false,
      'Builder',
    ],
    [
      'builder failed, IO error not retryable',
      toBuilder,
      (c, n) => c.handleTaskPhaseFinished('t', 'Builder', fail('BUILDER_FAILED', false), n),
      'BUILDER_FAILED',
      false,
      'Builder',
    ],
    [
      'builder failed, IO error retryable',
      toBuilder,
      (c, n) => c.handleTaskPhaseFinished('t', 'Builder', fail('BUILDER_FAILED', true), n),
      'BUILDER_FAILED',
      true,
      'Builder',
    ],
    [
      'builder cancelled while waiting for admission',
      toBuilder,
      (c, n) => c.handleTaskPhaseFinished('t', 'Builder', fail('CANCELLED'), n),
      'CANCELLED',
      true,
      'Builder',
    ],
    [
      'call failed (fastFail), reported retryable ignored',
      toCalls,
      (c, n) => c.handleTaskPhaseFinished('t', 'Calls', fail('CALL_FAILED', true), n),
      'CALL_FAILED',
      false,
      'Calls',
    ],
    [
      'output bytes exceeded',
      toCalls,
      (c, n) => c.handleTaskPhaseFinished('t', 'Calls', fail('OUTPUT_BYTES_EXCEEDED'), n),
      'OUTPUT_BYTES_EXCEEDED',
      false,
      'Calls',
    ],
    [
      'calls cancelled',
      toCalls,
      (c, n) => c.handleTaskPhaseFinished('t', 'Calls', fail('CANCELLED'), n),
      'CANCELLED',
      true,
      'Calls',
    ],
    [
      'plugin not found',
      toPlugin,
      (c, n) => c.handleTaskPhaseFinished('t', 'Plugin', fail('PLUGIN_NOT_FOUND'), n),
      'PLUGIN_NOT_FOUND',
      false,
      'Plugin',
    ],
    [
      'plugin failed, unclassified',
      toPlugin,
      (c, n) => c.handleTaskPhaseFinished('t', 'Plugin', fail('PLUGIN_FAILED'), n),
      'PLUGIN_FAILED',
      true,
      'Plugin',
    ],
    [
      'plugin failed, not retryable',
      toPlugin,
      (c, n) => c.handleTaskPhaseFinished('t', 'Plugin', fail('PLUGIN_FAILED', false), n),
      'PLUGIN_FAILED',
      false,
      'Plugin',
    ],
  ];

  it.each(cases)('%s', (_name, reach, feed, code, retryable, fromPhase) => {
    const core = makeCore();
    reach(core, 't', 0);
    const step = feed(core, 100);
    expect(step.result).toEqual({ applied: true });
    const converge = expectFailed(step, code, retryable);
    expect(converge).toMatchObject({ taskId: 't', slotId: 'slot-1', fromPhase, retainedUntilMs: 5_100 });
    expect(converge.result.executeResult.failureMessage).toBe(`boom: ${code}`);
    expect(typesOf(step)).not.toContain('CancelTaskCalls');
    expect(core.deriveHeartbeat(100)).toEqual({ taskSlots: 2, reservedSlots: 0, runningTasks: 0 });
    expect(core.handleGetTaskResult('t', 100)).toMatchObject({
      state: TaskState.FAILED,
      result: converge.result,
    });
    expect(core.checkInvariants()).toEqual([]);
  });

  it('a failed plugin phase keeps the plugin results it reported', () => {
    const core = makeCore();
    toPlugin(core, 't', 0);
    const pluginResults = [
      {
        pluginName: 'BlockWriteResultHandler',
        success: false,
        failureCode: 'PLUGIN_FAILED',
        failureMessage: 'db down',
      },
    ];
    const step = core.handleTaskPhaseFinished('t', 'Plugin', { ...fail('PLUGIN_FAILED'), pluginResults }, 1);
    expect(expectFailed(step, 'PLUGIN_FAILED', true).result.executeResult.pluginResults).toEqual(
      pluginResults,
    );
  });

  it('a plugin "success" with a failed plugin result converges FAILED / PLUGIN_FAILED', () => {
    const core = makeCore();
    toPlugin(core, 't', 0);
    const pluginResults = [
      { pluginName: 'W', success: false, failureCode: 'PLUGIN_FAILED', failureMessage: 'partial' },
    ];
    const step = core.handleTaskPhaseFinished('t', 'Plugin', { ok: true, pluginResults }, 1);
    const converge = expectFailed(step, 'PLUGIN_FAILED', true);
    expect(converge.result.executeResult.failureMessage).toBe('partial');
    expect(converge.result.executeResult.pluginResults).toEqual(pluginResults);
  });
});
