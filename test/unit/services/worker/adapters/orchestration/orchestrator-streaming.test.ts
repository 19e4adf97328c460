// The orchestrator with a streaming builder (BlockBundleCallConfig with stream.enabled,
// docs/task-lifecycle.md): the scan moves from the Builder phase into the Calls phase, under scanSem and
// executorSem, and its calls go to the runner's `runStream` (or are collected for a runner without it).
import { describe, expect, it, vi } from 'vitest';
import type { BuilderPlugin, CallSpec } from '../../../../../../src/kernel/plugin-types.js';
import type { CallPhaseOutcome, CallPhaseTask } from '../../../../../../src/services/call-host/index.js';
import { FailureCode, TaskState } from '../../../../../../src/services/worker/core/index.js';
import { FakeCallRunner, builderDef, deferred, helloTask, makeHarness, settle } from './harness.js';

interface StreamConfig {
  function: string;
  n: number;
  stream?: { enabled: boolean };
  failWith?: { message: string; retryable?: boolean };
}

/** A builder with both forms; records which one ran. */
function streamingBuilder() {
  const used = { build: 0, stream: 0 };
  const calls = (c: StreamConfig): CallSpec[] =>
    Array.from({ length: c.n }, (_, i) => ({ function: c.function, args: [i] }));
  const impl: BuilderPlugin<StreamConfig> = {
    build: (_ctx, config) => {
      used.build += 1;
      return { calls: calls(config) };
    },
    async *stream(_ctx, config) {
      used.stream += 1;
      for (const call of calls(config)) {
        yield call;
        if (config.failWith !== undefined)
          throw Object.assign(new Error(config.failWith.message), config.failWith);
      }
    },
    streams: (config) => config.stream?.enabled === true,
  };
  return { used, impl: impl as BuilderPlugin };
}

function streamTask(taskId: string, config: StreamConfig) {
  return helloTask(taskId, { functionCallConfig: { type: 'Streamy', config } });
}

/** A runner with runStream: drains the stream and answers like FakeCallRunner('auto'). */
class StreamingRunner extends FakeCallRunner {
  readonly streamed: CallSpec[][] = [];
  gate = deferred<void>();
  constructor(private readonly hold = false) {
    super('auto');
    if (!hold) this.gate.resolve();
  }
  async runStream(task: CallPhaseTask, source: AsyncIterable<CallSpec>): Promise<CallPhaseOutcome> {
    const got: CallSpec[] = [];
    for await (const c of source) got.push(c);
    this.streamed.push(got);
    await this.gate.promise;
    return this.run(task, got);
  }
}

describe('Orchestrator: streaming builders', () => {
  it('stream.enabled: build() is skipped; runStream gets the calls under scanSem + executorSem', async () => {
    const b = streamingBuilder();
    const runner = new StreamingRunner();
    const h = makeHarness({ builders: [builderDef('Streamy', b.impl)], runner });
    const scan = vi.spyOn(h.orchestrator.sems.scanSem, 'acquire');
    const exec = vi.spyOn(h.orchestrator.sems.executorSem, 'acquire');
    h.orchestrator.submitTask(
      streamTask('t1', { function: 'f', n: 3, stream: { enabled: true } }),
      undefined,
    );
    await settle();
    expect(b.used).toEqual({ build: 0, stream: 1 });
    expect(runner.streamed).toEqual([[0, 1, 2].map((i) => ({ function: 'f', args: [i] }))]);
    expect(scan).toHaveBeenCalledTimes(1);
    expect(exec).toHaveBeenCalledTimes(1);
    expect(h.orchestrator.sems.scanSem.inUse).toBe(0);
    expect(h.terminal('t1').state).toBe(TaskState.SUCCEEDED);
    expect(h.terminal('t1').result.executeResult?.pluginResults?.[0]?.result).toEqual([
      'f(0)',
      'f(1)',
      'f(2)',
    ]);
  });

  it('without stream.enabled the builder builds up front and scanSem is not taken', async () => {
    const b = streamingBuilder();
    const h = makeHarness({ builders: [builderDef('Streamy', b.impl)], runner: new StreamingRunner() });
    const scan = vi.spyOn(h.orchestrator.sems.scanSem, 'acquire');
    h.orchestrator.submitTask(streamTask('t1', { function: 'f', n: 2 }), undefined);
    await settle();
    expect(b.used).toEqual({ build: 1, stream: 0 });
    expect(scan).not.toHaveBeenCalled();
    expect(h.terminal('t1').state).toBe(TaskState.SUCCEEDED);
  });

  it('a runner without runStream gets the collected list', async () => {
    const b = streamingBuilder();
    const runner = new FakeCallRunner('auto');
    const h = makeHarness({ builders: [builderDef('Streamy', b.impl)], runner });
    h.orchestrator.submitTask(
      streamTask('t1', { function: 'g', n: 2, stream: { enabled: true } }),
      undefined,
    );
    await settle();
    expect(runner.runs[0]?.calls).toEqual([
      { function: 'g', args: [0] },
      { function: 'g', args: [1] },
    ]);
    expect(h.terminal('t1').state).toBe(TaskState.SUCCEEDED);
  });

  it.each([
    [{ message: 'reset', retryable: true }, true],
    [{ message: 'bad filter', retryable: false }, false],
  ])('a scan error %j fails BUILDER_FAILED with retryable %s', async (failWith, retryable) => {
    const b = streamingBuilder();
    const h = makeHarness({ builders: [builderDef('Streamy', b.impl)], runner: new FakeCallRunner('auto') });
    h.orchestrator.submitTask(
      streamTask('t1', { function: 'f', n: 5, stream: { enabled: true }, failWith }),
      undefined,
    );
    await settle();
    expect(h.terminal('t1').state).toBe(TaskState.FAILED);
    expect(h.terminal('t1').result.executeResult).toMatchObject({
      failureCode: FailureCode.BUILDER_FAILED,
      retryable,
    });
  });

  it('streaming tasks beyond scanSlots wait for a scan permit', async () => {
    const b = streamingBuilder();
    const runner = new StreamingRunner(true);
    const h = makeHarness({
      builders: [builderDef('Streamy', b.impl)],
      runner,
      admission: { builderSlots: 4, executorTaskSlots: 4, pluginSlots: 4, scanSlots: 1 },
    });
    const cfg = { function: 'f', n: 1, stream: { enabled: true } };
    h.orchestrator.submitTask(streamTask('t1', cfg), undefined);
    h.orchestrator.submitTask(streamTask('t2', cfg), undefined);
    await settle();
    expect(h.orchestrator.sems.scanSem.inUse).toBe(1);
    expect(h.orchestrator.sems.scanSem.waiting).toBe(1);
    expect(runner.streamed).toHaveLength(1);
    runner.gate.resolve();
    await settle();
    expect(runner.streamed).toHaveLength(2);
    expect(h.terminal('t1').state).toBe(TaskState.SUCCEEDED);
    expect(h.terminal('t2').state).toBe(TaskState.SUCCEEDED);
    expect(h.orchestrator.sems.scanSem.inUse).toBe(0);
  });
});
