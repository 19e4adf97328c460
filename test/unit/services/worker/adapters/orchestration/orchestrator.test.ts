// The orchestrator against fakes of its ports: every phase rule of docs/task-lifecycle.md § The three phases
// and the runtime's lifecycle (epoch pin, IO scope, the task's abort signal). Virtual time, no sleeps.
import { rowScan } from '../../../../../../src/kernel/row-scan.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type {
  BuilderPlugin,
  EncodedRow,
  Row,
  TaskIo,
  WriterPlugin,
} from '../../../../../../src/kernel/plugin-types.js';
import type { CodeEpochPin } from '../../../../../../src/services/call-host/index.js';
import type { TaskIoScope } from '../../../../../../src/services/worker/adapters/orchestration/ports.js';
import { NoStorageIoScopeFactory } from '../../../../../../src/services/worker/adapters/orchestration/default-ports.js';
import { FailureCode, TaskState } from '../../../../../../src/services/worker/core/index.js';
import { createPluginRegistry } from '../../../../../../src/kernel/plugin-registry.js';
import {
  FakeCallRunner,
  builderDef,
  callListBuilder,
  deferred,
  helloTask,
  makeHarness,
  settle,
  writerDef,
} from './harness.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A TaskIo with no rows and no writes, for scope lifecycle tests. */
const emptyIo: TaskIo = {
  get: async () => null,
  getMany: async () => [],
  scan: () => rowScan<Row>(() => ({ next: async () => ({ done: true, value: undefined }) })),
  scanJson: () => rowScan<EncodedRow>(() => ({ next: async () => ({ done: true, value: undefined }) })),
  transaction: async () => undefined as never,
};

describe('Orchestrator: plugins loaded again while tasks run', () => {
  it('a task keeps the plugins of the load current when it started; the next task gets the new load', async () => {
    const h = makeHarness({ runner: new FakeCallRunner('manual') });
    // A load whose writer puts `tag` before the outputs.
    const load = (tag: string) =>
      createPluginRegistry({
        builders: [builderDef('CallListCallConfig', callListBuilder as BuilderPlugin)],
        writers: [
          writerDef('ReturnValueResultHandler', {
            execute: async (_ctx, _config, outputs) => [
              { pluginName: 'ReturnValueResultHandler', success: true, result: [tag, ...outputs] },
            ],
          }),
        ],
      });
    h.plugins.replace(load('v1'));
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    // t1 is in its Calls phase; the plugins are loaded again before its writer runs.
    h.plugins.replace(load('v2'));
    h.orchestrator.submitTask(helloTask('t2'), undefined);
    await settle();
    const runs = (h.runner as FakeCallRunner).runs;
    expect(runs).toHaveLength(2);
    for (const run of runs) run.outcome.resolve({ success: true, retryable: false, outputs: ['x'] });
    await settle();
    expect(h.terminal('t1').result.executeResult.pluginResults[0]?.result).toEqual(['v1', 'x']);
    expect(h.terminal('t2').result.executeResult.pluginResults[0]?.result).toEqual(['v2', 'x']);
  });
});

