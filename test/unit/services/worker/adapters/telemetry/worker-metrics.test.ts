// WorkerMetrics over the orchestrator harness (real WorkerCore, fake ports, virtual clock): each metric
// follows what the Worker did. Values are read the way a scrape reads them (collect() callbacks run).
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import type { BuilderPlugin } from '../../../../../../src/kernel/plugin-types.js';
import {
  statsSourceOf,
  taskOutcomeCode,
  WorkerMetrics,
  type DispatcherFigures,
  type IoFigures,
  type WorkerMetricsSources,
} from '../../../../../../src/services/worker/adapters/telemetry/worker-metrics.js';
import {
  TaskState,
  type FailureCode,
  type TaskResult,
} from '../../../../../../src/services/worker/core/index.js';
import { histogram, sample } from '../../../../kernel/observability/metric-values.js';
import {
  FakeCallRunner,
  builderDef,
  deferred,
  helloTask,
  makeHarness,
  settle,
  type HarnessOptions,
} from '../orchestration/harness.js';

function setup(opts: HarnessOptions = {}, sources: Partial<WorkerMetricsSources> = {}) {
  const h = makeHarness(opts);
  const registry = new Registry();
  const metrics = new WorkerMetrics(registry, {
    slots: () => h.core.deriveHeartbeat(h.now()),
    semaphores: h.orchestrator.sems,
    ...sources,
  });
  h.orchestrator.addListener(metrics);
  return { ...h, registry, metrics };
}