describe('Orchestrator: the main path', () => {
  it('runs Builder → Calls → Plugin and converges SUCCEEDED with the writer result', async () => {
    const h = makeHarness();
    const submitted = h.orchestrator.submitTask(helloTask('t1'), undefined);
    expect(submitted).toMatchObject({ taskId: 't1', state: TaskState.RUNNING, accepted: true });
    await settle();
    const t = h.terminal('t1');
    expect(t.state).toBe(TaskState.SUCCEEDED);
    expect(t.result.executeResult.pluginResults).toEqual([
      {
        pluginName: 'ReturnValueResultHandler',
        success: true,
        failureCode: '',
        failureMessage: '',
        result: ['hello_world(ct2)', 'hello_world(blockx)'],
      },
    ]);
    const run = (h.runner as FakeCallRunner).runs[0];
    expect(run?.task.codeEpoch).toBe('epoch-1');
    expect(run?.calls).toEqual([
      { function: 'hello_world', args: ['ct2'] },
      { function: 'hello_world', args: ['blockx'] },
    ]);
    // ConvergeTask released everything the task held.
    await h.orchestrator.settled();
    expect(h.scopes.openCount).toBe(0);
    expect(h.epochs.pins).toBe(0);
    expect(h.orchestrator.activeTasks).toBe(0);
    expect(h.core.deriveHeartbeat(h.now())).toMatchObject({ reservedSlots: 0, runningTasks: 0 });
  });

  it('notifies each terminal task exactly once', async () => {
    const h = makeHarness();
    for (const id of ['a', 'b', 'c']) h.orchestrator.submitTask(helloTask(id), undefined);
    h.orchestrator.submitTask(helloTask('a'), undefined); // idempotent: not a second run
    await settle();
    expect(h.terminals.map((t) => t.taskId).sort()).toEqual(['a', 'b', 'c']);
    expect((h.runner as FakeCallRunner).runs).toHaveLength(3);
  });
});

describe('Orchestrator: activation', () => {
  it('a failing epoch pin converges ACTIVATION_FAILED (retryable)', async () => {
    const h = makeHarness({ codeEpochs: { pin: () => Promise.reject(new Error('no code view')) } });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    const ex = h.terminal('t1').result.executeResult;
    expect(ex).toMatchObject({ failureCode: FailureCode.ACTIVATION_FAILED, retryable: true });
    expect(ex.failureMessage).toContain('no code view');
  });

  it('a failing IO scope converges IO_SCOPE_FAILED and releases the pinned epoch', async () => {
    const released: string[] = [];
    const h = makeHarness({
      codeEpochs: { pin: async () => ({ epoch: 'e', release: () => released.push('e') }) },
      ioScopes: { open: () => Promise.reject(new Error('storage down')) },
    });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    expect(h.terminal('t1').result.executeResult).toMatchObject({
      failureCode: FailureCode.IO_SCOPE_FAILED,
      retryable: true,
    });
    expect(released).toEqual(['e']);
  });

  it('a task whose slot lease ends while activating converges SLOT_LOST; what activation acquires later is disposed of', async () => {
    const pin = deferred<CodeEpochPin>();
    let released = 0;
    let opened = 0;
    const h = makeHarness({
      codeEpochs: { pin: () => pin.promise },
      ioScopes: {
        open: async () => {
          opened++;
          throw new Error('must not be called');
        },
      },
    });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    h.advance(1_000); // defaultTtlMs
    h.orchestrator.tick();
    expect(h.terminal('t1').result.executeResult.failureCode).toBe(FailureCode.SLOT_LOST);
    pin.resolve({ epoch: 'late', release: () => released++ });
    await settle();
    expect(released).toBe(1);
    expect(opened).toBe(0);
    expect(h.terminals).toHaveLength(1);
  });
});

describe('Orchestrator: Builder phase', () => {
  it('an unknown builder type converges BUILDER_NOT_FOUND (not retryable)', async () => {
    const h = makeHarness();
    h.orchestrator.submitTask(
      helloTask('t1', { functionCallConfig: { type: 'NoSuchCallConfig', config: {} } }),
      undefined,
    );
    await settle();
    const ex = h.terminal('t1').result.executeResult;
    expect(ex).toMatchObject({ failureCode: FailureCode.BUILDER_NOT_FOUND, retryable: false });
    expect(ex.failureMessage).toContain('NoSuchCallConfig');
  });

  it.each([
    ['an error without a flag', true, new Error('io glitch')],
    ['an error flagged retryable', true, Object.assign(new Error('io busy'), { retryable: true })],
    ['an error flagged not retryable', false, Object.assign(new Error('bad block'), { retryable: false })],
  ])('a builder that throws %s converges BUILDER_FAILED with retryable=%s', async (_name, retryable, err) => {
    const failing: BuilderPlugin = {
      build: () => {
        throw err;
      },
    };
    const h = makeHarness({ builders: [builderDef('CallListCallConfig', failing)] });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    const ex = h.terminal('t1').result.executeResult;
    expect(ex).toMatchObject({ failureCode: FailureCode.BUILDER_FAILED, retryable });
    expect(ex.failureMessage).toBe(err.message);
  });

  it('a builder returning something that is not a call list converges BUILDER_FAILED (not retryable)', async () => {
    const bad: BuilderPlugin = { build: () => ({ calls: [{ function: 'f', args: 'nope' }] }) as never };
    const h = makeHarness({ builders: [builderDef('CallListCallConfig', bad)] });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    expect(h.terminal('t1').result.executeResult).toMatchObject({
      failureCode: FailureCode.BUILDER_FAILED,
      retryable: false,
    });
    expect(h.terminal('t1').result.executeResult.failureMessage).toContain('calls[0].args');
  });

  it('the builder sees the task context (stage, deadline, signal) and the IO scope', async () => {
    let seen: unknown;
    const spy: BuilderPlugin = {
      build: (ctx, _config, io) => {
        seen = { ...ctx, hasIo: typeof io.get === 'function' };
        return { calls: [] };
      },
    };
    const h = makeHarness({ builders: [builderDef('CallListCallConfig', spy)] });
    h.orchestrator.submitTask(helloTask('t1', { taskTimeoutMs: 3_000 }), undefined);
    await settle();
    expect(seen).toMatchObject({ taskId: 't1', stage: 'builder', deadlineMs: 1_000 + 3_000, hasIo: true });
  });
});

describe('Orchestrator: Calls phase', () => {
  it('a deadline that passed during the builder converges TIMED_OUT without taking executorSem', async () => {
    const gate = deferred<void>();
    const slow: BuilderPlugin = {
      build: async (ctx, config) => {
        await gate.promise;
        return callListBuilder.build(ctx, config as never, undefined as never);
      },
    };
    const h = makeHarness({ builders: [builderDef('CallListCallConfig', slow)] });
    const acquire = vi.spyOn(h.orchestrator.sems.executorSem, 'acquire');
    h.orchestrator.submitTask(helloTask('t1', { taskTimeoutMs: 500 }), undefined);
    await settle();
    h.advance(600); // no tick: the deadline is found by the check before Calls
    gate.resolve();
    await settle();
    expect(h.terminal('t1').result.executeResult).toMatchObject({
      failureCode: FailureCode.TIMED_OUT,
      retryable: true,
    });
    expect(acquire).not.toHaveBeenCalled();
    expect((h.runner as FakeCallRunner).runs).toHaveLength(0);
  });

  it('an empty call list takes no executor slot and still runs the Plugin phase', async () => {
    const h = makeHarness();
    const acquire = vi.spyOn(h.orchestrator.sems.executorSem, 'acquire');
    h.orchestrator.submitTask(
      helloTask('t1', {
        functionCallConfig: { type: 'CallListCallConfig', config: { function: 'f', callList: [] } },
      }),
      undefined,
    );
    await settle();
    expect(acquire).not.toHaveBeenCalled();
    expect((h.runner as FakeCallRunner).runs).toHaveLength(0);
    const t = h.terminal('t1');
    expect(t.state).toBe(TaskState.SUCCEEDED);
    expect(t.result.executeResult.pluginResults[0]?.result).toEqual([]);
  });

  it('holds one executorSem permit per task while its calls run', async () => {
    const runner = new FakeCallRunner('manual');
    const h = makeHarness({ runner });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    expect(h.orchestrator.sems.executorSem.inUse).toBe(1);
    runner.runs[0]?.outcome.resolve({ success: true, retryable: false, outputs: ['x', 'y'] });
    await settle();
    expect(h.orchestrator.sems.executorSem.inUse).toBe(0);
    expect(h.terminal('t1').result.executeResult.pluginResults[0]?.result).toEqual(['x', 'y']);
  });

  it.each([
    [
      { failureCode: FailureCode.CALL_FAILED, retryable: true, message: 'boom' },
      FailureCode.CALL_FAILED,
      false,
    ],
    [{ retryable: false, message: 'no code' }, FailureCode.CALL_FAILED, false],
    [
      { failureCode: FailureCode.OUTPUT_BYTES_EXCEEDED, retryable: false },
      FailureCode.OUTPUT_BYTES_EXCEEDED,
      false,
    ],
  ])(
    'a failed call phase %j converges %s (retryable=%s, fixed by the code)',
    async (failure, code, retryable) => {
      const runner = new FakeCallRunner('manual');
      const h = makeHarness({ runner });
      h.orchestrator.submitTask(helloTask('t1'), undefined);
      await settle();
      runner.runs[0]?.outcome.resolve({ success: false, outputs: [], ...failure });
      await settle();
      expect(h.terminal('t1').result.executeResult).toMatchObject({ failureCode: code, retryable });
    },
  );

  it('a runner that throws converges CALL_FAILED', async () => {
    const h = makeHarness({ runner: { run: () => Promise.reject(new Error('link down')) } });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    expect(h.terminal('t1').result.executeResult.failureCode).toBe(FailureCode.CALL_FAILED);
    expect(h.terminal('t1').result.executeResult.failureMessage).toContain('link down');
  });

  it('a timeout converges TIMED_OUT (retryable) and aborts the in-flight calls through the signal', async () => {
    const runner = new FakeCallRunner('manual');
    const h = makeHarness({ runner });
    h.orchestrator.submitTask(helloTask('t1', { taskTimeoutMs: 2_000 }), undefined);
    await settle();
    const signal = runner.runs[0]?.task.signal;
    expect(signal?.aborted).toBe(false);
    h.advance(2_000);
    h.orchestrator.tick();
    expect(signal?.aborted).toBe(true);
    expect(h.terminal('t1').result.executeResult).toMatchObject({
      failureCode: FailureCode.TIMED_OUT,
      retryable: true,
    });
    // The late answer of the cancelled runner is ignored, and its permit comes back.
    runner.runs[0]?.outcome.resolve({
      success: false,
      failureCode: FailureCode.CANCELLED,
      retryable: true,
      outputs: [],
    });
    await settle();
    expect(h.terminals).toHaveLength(1);
    expect(h.orchestrator.sems.executorSem.inUse).toBe(0);
    await h.orchestrator.settled();
    expect(h.scopes.openCount).toBe(0);
  });
});