describe('WorkerMetrics', () => {
  it('blockx_worker_slots follows the slot table: free, allocated, running', async () => {
    const h = setup({ runner: new FakeCallRunner('manual') });
    const slots = (state: string) => sample(h.registry, 'blockx_worker_slots', { state });
    expect([await slots('free'), await slots('allocated'), await slots('running')]).toEqual([8, 0, 0]);
    h.orchestrator.requestTaskSlot('reserved', 1_000);
    h.orchestrator.submitTask(helloTask('busy'), undefined);
    await settle();
    expect([await slots('free'), await slots('allocated'), await slots('running')]).toEqual([6, 1, 1]);
    const run = (h.runner as FakeCallRunner).runs[0]!;
    run.outcome.resolve({ success: true, retryable: false, outputs: ['a', 'b'] });
    await settle();
    expect([await slots('free'), await slots('allocated'), await slots('running')]).toEqual([7, 1, 0]);
  });

  it('blockx_worker_tasks_total counts converged tasks by SUCCEEDED or failure code', async () => {
    const h = setup();
    h.orchestrator.submitTask(helloTask('ok-1'), undefined);
    h.orchestrator.submitTask(helloTask('ok-2'), undefined);
    h.orchestrator.submitTask(
      helloTask('bad', { functionCallConfig: { type: 'NoSuchBuilder', config: {} } }),
      undefined,
    );
    await settle();
    expect(h.terminals).toHaveLength(3);
    expect(await sample(h.registry, 'blockx_worker_tasks_total', { code: 'SUCCEEDED' })).toBe(2);
    expect(await sample(h.registry, 'blockx_worker_tasks_total', { code: 'BUILDER_NOT_FOUND' })).toBe(1);
  });

  it('blockx_worker_phase_duration_seconds observes each phase on the orchestrator clock', async () => {
    const gate = deferred<void>();
    const slowBuilder: BuilderPlugin<{ function: string; callList: unknown[][] }> = {
      build: async (_ctx, config) => {
        await gate.promise;
        return { calls: config.callList.map((args) => ({ function: config.function, args })) };
      },
    };
    const h = setup({
      runner: new FakeCallRunner('manual'),
      builders: [builderDef('CallListCallConfig', slowBuilder as BuilderPlugin)],
    });
    h.orchestrator.submitTask(helloTask('t1'), undefined);
    await settle();
    h.advance(1_500);
    gate.resolve();
    await settle();
    h.advance(2_000);
    (h.runner as FakeCallRunner).runs[0]!.outcome.resolve({
      success: true,
      retryable: false,
      outputs: [1, 2],
    });
    await settle();
    expect(h.terminal('t1').state).toBe(TaskState.SUCCEEDED);
    const family = 'blockx_worker_phase_duration_seconds';
    expect(await histogram(h.registry, family, { phase: 'builder' })).toEqual({ count: 1, sum: 1.5 });
    expect(await histogram(h.registry, family, { phase: 'calls' })).toEqual({ count: 1, sum: 2 });
    expect(await histogram(h.registry, family, { phase: 'plugin' })).toEqual({ count: 1, sum: 0 });
    expect(await sample(h.registry, family, { phase: 'builder', le: '1' }, `${family}_bucket`)).toBe(0);
    expect(await sample(h.registry, family, { phase: 'builder', le: '2.5' }, `${family}_bucket`)).toBe(1);
  });

  it('blockx_worker_semaphore_waiting / _in_use show phases queued for admission', async () => {
    const h = setup({
      runner: new FakeCallRunner('manual'),
      admission: { builderSlots: 4, executorTaskSlots: 1, pluginSlots: 4, scanSlots: 1 },
    });
    h.orchestrator.submitTask(helloTask('first'), undefined);
    h.orchestrator.submitTask(helloTask('second'), undefined);
    h.orchestrator.submitTask(helloTask('third'), undefined);
    await settle();
    expect(await sample(h.registry, 'blockx_worker_semaphore_waiting', { sem: 'executorSem' })).toBe(2);
    expect(await sample(h.registry, 'blockx_worker_semaphore_in_use', { sem: 'executorSem' })).toBe(1);
    expect(await sample(h.registry, 'blockx_worker_semaphore_waiting', { sem: 'builderSem' })).toBe(0);
    (h.runner as FakeCallRunner).runs[0]!.outcome.resolve({
      success: true,
      retryable: false,
      outputs: [1, 2],
    });
    await settle();
    expect(await sample(h.registry, 'blockx_worker_semaphore_waiting', { sem: 'executorSem' })).toBe(1);
  });

  it('mirrors the dispatcher stats: attempts and retries as counters, inflight as a gauge', async () => {
    let figures: DispatcherFigures = { attempts: 10, retries: 2, inflight: 4 };
    const h = setup({}, { dispatcher: () => figures });
    expect(await sample(h.registry, 'blockx_worker_call_attempts_total')).toBe(10);
    expect(await sample(h.registry, 'blockx_worker_call_retries_total')).toBe(2);
    expect(await sample(h.registry, 'blockx_worker_dispatcher_inflight')).toBe(4);
    figures = { attempts: 25, retries: 3, inflight: 0 };
    expect(await sample(h.registry, 'blockx_worker_call_attempts_total')).toBe(25);
    expect(await sample(h.registry, 'blockx_worker_call_retries_total')).toBe(3);
    expect(await sample(h.registry, 'blockx_worker_dispatcher_inflight')).toBe(0);
  });

  it('mirrors the IO scope counters', async () => {
    let io: IoFigures = { cacheHits: 7, cacheMisses: 3, retries: 1 };
    const h = setup({}, { io: () => io });
    expect(await sample(h.registry, 'blockx_worker_io_cache_hits_total')).toBe(7);
    expect(await sample(h.registry, 'blockx_worker_io_cache_misses_total')).toBe(3);
    expect(await sample(h.registry, 'blockx_worker_io_retries_total')).toBe(1);
    io = { cacheHits: 9, cacheMisses: 3, retries: 4 };
    expect(await sample(h.registry, 'blockx_worker_io_cache_hits_total')).toBe(9);
    expect(await sample(h.registry, 'blockx_worker_io_retries_total')).toBe(4);
  });

  it('without dispatcher or IO sources those series report 0', async () => {
    const h = setup();
    expect(await sample(h.registry, 'blockx_worker_call_attempts_total')).toBe(0);
    expect(await sample(h.registry, 'blockx_worker_io_cache_hits_total')).toBe(0);
    expect(await sample(h.registry, 'blockx_worker_dispatcher_inflight')).toBe(0);
  });

  it('blockx_executor_restarts_total counts executor losses', async () => {
    const h = setup();
    expect(await sample(h.registry, 'blockx_executor_restarts_total')).toBe(0);
    h.metrics.executorLost();
    h.metrics.executorLost();
    expect(await sample(h.registry, 'blockx_executor_restarts_total')).toBe(2);
  });

  it('two Workers with their own registries keep their own figures', async () => {
    const a = setup();
    const b = setup();
    a.orchestrator.submitTask(helloTask('only-on-a'), undefined);
    await settle();
    expect(await sample(a.registry, 'blockx_worker_tasks_total', { code: 'SUCCEEDED' })).toBe(1);
    expect(await sample(b.registry, 'blockx_worker_tasks_total', { code: 'SUCCEEDED' })).toBeUndefined();
    // One registry cannot hold two Workers: the families would collide, which is why each has its own.
    expect(
      () =>
        new WorkerMetrics(a.registry, {
          slots: () => a.core.deriveHeartbeat(0),
          semaphores: a.orchestrator.sems,
        }),
    ).toThrow(/already been registered/);
  });
});

describe('taskOutcomeCode', () => {
  const result = (failureCode: FailureCode | ''): TaskResult => ({
    success: failureCode === '',
    executeResult: { failureCode, retryable: false, pluginResults: [], failureMessage: '' },
  });
  it.each([
    [TaskState.SUCCEEDED, '', 'SUCCEEDED'],
    [TaskState.FAILED, 'TIMED_OUT', 'TIMED_OUT'],
    [TaskState.FAILED, '', 'FAILED'],
  ] as const)('state %s, failure code %j → %s', (state, code, expected) => {
    expect(taskOutcomeCode(state, result(code))).toBe(expected);
  });
});

describe('statsSourceOf', () => {
  it('binds stats() of a port that has one, and is undefined otherwise', () => {
    const runner = {
      n: 3,
      stats(this: { n: number }) {
        return { attempts: this.n, retries: 0, inflight: 0 };
      },
    };
    expect(statsSourceOf<DispatcherFigures>(runner)?.()).toEqual({ attempts: 3, retries: 0, inflight: 0 });
    expect(statsSourceOf(new FakeCallRunner())).toBeUndefined();
    expect(statsSourceOf(undefined)).toBeUndefined();
  });
});