describe('Orchestrator: admission waits', () => {
  it('a task that times out while waiting for executorSem never runs, and its waiter leaves the queue', async () => {
    const runner = new FakeCallRunner('manual');
    const h = makeHarness({
      runner,
      admission: { builderSlots: 16, executorTaskSlots: 1, pluginSlots: 16, scanSlots: 8 },
    });
    h.orchestrator.submitTask(helloTask('holder'), undefined);
    h.orchestrator.submitTask(helloTask('waiter', { taskTimeoutMs: 1_500 }), undefined);
    await settle();
    expect(runner.runs.map((r) => r.task.taskId)).toEqual(['holder']);
    expect(h.orchestrator.sems.executorSem.waiting).toBe(1);
    h.advance(1_500);
    h.orchestrator.tick();
    await settle();
    expect(h.terminal('waiter').result.executeResult.failureCode).toBe(FailureCode.TIMED_OUT);
    expect(h.orchestrator.sems.executorSem.waiting).toBe(0);
    runner.runs[0]?.outcome.resolve({ success: true, retryable: false, outputs: [] });
    await settle();
    expect(runner.runs).toHaveLength(1);
    expect(h.terminal('holder').state).toBe(TaskState.SUCCEEDED);
  });

  it('a phase waiting for admission when the worker aborts its tasks fails CANCELLED', async () => {
    const gate = deferred<void>();
    const blocking: BuilderPlugin = {
      build: async () => {
        await gate.promise;
        return { calls: [] };
      },
    };
    const h = makeHarness({
      builders: [builderDef('CallListCallConfig', blocking)],
      admission: { builderSlots: 1, executorTaskSlots: 32, pluginSlots: 16, scanSlots: 8 },
    });
    h.orchestrator.submitTask(helloTask('first'), undefined);
    h.orchestrator.submitTask(helloTask('second'), undefined);
    await settle();
    expect(h.orchestrator.sems.builderSem.waiting).toBe(1);
    h.orchestrator.abortAll('worker shutting down');
    await settle();
    expect(h.terminal('second').result.executeResult).toMatchObject({
      failureCode: FailureCode.CANCELLED,
      retryable: true,
    });
    expect(h.terminal('second').result.executeResult.failureMessage).toContain('builderSem');
    gate.resolve();
    await settle();
    // The first task's builder finished after the abort; its next phase is cancelled at admission.
    expect(h.terminal('first').result.executeResult.failureCode).toBe(FailureCode.CANCELLED);
  });
});

describe('Orchestrator: Plugin phase', () => {
  it('without a result handler takes pluginSem, runs no plugin and succeeds with empty pluginResults', async () => {
    const h = makeHarness();
    const acquire = vi.spyOn(h.orchestrator.sems.pluginSem, 'acquire');
    h.orchestrator.submitTask(helloTask('t1', { resultHandler: null }), undefined);
    await settle();
    expect(acquire).toHaveBeenCalledTimes(1);
    expect(h.terminal('t1').state).toBe(TaskState.SUCCEEDED);
    expect(h.terminal('t1').result.executeResult.pluginResults).toEqual([]);
  });

  it('an unknown writer type converges PLUGIN_NOT_FOUND (not retryable)', async () => {
    const h = makeHarness();
    h.orchestrator.submitTask(
      helloTask('t1', { resultHandler: { type: 'NoSuchHandler', config: {} } }),
      undefined,
    );
    await settle();
    expect(h.terminal('t1').result.executeResult).toMatchObject({
      failureCode: FailureCode.PLUGIN_NOT_FOUND,
      retryable: false,
    });
  });

  it.each([
    ['an unclassified error', true, new Error('db down')],
    ['a PluginError with retryable=true', true, Object.assign(new Error('deadlock'), { retryable: true })],
    [
      'a PluginError with retryable=false',
      false,
      Object.assign(new Error('constraint'), { retryable: false }),
    ],
  ])('a writer throwing %s converges PLUGIN_FAILED with retryable=%s', async (_name, retryable, err) => {
    const failing: WriterPlugin = { execute: () => Promise.reject(err) };
    const h = makeHarness({ writers: [writerDef('ReturnValueResultHandler', failing)] });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    const ex = h.terminal('t1').result.executeResult;
    expect(ex).toMatchObject({ failureCode: FailureCode.PLUGIN_FAILED, retryable });
    expect(ex.pluginResults).toEqual([
      {
        pluginName: 'ReturnValueResultHandler',
        success: false,
        failureCode: FailureCode.PLUGIN_FAILED,
        failureMessage: err.message,
      },
    ]);
  });

  it('a writer reporting a failed result without throwing fails the task', async () => {
    const soft: WriterPlugin = {
      execute: async () => [{ pluginName: 'W', success: false, failureMessage: 'half written' }],
    };
    const h = makeHarness({ writers: [writerDef('ReturnValueResultHandler', soft)] });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    expect(h.terminal('t1').state).toBe(TaskState.FAILED);
    expect(h.terminal('t1').result.executeResult.failureCode).toBe(FailureCode.PLUGIN_FAILED);
  });
});

describe('Orchestrator: convergence cleanup', () => {
  it('closes the IO scope and releases the epoch for a failed task too', async () => {
    const closed: string[] = [];
    const released: string[] = [];
    const failing: BuilderPlugin = {
      build: () => {
        throw new Error('x');
      },
    };
    const h = makeHarness({
      builders: [builderDef('CallListCallConfig', failing)],
      codeEpochs: { pin: async () => ({ epoch: 'e', release: () => released.push('e') }) },
      ioScopes: {
        open: async (taskId) =>
          ({
            io: () => emptyIo,
            close: async () => {
              closed.push(taskId);
            },
          }) satisfies TaskIoScope,
      },
    });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    await h.orchestrator.settled();
    expect(h.terminal('t1').state).toBe(TaskState.FAILED);
    expect(closed).toEqual(['t1']);
    expect(released).toEqual(['e']);
  });

  it('a scope whose close fails is logged, not thrown', async () => {
    const warnings: string[] = [];
    const h = makeHarness({
      logger: {
        debug: () => undefined,
        info: () => undefined,
        warn: (_fields, message) => void warnings.push(message),
        error: () => undefined,
      },
      ioScopes: {
        open: async () =>
          ({
            io: () => emptyIo,
            close: () => Promise.reject(new Error('close failed')),
          }) satisfies TaskIoScope,
      },
    });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    await h.orchestrator.settled();
    expect(h.terminal('t1').state).toBe(TaskState.SUCCEEDED);
    expect(warnings).toContain('closing the task IO scope failed');
  });
});

describe('Orchestrator: timers and status', () => {
  it('arms one timer for the next deadline: a timeout fires without a manual tick', async () => {
    vi.useFakeTimers({
      now: 1_000,
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
    });
    const runner = new FakeCallRunner('manual');
    const h = makeHarness({ runner, core: { timerScanMs: 60_000 } });
    h.orchestrator.start();
    h.orchestrator.submitTask(helloTask('t1', { taskTimeoutMs: 300 }), undefined);
    for (let i = 0; i < 10; i++) await Promise.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(runner.runs).toHaveLength(1);
    // The harness clock is manual; move it with the fake timers.
    h.advance(300);
    await vi.advanceTimersByTimeAsync(300);
    expect(h.terminal('t1').result.executeResult.failureCode).toBe(FailureCode.TIMED_OUT);
    h.orchestrator.stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps at most two timers however many tasks run (the deadline timer and the scan)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const runner = new FakeCallRunner('manual');
    const h = makeHarness({ runner });
    h.orchestrator.start();
    for (let i = 0; i < 8; i++)
      h.orchestrator.submitTask(helloTask(`t${i}`, { taskTimeoutMs: 1_000 + i }), undefined);
    expect(vi.getTimerCount()).toBeLessThanOrEqual(2);
    h.orchestrator.stop();
  });

  it('reports serving changes and the drained state to listeners', () => {
    const h = makeHarness();
    const events: string[] = [];
    h.orchestrator.addListener({
      onServingChanged: (c) => events.push(`serving=${c.serving}`),
      onDrained: () => events.push('drained'),
    });
    h.orchestrator.executorLost('executor exited');
    h.orchestrator.executorReady();
    h.orchestrator.startDraining();
    expect(events).toEqual(['serving=false', 'serving=true', 'serving=false', 'drained']);
  });

  it('counts only worker-caused failures in the error rate, and lets it decay with time alone', async () => {
    const scopes = new NoStorageIoScopeFactory();
    const h = makeHarness({
      ioScopes: {
        open: (taskId) =>
          taskId === 'io-down' ? Promise.reject(new Error('storage down')) : scopes.open(taskId),
      },
    });
    // A bad task config (unknown writer) fails on any worker: it must not move the rate.
    h.orchestrator.submitTask(
      helloTask('bad-config', { resultHandler: { type: 'Missing', config: {} } }),
      undefined,
    );
    await settle();
    expect(h.orchestrator.recentErrorRate).toBe(0);
    // IO_SCOPE_FAILED is this worker's storage: it counts (one of a floor of 4 weighted tasks).
    h.orchestrator.submitTask(helloTask('io-down'), undefined);
    await settle();
    expect(h.terminal('io-down').result.executeResult.failureCode).toBe(FailureCode.IO_SCOPE_FAILED);
    expect(h.orchestrator.recentErrorRate).toBeCloseTo(1 / 4);
    // No traffic at all: one half-life (30 s) later it has halved.
    h.advance(30_000);
    expect(h.orchestrator.recentErrorRate).toBeCloseTo(1 / 8);
  });
});
